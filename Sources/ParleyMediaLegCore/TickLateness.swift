import ParleyWireCore

/// How late a clock's ticks ran: each run's lateness (when it ran minus when it was due),
/// kept for the last `capacity` runs so percentiles can be read, with totals since the
/// start. Memory is fixed at `capacity` values.
public struct TickLateness: Sendable, Hashable {
    /// Runs kept for percentiles.
    public let capacity: Int
    /// Runs recorded since the start.
    public private(set) var count: UInt64 = 0
    /// The latest any run was.
    public private(set) var maximum: Duration = .zero
    private var recent: [Int64] = []
    private var next = 0

    public init(capacity: Int = 1024) {
        self.capacity = max(1, capacity)
        recent.reserveCapacity(self.capacity)
    }

    /// Records a run `lateness` after its deadline (a negative one counts as on time).
    public mutating func record(_ lateness: Duration) {
        let value = max(lateness, .zero)
        count &+= 1
        if value > maximum { maximum = value }
        let nanoseconds = value.wholeNanoseconds
        if recent.count < capacity {
            recent.append(nanoseconds)
        } else {
            recent[next] = nanoseconds
        }
        next = (next + 1) % capacity
    }

    /// The lateness that `fraction` (0...1, such as 0.99) of the kept runs did not exceed;
    /// zero before any run.
    public func percentile(_ fraction: Double) -> Duration {
        guard !recent.isEmpty else { return .zero }
        let sorted = recent.sorted()
        let rank = Int((min(max(fraction, 0), 1) * Double(sorted.count - 1)).rounded(.up))
        return .nanoseconds(sorted[rank])
    }
}
