/// The limits and timers of the server's session protocol (docs/protocol.md: Sessions,
/// Heartbeat, Limits, Close codes), as parleyd's configuration sets them.
public struct ServerSessionConfiguration: Sendable, Hashable {
    /// A connection that has not completed `hello` by then is closed with 4002.
    public var helloTimeout: Duration = .seconds(10)
    /// Announced in `hello.ok`; a connection silent for twice this is closed with 4004.
    public var heartbeatInterval: Duration = .seconds(20)
    /// How long a device's session outlives its connection, buffering its messages, for a
    /// `hello` with `resumeSessionId` to take it over.
    public var reconnectGrace: Duration = .seconds(30)
    /// Messages kept for a device whose connection is away, at most (later ones are dropped
    /// and counted).
    public var maxBufferedMessages = 256
    /// The largest frame read (`frame_too_large` beyond it).
    public var maxFrameSize = 65_536
    /// The soft request rate limit (`rate_limited` replies beyond it).
    public var maxRequestsPerSecond = 20
    /// The soft limit's burst.
    public var requestBurst = 50
    /// Requests handed to the call engine or push and not yet answered, at most, per
    /// connection; one more is answered `rate_limited` at once.
    public var maxRequestsInFlight = 32
    /// `serverVersion` in `hello.ok`.
    public var serverVersion = "parleyd/0.1"
    /// The codecs `hello.ok` offers.
    public var codecs = ["opus/48000/2"]

    public init() {}
}
