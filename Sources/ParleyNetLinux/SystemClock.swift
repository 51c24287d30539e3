import Glibc
public import ParleyWireCore

/// The one reading of the real clocks on Linux, for the shells (parleyd, the media legs'
/// I/O, the SDK's client): the monotonic instant and `CLOCK_REALTIME`, read back to back so
/// they describe the same moment. Cores never call it; they are handed its readings.
public enum SystemClock {
    /// The monotonic and the wall clock, now.
    public static func now() -> ClockReading {
        let instant = ContinuousClock.now
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        let (seconds, overflow) = Int64(spec.tv_sec).multipliedReportingOverflow(by: 1_000_000_000)
        let unixNanoseconds = overflow ? Int64.max : seconds &+ Int64(spec.tv_nsec)
        return ClockReading(instant: instant, unixNanoseconds: unixNanoseconds)
    }
}
