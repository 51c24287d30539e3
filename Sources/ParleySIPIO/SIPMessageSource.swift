public import ParleyNetCore

/// Where a received message came from, which is also where its responses go (RFC 3261
/// §18.2.2): the transport, the peer's address and port as the socket saw them, and for
/// TCP and TLS the connection it arrived on.
public struct SIPMessageSource: Sendable, Hashable, CustomStringConvertible {
    /// The transport the message arrived on.
    public let transport: SIPTransport
    /// The peer's address and port (the packet source, not what its Via claims).
    public let remoteAddress: SocketAddress
    /// The local address it arrived at.
    public let localAddress: SocketAddress
    /// The TCP or TLS connection it arrived on; nil for UDP.
    public let connectionID: UInt64?

    public init(transport: SIPTransport, remoteAddress: SocketAddress, localAddress: SocketAddress, connectionID: UInt64?) {
        self.transport = transport
        self.remoteAddress = remoteAddress
        self.localAddress = localAddress
        self.connectionID = connectionID
    }

    public var description: String {
        connectionID.map { "\(transport) \(remoteAddress) (connection \($0))" } ?? "\(transport) \(remoteAddress)"
    }
}
