/// The figures of one media leg, both directions, as the server's call detail and the
/// CLI show them. "Inbound" is what we measured on the remote's stream; "outbound" is
/// what the remote reported (in RTCP report blocks) about ours.
///
/// JSON (`Encodable`): the field names below; optionals not yet known are omitted
/// (synthesized encoding leaves nil out).
public struct LegStatistics: Sendable, Hashable, Encodable {
    public var packetsSent: UInt64 = 0
    public var octetsSent: UInt64 = 0
    public var packetsReceived: UInt64 = 0
    public var octetsReceived: UInt64 = 0

    /// Loss fraction of the remote's stream over our last report interval (0...1).
    public var inboundFractionLost: Double = 0
    /// Packets of the remote's stream lost so far (negative when duplicates outnumber losses).
    public var inboundCumulativeLost: Int64 = 0
    /// Interarrival jitter of the remote's stream, milliseconds (RFC 3550 §6.4.1).
    public var inboundJitterMilliseconds: Double = 0

    /// Loss fraction of our stream the remote reported last (0...1), nil before its first report.
    public var outboundFractionLost: Double?
    /// Cumulative loss of our stream the remote reported last.
    public var outboundCumulativeLost: Int64?
    /// Jitter of our stream the remote reported last, milliseconds.
    public var outboundJitterMilliseconds: Double?

    /// Round-trip time from the last report block that carried an LSR (A - LSR - DLSR).
    public var roundTripTimeMilliseconds: Double?

    public init() {}
}
