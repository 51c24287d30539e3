public import ParleyCallCore
public import ParleySignaling
import Synchronization

/// The signaling bus within one process: `deliver` calls the node's function at once, on
/// the caller's thread, so delivery adds no hop, no copy and no reordering.
public final class LocalSignalingBus: SignalingBus {
    private let nodes = Mutex<[NodeID: @Sendable (SignalingMessage, Device) -> Void]>([:])

    public init() {}

    public func attach(node: NodeID, receive: @escaping @Sendable (SignalingMessage, Device) -> Void) {
        nodes.withLock { $0[node] = receive }
    }

    public func detach(node: NodeID) {
        _ = nodes.withLock { $0.removeValue(forKey: node) }
    }

    @discardableResult
    public func deliver(_ message: SignalingMessage, to device: Device, on node: NodeID) -> Bool {
        // The function is called outside the lock: it may deliver again (a reply).
        guard let receive = nodes.withLock({ $0[node] }) else { return false }
        receive(message, device)
        return true
    }
}
