/// What a device's playout did with the audio it received on one leg of a call, as the
/// device reported it (`call.stats`): the server's own legs relay media without a
/// jitter buffer, so only devices have these figures. Frames are 20 ms ticks.
///
/// Encoded flat: the counters' members and `reportedTime` side by side.
@dynamicMemberLookup
public struct CallLegPlayout: Sendable, Hashable, Codable {
    /// The counters the device sent.
    public var counters: PlayoutCounters
    /// When the device's report arrived (Unix ms).
    public var reportedTime: Int64

    public init(counters: PlayoutCounters = PlayoutCounters(), reportedTime: Int64 = 0) {
        self.counters = counters
        self.reportedTime = reportedTime
    }

    /// The counters' members, read as this value's own (`playout.framesConcealed`).
    public subscript<Value>(dynamicMember member: WritableKeyPath<PlayoutCounters, Value>) -> Value {
        get { counters[keyPath: member] }
        set { counters[keyPath: member] = newValue }
    }

    private enum CodingKeys: String, CodingKey { case reportedTime }

    public init(from decoder: any Decoder) throws {
        counters = try PlayoutCounters(from: decoder)
        reportedTime = try decoder.container(keyedBy: CodingKeys.self).decode(Int64.self, forKey: .reportedTime)
    }

    public func encode(to encoder: any Encoder) throws {
        try counters.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(reportedTime, forKey: .reportedTime)
    }
}
