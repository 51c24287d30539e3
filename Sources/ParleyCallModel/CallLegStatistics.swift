/// Media statistics of one leg (server to one device), as records keep them.
/// The names follow ParleyMediaCore's `LegStatistics`: "inbound" is what the server received
/// from the device, "outbound" what the device reported about the server's stream.
public struct CallLegStatistics: Sendable, Hashable, Codable {
    public var packetsSent: Int64
    public var octetsSent: Int64
    public var packetsReceived: Int64
    public var octetsReceived: Int64
    /// Loss fraction of the device's stream over the last report interval (0...1).
    public var inboundFractionLost: Double
    /// Packets of the device's stream lost in all (negative when duplicates outnumber losses).
    public var inboundCumulativeLost: Int64
    /// Interarrival jitter of the device's stream, milliseconds (RFC 3550 section 6.4.1).
    public var inboundJitterMilliseconds: Double
    /// Loss fraction of the server's stream the device reported last; nil before its first report.
    public var outboundFractionLost: Double?
    /// Cumulative loss of the server's stream the device reported last.
    public var outboundCumulativeLost: Int64?
    /// Jitter of the server's stream the device reported last, milliseconds.
    public var outboundJitterMilliseconds: Double?
    /// Round-trip time from the last RTCP report that allowed measuring it, milliseconds.
    public var roundTripTimeMilliseconds: Double?

    public init(
        packetsSent: Int64 = 0, octetsSent: Int64 = 0, packetsReceived: Int64 = 0, octetsReceived: Int64 = 0,
        inboundFractionLost: Double = 0, inboundCumulativeLost: Int64 = 0, inboundJitterMilliseconds: Double = 0,
        outboundFractionLost: Double? = nil, outboundCumulativeLost: Int64? = nil,
        outboundJitterMilliseconds: Double? = nil, roundTripTimeMilliseconds: Double? = nil
    ) {
        self.packetsSent = packetsSent
        self.octetsSent = octetsSent
        self.packetsReceived = packetsReceived
        self.octetsReceived = octetsReceived
        self.inboundFractionLost = inboundFractionLost
        self.inboundCumulativeLost = inboundCumulativeLost
        self.inboundJitterMilliseconds = inboundJitterMilliseconds
        self.outboundFractionLost = outboundFractionLost
        self.outboundCumulativeLost = outboundCumulativeLost
        self.outboundJitterMilliseconds = outboundJitterMilliseconds
        self.roundTripTimeMilliseconds = roundTripTimeMilliseconds
    }

    /// Share of the device's packets that never arrived, over the whole call (0...1):
    /// cumulative lost over expected (received + lost); 0 before any packet.
    public var inboundLossRatio: Double {
        let lost = max(inboundCumulativeLost, 0)
        let expected = packetsReceived + lost
        return expected > 0 ? Double(lost) / Double(expected) : 0
    }
}
