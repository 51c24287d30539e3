/// Which kinds of party a call joins, caller first: app-to-app, from an app user to a
/// phone number (through a SIP trunk), to a SIP endpoint or to a conference room, and from
/// a conference room to an app user (a conference callout), and from a phone number or SIP
/// endpoint (a call that came in over SIP) to an app user or a conference room, and
/// callouts the server places and plays to itself.
public enum CallDirection: String, Sendable, Hashable, CaseIterable, Codable {
    /// From one user of an application to another (both on the SDK).
    case appToApp
    /// From an app user to a phone number (E.164), dialled through a SIP trunk.
    case appToPhone
    /// From an app user to a SIP endpoint, by SIP address.
    case appToSIP = "appToSip"
    /// From an app user to a conference room, by conference id.
    case appToConference
    /// From a conference room to an app user: a conference callout (REST), which rings the
    /// user and puts them in the room when they answer.
    case conferenceToApp
    /// From a phone number (a call in through a SIP trunk) to an app user.
    case phoneToApp
    /// From a SIP endpoint (a SIP peer's INVITE) to an app user.
    case sipToApp = "sipToApp"
    /// From a phone number into a conference room.
    case phoneToConference
    /// From a SIP endpoint into a conference room.
    case sipToConference = "sipToConference"
    /// From a phone number to a phone number: a call in through the trunk that the server
    /// bridges to a call out through the trunk (a back-to-back user agent).
    case phoneToPhone
    /// From a phone number to a SIP endpoint, bridged likewise.
    case phoneToSIP = "phoneToSip"
    /// From a SIP endpoint to a phone number, bridged likewise.
    case sipToPhone = "sipToPhone"
    /// From a SIP endpoint to a SIP endpoint, bridged likewise.
    case sipToSIP = "sipToSip"
    /// A callout the server places itself (REST `ttsCallout` or `customCallout`) to a phone
    /// number through the trunk: the caller is the CLI it presents, the server plays to the
    /// callee when it answers.
    case calloutToPhone
    /// Such a callout to a SIP endpoint; the caller is the CLI it presents likewise.
    case calloutToSIP = "calloutToSip"

    /// The direction of a call from an app user to an address of kind `calleeKind`.
    public init(fromUserTo calleeKind: PartyAddress.Kind) {
        switch calleeKind {
        case .user: self = .appToApp
        case .phone: self = .appToPhone
        case .sip: self = .appToSIP
        case .conference: self = .appToConference
        }
    }

    /// The direction of a call that came in over SIP from an address of kind `callerKind`
    /// (`phone` or `sip`) to an app user (`toRoom` false) or a conference room.
    public init?(inboundFrom callerKind: PartyAddress.Kind, toRoom: Bool) {
        switch (callerKind, toRoom) {
        case (.phone, false): self = .phoneToApp
        case (.sip, false): self = .sipToApp
        case (.phone, true): self = .phoneToConference
        case (.sip, true): self = .sipToConference
        default: return nil
        }
    }

    /// The direction of a call that came in over SIP from an address of kind `callerKind`
    /// (`phone` or `sip`) and is bridged to a call out to an address of kind `calleeKind`
    /// (`phone` or `sip`).
    public init?(bridgedFrom callerKind: PartyAddress.Kind, to calleeKind: PartyAddress.Kind) {
        switch (callerKind, calleeKind) {
        case (.phone, .phone): self = .phoneToPhone
        case (.phone, .sip): self = .phoneToSIP
        case (.sip, .phone): self = .sipToPhone
        case (.sip, .sip): self = .sipToSIP
        default: return nil
        }
    }

    /// The kind of address the caller of a call in this direction has.
    public var callerKind: PartyAddress.Kind {
        switch self {
        case .appToApp, .appToPhone, .appToSIP, .appToConference: .user
        case .conferenceToApp: .conference
        case .phoneToApp, .phoneToConference, .phoneToPhone, .phoneToSIP: .phone
        case .sipToApp, .sipToConference, .sipToPhone, .sipToSIP: .sip
        case .calloutToPhone, .calloutToSIP: .phone
        }
    }

    /// The kind of address the callee of a call in this direction has.
    public var calleeKind: PartyAddress.Kind {
        switch self {
        case .appToApp: .user
        case .appToPhone, .phoneToPhone, .sipToPhone, .calloutToPhone: .phone
        case .appToSIP, .phoneToSIP, .sipToSIP, .calloutToSIP: .sip
        case .appToConference: .conference
        case .conferenceToApp, .phoneToApp, .sipToApp: .user
        case .phoneToConference, .sipToConference: .conference
        }
    }

    /// Whether `caller` and `callee` are the kinds of address this direction joins.
    public func fits(caller: PartyAddress, callee: PartyAddress) -> Bool {
        caller.kind == callerKind && callee.kind == calleeKind
    }
}
