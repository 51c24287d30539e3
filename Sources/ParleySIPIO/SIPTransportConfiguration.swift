public import ParleyNetCore
public import ParleyNetLinux
public import ParleySIP

/// Where a `SIPTransportServer` listens and the limits that keep one peer from hurting
/// the others.
public struct SIPTransportConfiguration: Sendable, Hashable {
    /// The address and port listened on for both UDP and TCP (RFC 3261 §18.2.1 asks a
    /// server to take both on one port). One family: `[::]` takes IPv6 only (the sockets
    /// set `IPV6_V6ONLY`). Port 0 picks a port free for both (`SIPTransportServer.localAddress`).
    public var listenAddress: SocketAddress
    /// Bounds on each message (size, header count, line length...).
    public var limits: SIPLimits
    /// TCP and TLS connections open at once, accepted and opened together; one more
    /// accepted is closed at once, one more to open fails the send.
    public var maxConnections: Int
    /// TCP and TLS connections one source IP address may hold open at once.
    public var maxConnectionsPerSource: Int
    /// A TCP connection that carries nothing (no message, no keepalive) this long is
    /// closed. RFC 5626 clients ping every 95 to 120 s, so this stays above that.
    public var idleTimeout: Duration
    /// A message begun on a TCP connection must be complete within this (slowloris
    /// defence), or the connection is closed.
    public var messageTimeout: Duration
    /// A TCP connection this server opens must be established within this; otherwise it
    /// is closed, and requests moved to it for their size go out over UDP after all.
    public var connectTimeout: Duration
    /// Requests per source IP address (`SIPSourceRateLimiter`).
    public var rateLimit: SIPSourceRateLimit
    /// Answer every UDP request at its packet source, as if its top Via asked for it with
    /// `rport` (RFC 3581), whatever the Via says. Off by default (RFC 3261 §18.2.2: without
    /// `rport`, the response goes to the Via's `received` address and sent-by port); on
    /// behind NATs whose clients do not ask, and in tests that replay messages whose Vias
    /// name other hosts.
    public var forceReturnPort: Bool
    /// A UDP request longer than this goes over TCP when its sender allows it (RFC 3261
    /// §18.1.1: 1300 bytes when the path MTU is unknown).
    public var largeRequestThreshold: Int
    /// Write queue limits of each TCP connection (back-pressure: a peer that does not read
    /// is closed once its queue passes the maximum).
    public var connection: TCPConnection.Configuration
    /// SIP over TLS on a second port, and TLS toward peers; nil: UDP and TCP only (a send
    /// over TLS is then dropped as unroutable). TLS connections count in the same limits
    /// as TCP ones (connections, per source, idle and message timeouts).
    public var tls: SIPTLSConfiguration?
    /// The name of the loop's thread.
    public var threadName: String

    /// Defaults: 64 KiB messages, 1024 connections, 32 per source, 180 s idle, 10 s to
    /// complete a message, 5 s to connect, 50 requests/s with a burst of 100 per source,
    /// the 1300-byte rule, 64 KiB / 1 MiB write queues, no TLS, thread `parley-sip`.
    public init(listenAddress: SocketAddress, limits: SIPLimits = .default, maxConnections: Int = 1024,
                maxConnectionsPerSource: Int = 32, idleTimeout: Duration = .seconds(180),
                messageTimeout: Duration = .seconds(10), connectTimeout: Duration = .seconds(5),
                rateLimit: SIPSourceRateLimit = SIPSourceRateLimit(), forceReturnPort: Bool = false,
                largeRequestThreshold: Int = 1300,
                connection: TCPConnection.Configuration = TCPConnection.Configuration(
                    pauseReadingAbove: 64 * 1024, maxQueuedBytes: 1024 * 1024, lingerTimeout: .seconds(2)),
                tls: SIPTLSConfiguration? = nil, threadName: String = "parley-sip") {
        self.listenAddress = listenAddress
        self.limits = limits
        self.maxConnections = maxConnections
        self.maxConnectionsPerSource = maxConnectionsPerSource
        self.idleTimeout = idleTimeout
        self.messageTimeout = messageTimeout
        self.connectTimeout = connectTimeout
        self.rateLimit = rateLimit
        self.forceReturnPort = forceReturnPort
        self.largeRequestThreshold = largeRequestThreshold
        self.connection = connection
        self.tls = tls
        self.threadName = threadName
    }
}
