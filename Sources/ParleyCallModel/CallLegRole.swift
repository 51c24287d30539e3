/// Which side of the call a media leg serves, as records name it.
public enum CallLegRole: String, Sendable, Hashable, CaseIterable, Codable {
    /// The caller's device.
    case caller
    /// The callee's device that answered.
    case callee
}
