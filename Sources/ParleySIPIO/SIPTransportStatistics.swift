/// Counters of a `SIPTransportServer` since it started (for `/metrics`), read at one
/// moment.
public struct SIPTransportStatistics: Sendable, Hashable {
    /// Why a message was dropped.
    public enum DropReason: String, Sendable, Hashable, CaseIterable {
        /// It did not parse or validate and was not to be answered (a bad response, a
        /// request without a usable Via; RFC 3261 §18.1.2, §18.2.1), or a stream lost its
        /// framing.
        case malformed
        /// It passed a `SIPLimits` bound and was not read (over a stream, the connection
        /// closed).
        case overLimit = "over_limit"
        /// A request over its source's rate limit, past the 503 answers.
        case rateLimited = "rate_limited"
        /// A response nothing was waiting for (`SIPDelivery.noTaker`).
        case noTaker = "no_taker"
        /// A message to send had nowhere to go: a host name without an address, another
        /// address family than the listening one, no connection allowed.
        case unroutable
        /// The socket refused it (buffer full, the connection closed before it went out).
        case sendFailed = "send_failed"
    }

    /// Messages read off the wire, by transport (invalid ones included; keepalives not).
    public var received: [SIPTransport: Int]
    /// Messages handed to a socket, by transport.
    public var sent: [SIPTransport: Int]
    /// Messages dropped, by reason.
    public var dropped: [DropReason: Int]
    /// Requests the transport answered itself because they failed validation (400, 416,
    /// 505, 513...).
    public var rejected: Int
    /// Requests over their source's rate limit answered 503.
    public var rateLimitRefused: Int
    /// Requests over their source's rate limit dropped (also in `dropped[.rateLimited]`).
    public var rateLimitDropped: Int
    /// Keepalives received (RFC 5626: CRLF CRLF over TCP, answered CRLF; bare line breaks
    /// in a datagram).
    public var keepalives: Int
    /// TCP and TLS connections open now (accepted and opened).
    public var connectionsOpen: Int
    /// TCP and TLS connections accepted since the start.
    public var connectionsAccepted: Int
    /// TCP and TLS connections opened by this server since the start.
    public var connectionsOpened: Int
    /// TCP and TLS connections refused at accept (over `maxConnections` or `maxConnectionsPerSource`).
    public var connectionsRefused: Int
    /// TCP connections closed for idleness, a message not completed in time, or a
    /// connect or TLS handshake that took too long.
    public var connectionTimeouts: Int
    /// TLS handshakes completed, on connections accepted and opened.
    public var tlsHandshakes: Int
    /// TLS handshakes that failed: garbage or plain SIP on the TLS port, no common
    /// protocol version or cipher, a peer certificate that did not verify, the peer
    /// closing half-way, or the handshake timeout (also in `connectionTimeouts`).
    public var tlsHandshakeFailures: Int

    public init(received: [SIPTransport: Int] = [:], sent: [SIPTransport: Int] = [:], dropped: [DropReason: Int] = [:],
                rejected: Int = 0, rateLimitRefused: Int = 0, rateLimitDropped: Int = 0, keepalives: Int = 0,
                connectionsOpen: Int = 0, connectionsAccepted: Int = 0, connectionsOpened: Int = 0,
                connectionsRefused: Int = 0, connectionTimeouts: Int = 0, tlsHandshakes: Int = 0, tlsHandshakeFailures: Int = 0) {
        self.received = received
        self.sent = sent
        self.dropped = dropped
        self.rejected = rejected
        self.rateLimitRefused = rateLimitRefused
        self.rateLimitDropped = rateLimitDropped
        self.keepalives = keepalives
        self.connectionsOpen = connectionsOpen
        self.connectionsAccepted = connectionsAccepted
        self.connectionsOpened = connectionsOpened
        self.connectionsRefused = connectionsRefused
        self.connectionTimeouts = connectionTimeouts
        self.tlsHandshakes = tlsHandshakes
        self.tlsHandshakeFailures = tlsHandshakeFailures
    }
}
