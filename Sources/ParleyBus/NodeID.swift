/// One parleyd process among those that share a signaling bus and a device directory.
/// A single server is one node (`NodeID.local`); several nodes each get a distinct id
/// from their configuration.
public struct NodeID: Hashable, Sendable, CustomStringConvertible {
    /// The id as configured (a host name, a pod name).
    public let value: String

    public init(_ value: String) {
        self.value = value
    }

    /// The node of a server that runs alone.
    public static let local = NodeID("local")

    public var description: String { value }
}
