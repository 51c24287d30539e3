/// Which kinds of party a call joins, caller first: app-to-app, from an app user to a
/// phone number (through a SIP trunk), to a SIP endpoint or to a conference room, and from
/// a conference room to an app user (a conference callout).
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

    /// The direction of a call from an app user to an address of kind `calleeKind`.
    public init(fromUserTo calleeKind: PartyAddress.Kind) {
        switch calleeKind {
        case .user: self = .appToApp
        case .phone: self = .appToPhone
        case .sip: self = .appToSIP
        case .conference: self = .appToConference
        }
    }

    /// The kind of address the caller of a call in this direction has.
    public var callerKind: PartyAddress.Kind {
        switch self {
        case .appToApp, .appToPhone, .appToSIP, .appToConference: .user
        case .conferenceToApp: .conference
        }
    }

    /// The kind of address the callee of a call in this direction has.
    public var calleeKind: PartyAddress.Kind {
        switch self {
        case .appToApp: .user
        case .appToPhone: .phone
        case .appToSIP: .sip
        case .appToConference: .conference
        case .conferenceToApp: .user
        }
    }

    /// Whether `caller` and `callee` are the kinds of address this direction joins.
    public func fits(caller: PartyAddress, callee: PartyAddress) -> Bool {
        caller.kind == callerKind && callee.kind == calleeKind
    }
}
