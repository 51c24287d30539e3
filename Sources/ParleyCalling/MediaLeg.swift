/// One of a call's media legs on the server's anchor: the caller's, or one per callee
/// device that was offered the call (only the answering device's leg survives the answer).
public enum MediaLeg: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The leg toward the caller's device.
    case caller
    /// The leg toward this callee device.
    case callee(Device)

    public var description: String {
        switch self {
        case .caller: "caller"
        case .callee(let device): "callee \(device)"
        }
    }
}
