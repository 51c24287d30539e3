import ParleyWireCore

/// A reading of the server's clocks when an input happens.
///
/// Timers run on the monotonic `instant` (a wall clock can be stepped), while the times
/// the protocol sends (`call.progress.time`, `call.ended.details`) and the call record
/// are wall-clock milliseconds since the Unix epoch. parleyd reads both once per event
/// (`ContinuousClock.now` and the system time) and passes them in; tests advance both
/// together with `advanced(by:)`.
public struct CallTime: Sendable, Hashable {
    /// Monotonic time, for deadlines.
    public var instant: ContinuousClock.Instant
    /// Wall-clock milliseconds since the Unix epoch, for messages and records.
    public var unixMillis: Int64

    public init(instant: ContinuousClock.Instant, unixMillis: Int64) {
        self.instant = instant
        self.unixMillis = unixMillis
    }

    /// Both clocks moved forward by `duration`.
    public func advanced(by duration: Duration) -> CallTime {
        let step = duration.wholeMilliseconds
        let sum = unixMillis.addingReportingOverflow(step)
        return CallTime(instant: instant.advanced(by: duration), unixMillis: sum.overflow ? (step < 0 ? .min : .max) : sum.partialValue)
    }
}
