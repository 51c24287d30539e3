/// Which kinds of party a call joins, caller first: app-to-app, and from an app user to a
/// phone number (through a SIP trunk) or to a SIP endpoint. A conference call adds a case
/// with its issue (naming the kinds of its two ends), not fields of the records.
public enum CallDirection: String, Sendable, Hashable, CaseIterable, Codable {
    /// From one user of an application to another (both on the SDK).
    case appToApp
    /// From an app user to a phone number (E.164), dialled through a SIP trunk.
    case appToPhone
    /// From an app user to a SIP endpoint, by SIP address.
    case appToSIP = "appToSip"

    /// The direction of a call from an app user to an address of kind `calleeKind`; nil for
    /// a kind no direction joins yet (`conference`).
    public init?(fromUserTo calleeKind: PartyAddress.Kind) {
        switch calleeKind {
        case .user: self = .appToApp
        case .phone: self = .appToPhone
        case .sip: self = .appToSIP
        case .conference: return nil
        }
    }

    /// The kind of address the caller of a call in this direction has.
    public var callerKind: PartyAddress.Kind {
        switch self {
        case .appToApp, .appToPhone, .appToSIP: .user
        }
    }

    /// The kind of address the callee of a call in this direction has.
    public var calleeKind: PartyAddress.Kind {
        switch self {
        case .appToApp: .user
        case .appToPhone: .phone
        case .appToSIP: .sip
        }
    }

    /// Whether `caller` and `callee` are the kinds of address this direction joins.
    public func fits(caller: PartyAddress, callee: PartyAddress) -> Bool {
        caller.kind == callerKind && callee.kind == calleeKind
    }
}
