public import ParleyCallModel

/// Which of a call's media legs on the server's anchor: the caller's, or the one toward a
/// callee party (one per callee device that was offered the call, or the call's SIP
/// party; only the answering callee's leg survives the answer). The one name for "which leg" in the call engine and
/// the media anchor; the store keeps the same thing as a `CallLegRole` row.
public enum CallLegID: Sendable, Hashable, CustomStringConvertible {
    /// The leg toward the caller.
    case caller
    /// The leg toward this callee party.
    case callee(Party)

    public var description: String {
        switch self {
        case .caller: "caller"
        case .callee(let party): "callee \(party)"
        }
    }
}

extension CallLegRole {
    /// The role a stored leg row gives the live leg `leg`: the one mapping from the engine's
    /// name for a leg to the store's.
    public init(_ leg: CallLegID) {
        switch leg {
        case .caller: self = .caller
        case .callee: self = .callee
        }
    }
}
