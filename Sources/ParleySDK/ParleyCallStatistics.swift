/// Media figures of a call's leg, refreshed about once a second while it runs and once
/// when it closes. Zero before media starts.
public struct ParleyCallStatistics: Sendable, Hashable {
    /// RTP packets sent.
    public var packetsSent: UInt64
    /// RTP packets received.
    public var packetsReceived: UInt64
    /// Packets the peer's sequence numbers say were lost on the way to us.
    public var packetsLost: Int64
    /// Interarrival jitter of what we receive, in milliseconds (RFC 3550).
    public var jitterMilliseconds: Double
    /// Round-trip time from RTCP reports, in milliseconds; nil until measured.
    public var roundTripTimeMilliseconds: Double?

    /// Statistics with the given values (zero by default).
    public init(packetsSent: UInt64 = 0, packetsReceived: UInt64 = 0, packetsLost: Int64 = 0,
                jitterMilliseconds: Double = 0, roundTripTimeMilliseconds: Double? = nil) {
        self.packetsSent = packetsSent
        self.packetsReceived = packetsReceived
        self.packetsLost = packetsLost
        self.jitterMilliseconds = jitterMilliseconds
        self.roundTripTimeMilliseconds = roundTripTimeMilliseconds
    }
}
