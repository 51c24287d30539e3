/// Which kinds of party a call joins, caller first. Only app-to-app calls exist so far;
/// phone, SIP and conference calls add cases with their issues (each naming the kinds of
/// its two ends), not fields of the records.
public enum CallDirection: String, Sendable, Hashable, CaseIterable, Codable {
    /// From one user of an application to another (both on the SDK).
    case appToApp

    /// The kind of address the caller of a call in this direction has.
    public var callerKind: PartyAddress.Kind {
        switch self {
        case .appToApp: .user
        }
    }

    /// The kind of address the callee of a call in this direction has.
    public var calleeKind: PartyAddress.Kind {
        switch self {
        case .appToApp: .user
        }
    }

    /// Whether `caller` and `callee` are the kinds of address this direction joins.
    public func fits(caller: PartyAddress, callee: PartyAddress) -> Bool {
        caller.kind == callerKind && callee.kind == calleeKind
    }
}
