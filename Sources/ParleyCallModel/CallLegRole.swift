/// Which side of the call a stored leg row serves. Only the store's rows carry it: a live
/// leg is named by the call core's `CallLegID`, and `CallLegRole(_:)` (ParleyCallCore)
/// is the one mapping from that name to this role.
public enum CallLegRole: String, Sendable, Hashable, CaseIterable, Codable {
    /// The caller's device.
    case caller
    /// The callee's device that answered.
    case callee
}
