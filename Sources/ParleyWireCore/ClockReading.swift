/// One reading of a process's two clocks, taken together when an input happens: the
/// monotonic instant for timers and deadlines (a wall clock can be stepped), and the wall
/// clock as Unix time for what the protocol sends and records store (`call.ended.details`,
/// record times, RTCP's NTP timestamps).
///
/// It is a value: cores take one as input and never read a clock themselves. The shells
/// read the real clocks once per event through their platform's reading function
/// (`SystemClock.now()` in ParleyNetLinux; parleyd's `ServerClock.now()` is that one);
/// tests build readings by hand and move both clocks together with `advanced(by:)`.
public struct ClockReading: Sendable, Hashable {
    /// Monotonic time, for deadlines.
    public var instant: ContinuousClock.Instant
    /// Wall-clock nanoseconds since the Unix epoch (1970-01-01T00:00:00Z).
    public var unixNanoseconds: Int64

    /// A reading from both clocks.
    public init(instant: ContinuousClock.Instant, unixNanoseconds: Int64) {
        self.instant = instant
        self.unixNanoseconds = unixNanoseconds
    }

    /// A reading whose wall clock is a whole number of Unix milliseconds (saturating at the
    /// bounds of `Int64` nanoseconds, the years 1678 and 2262).
    public init(instant: ContinuousClock.Instant, unixMilliseconds: Int64) {
        let (nanoseconds, overflow) = unixMilliseconds.multipliedReportingOverflow(by: 1_000_000)
        self.init(instant: instant, unixNanoseconds: overflow ? (unixMilliseconds < 0 ? .min : .max) : nanoseconds)
    }

    /// Wall-clock milliseconds since the Unix epoch, rounded down (toward the past, also
    /// before 1970): the unit of every time the protocol and the records carry.
    public var unixMilliseconds: Int64 {
        let (quotient, remainder) = unixNanoseconds.quotientAndRemainder(dividingBy: 1_000_000)
        return remainder < 0 ? quotient - 1 : quotient
    }

    /// Both clocks moved forward by `duration` (the wall clock saturating).
    public func advanced(by duration: Duration) -> ClockReading {
        let step = duration.wholeNanoseconds
        let (sum, overflow) = unixNanoseconds.addingReportingOverflow(step)
        return ClockReading(instant: instant.advanced(by: duration), unixNanoseconds: overflow ? (step < 0 ? .min : .max) : sum)
    }
}
