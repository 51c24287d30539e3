public import ParleyCallCore

/// The presence port: which devices of a user have a session now, and on which node.
/// A session counts from its `hello.ok` until it ends (logout, or the reconnect grace
/// passing with the device away), so messages for a device that is reconnecting still
/// reach the node that buffers them.
///
/// The in-process `LocalDeviceDirectory` serves one process; a directory in Redis (a
/// hash per user, entries expiring with their node's heartbeat) replaces it for many
/// nodes, and a router over it rings a user's devices wherever they are.
public protocol DeviceDirectory: AnyObject, Sendable {
    /// The device's session started (or moved) on `node`.
    func sessionStarted(_ device: Device, on node: NodeID)

    /// The device's session on `node` ended; nothing changes when the directory has it on
    /// another node by now (it moved there first).
    func sessionEnded(_ device: Device, on node: NodeID)

    /// The node holding the device's session, if it has one.
    func node(of device: Device) -> NodeID?

    /// The user's devices with a session, in the order their sessions started.
    func devices(of user: AppUser) -> [DeviceDirectoryEntry]

    /// Every device a node holds (for a node that stops, or a health check).
    func devices(on node: NodeID) -> [Device]
}

/// One device in the directory and the node holding its session.
public struct DeviceDirectoryEntry: Sendable, Hashable {
    public var device: Device
    public var node: NodeID

    public init(device: Device, node: NodeID) {
        self.device = device
        self.node = node
    }
}
