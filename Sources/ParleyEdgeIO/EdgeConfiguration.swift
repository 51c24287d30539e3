public import ParleyNetCore
public import ParleyNetLinux
public import ParleyHTTP
public import ParleyWebSocket

/// Everything an `EdgeServer` needs besides its handlers: where to listen, how many
/// loops, and the limits that keep one client from hurting the others.
public struct EdgeConfiguration: Sendable {
    /// Addresses to listen on; each gets one `SO_REUSEPORT` listener per loop. Port 0
    /// picks a free port (the first address's port is then reused for the others of the
    /// same address). `EdgeServer.localAddresses` tells the ports chosen.
    public var listenAddresses: [SocketAddress]
    /// Event loops (threads); clamped to 1...(online cores).
    public var loopCount: Int
    /// Connections accepted at once over all loops; one more gets `503` and is closed.
    public var maxConnections: Int
    /// Time allowed from accepting a connection, or from the first byte of a request, to
    /// the end of that request (head and body); also the time a close handshake may take.
    /// Slowloris defence: a client trickling bytes is answered `408` and closed.
    public var handshakeTimeout: Duration
    /// Time a keep-alive HTTP connection may sit idle between requests, and a WebSocket
    /// may stay silent: at half of it the server pings, at all of it closes with 1001.
    public var idleTimeout: Duration
    /// HTTP parser limits (request line, head, header count, body).
    public var httpLimits: HTTPRequestParser.Limits
    /// Largest WebSocket message (and frame) accepted; a bigger one closes with 1009.
    public var maxMessageSize: Int
    /// Messages a WebSocket may send per second, sustained; one over closes with 1008.
    public var maxMessagesPerSecond: Double
    /// Messages a WebSocket may send in a burst above the sustained rate.
    public var messageBurst: Int
    /// The close code for a WebSocket over the message rate: 1008 (policy violation,
    /// RFC 6455 §7.4.1) by default; docs/protocol.md has parleyd use 4005.
    public var rateLimitCloseCode: WebSocketCloseCode = .policyViolation
    /// Write queue limits of every TCP connection (back-pressure).
    public var connection: TCPConnection.Configuration
    /// A second set of listeners that speak TLS (nil: plain only). Connections accepted
    /// there are served exactly like plain ones once the TLS handshake is done; the
    /// handshake must finish within `handshakeTimeout`.
    public var tls: EdgeTLSConfiguration?

    /// Defaults for a server on `listenAddresses`: one loop per core, 10,000 connections,
    /// 10 s handshake, 120 s idle, 64 KiB messages, 50 messages/s with a burst of 100.
    public init(listenAddresses: [SocketAddress], loopCount: Int = Int.max, maxConnections: Int = 10_000,
                handshakeTimeout: Duration = .seconds(10), idleTimeout: Duration = .seconds(120),
                httpLimits: HTTPRequestParser.Limits = HTTPRequestParser.Limits(),
                maxMessageSize: Int = 64 * 1024, maxMessagesPerSecond: Double = 50, messageBurst: Int = 100,
                connection: TCPConnection.Configuration = TCPConnection.Configuration()) {
        self.listenAddresses = listenAddresses
        self.loopCount = loopCount
        self.maxConnections = maxConnections
        self.handshakeTimeout = handshakeTimeout
        self.idleTimeout = idleTimeout
        self.httpLimits = httpLimits
        self.maxMessageSize = maxMessageSize
        self.maxMessagesPerSecond = maxMessagesPerSecond
        self.messageBurst = messageBurst
        self.connection = connection
    }
}

/// The TLS listeners of an `EdgeServer`: where, and with which certificate.
public struct EdgeTLSConfiguration: Sendable, Hashable {
    /// Addresses the TLS listeners bind (port 0 picks a free port, see
    /// `EdgeServer.tlsLocalAddresses`).
    public var listenAddresses: [SocketAddress]
    /// PEM file with the server certificate first, then any intermediates.
    public var certificateChainFile: String
    /// PEM file with the certificate's private key (unencrypted).
    public var privateKeyFile: String

    public init(listenAddresses: [SocketAddress], certificateChainFile: String, privateKeyFile: String) {
        self.listenAddresses = listenAddresses
        self.certificateChainFile = certificateChainFile
        self.privateKeyFile = privateKeyFile
    }
}
