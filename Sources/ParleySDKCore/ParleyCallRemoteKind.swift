import ParleySignaling

/// What the other party of a call is, and so what `ParleyCall.remoteUserId` holds.
public enum ParleyCallRemoteKind: String, Sendable, Hashable, CaseIterable {
    /// An app user (`callUser(withId:)`, or a call from another app): a user id.
    case user
    /// A phone number through the server's SIP trunk (`callPhoneNumber(_:)`): E.164 with
    /// a leading `+`.
    case phone
    /// A SIP endpoint (`callSIP(_:)`): `user@domain[:port][;transport=udp|tcp|tls]` (or after `sips:`).
    case sip
    /// A conference room, by conference id (`callConference(withId:)`).
    case conference

    /// Whether `sendDTMF(_:)` applies: on calls to phone numbers and SIP endpoints, as
    /// in the documented SDK (tone dialling toward the telephone network).
    var carriesDTMF: Bool { self == .phone || self == .sip }

    /// The kind of a protocol address.
    init(_ kind: SignalingMessage.Address.Kind) {
        switch kind {
        case .user: self = .user
        case .phone: self = .phone
        case .sip: self = .sip
        case .conference: self = .conference
        }
    }
}
