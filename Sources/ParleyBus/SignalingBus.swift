public import ParleyCallCore
public import ParleySignaling

/// The delivery port: hands a signaling message to a device's session on the node that
/// holds it. Each node attaches once with the function that takes messages for its
/// sessions (the call engine, which sends them on the device's connection or buffers
/// them while the device is away).
///
/// The in-process `LocalSignalingBus` serves one process (one or several engines in it);
/// a bus over Redis pub/sub, one channel per node, replaces it for many nodes with no
/// change to the engine. Messages to one device from one sender arrive in the order sent.
public protocol SignalingBus: AnyObject, Sendable {
    /// Starts taking messages for the sessions of `node`; `receive` is called for each
    /// (on the bus's thread: for the local bus, the sender's), and must hop onto the
    /// node's own loop itself. Attaching again replaces the function.
    func attach(node: NodeID, receive: @escaping @Sendable (SignalingMessage, Device) -> Void)

    /// Stops taking messages for `node`; later deliveries to it are dropped.
    func detach(node: NodeID)

    /// Delivers `message` to `device`'s session on `node`; false (and the message
    /// dropped) when no such node is attached.
    @discardableResult
    func deliver(_ message: SignalingMessage, to device: Device, on node: NodeID) -> Bool
}
