/// Counters and delays of a `JitterBuffer`. Counters are cumulative since the buffer was
/// made (a stream reset does not clear them); delays are in nanoseconds.
///
/// JSON (`Encodable`): every field under its own name, e.g.
/// `{"received": 1500, "played": 1490, "lost": 3, "late": 2, ..., "targetDelayNanoseconds": 40000000}`.
public struct JitterBufferStatistics: Sendable, Hashable, Encodable {
    /// Packets pushed, whatever became of them.
    public var received: UInt64 = 0
    /// Packets handed out as `.packet`.
    public var played: UInt64 = 0
    /// Copies of a packet already buffered or played; dropped.
    public var duplicates: UInt64 = 0
    /// Packets that arrived after their playout slot had passed (played as lost); dropped.
    public var late: UInt64 = 0
    /// Sequence numbers never played: slots played as `.lost` (the caller conceals them
    /// with PLC or FEC), plus those whose time passed in underrun ticks.
    public var lost: UInt64 = 0
    /// Packets that arrived after a higher sequence number and were still in time.
    public var reordered: UInt64 = 0
    /// Packets dropped on purpose to shrink the delay.
    public var discardedForDelay: UInt64 = 0
    /// Oldest packets evicted because the buffer reached its capacity.
    public var overflowed: UInt64 = 0
    /// Packets dropped as a sequence or timestamp jump not (yet) confirmed by the next packet.
    public var jumpDiscarded: UInt64 = 0
    /// Stream restarts: SSRC change or a confirmed jump.
    public var resets: UInt64 = 0
    /// Ticks that played `.stretch` to grow the delay.
    public var stretched: UInt64 = 0
    /// Ticks after playout began with nothing buffered (`.empty` mid-stream).
    public var underruns: UInt64 = 0
    /// Packets waiting in the buffer now.
    public var bufferedPackets: Int = 0
    /// The delay the buffer aims for.
    public var targetDelayNanoseconds: Int64 = 0
    /// How far behind the fastest packet of the window playout ran at the last tick.
    public var currentDelayNanoseconds: Int64 = 0
    /// Time the last played packet spent in the buffer (playout minus arrival): the
    /// receive-side buffer component of one-way delay.
    public var lastBufferDelayNanoseconds: Int64 = 0
    /// Sum of the buffer delays of all played packets (mean = sum / played).
    public var totalBufferDelayNanoseconds: Int64 = 0

    public init() {}

    /// Mean time a played packet spent in the buffer, or 0 before the first.
    public var meanBufferDelayNanoseconds: Int64 {
        played == 0 ? 0 : totalBufferDelayNanoseconds / Int64(clamping: played)
    }
}
