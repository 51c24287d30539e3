public import ParleyRTP

/// The time base of the media engine: a monotonic count of nanoseconds (the caller's
/// `ContinuousClock`, `CLOCK_MONOTONIC`, or a manual clock in tests) tied once to wall
/// clock time so that RTCP can carry NTP timestamps.
///
/// Everything in ParleyMediaCore takes `now` as monotonic nanoseconds (`UInt64`); nothing
/// reads a clock. The mapping to wall clock time is fixed when the clock is made, so NTP
/// timestamps derived from it never jump when the system clock is adjusted, which is
/// what round-trip measurement (RFC 3550 §6.4.1) needs: A and LSR come from this one clock.
public struct MediaClock: Sendable, Hashable {
    /// Unix time, in nanoseconds, at monotonic time zero.
    public var unixNanosecondsAtZero: Int64

    /// A clock whose monotonic zero was at `unixNanosecondsAtZero` Unix time.
    public init(unixNanosecondsAtZero: Int64) {
        self.unixNanosecondsAtZero = unixNanosecondsAtZero
    }

    /// A clock from one simultaneous reading of both clocks.
    public init(monotonicNanoseconds: UInt64, unixNanoseconds: Int64) {
        unixNanosecondsAtZero = unixNanoseconds &- Int64(clamping: monotonicNanoseconds)
    }

    /// The NTP timestamp of monotonic time `now`.
    public func ntpTimestamp(at now: UInt64) -> NTPTimestamp {
        NTPTimestamp(unixNanoseconds: unixNanosecondsAtZero &+ Int64(clamping: now))
    }

    /// `nanoseconds` expressed in ticks of a `clockRate` Hz RTP clock (truncated), without
    /// overflowing for any 64-bit input.
    public static func rtpUnits(nanoseconds: UInt64, clockRate: UInt32) -> UInt64 {
        let rate = UInt64(clockRate)
        let seconds = nanoseconds / 1_000_000_000
        let rest = nanoseconds % 1_000_000_000
        return seconds &* rate &+ rest * rate / 1_000_000_000
    }

    /// `units` ticks of a `clockRate` Hz RTP clock in nanoseconds (truncated toward zero).
    public static func nanoseconds(rtpUnits units: Int64, clockRate: UInt32) -> Int64 {
        let rate = Int64(max(clockRate, 1))
        let (whole, rest) = units.quotientAndRemainder(dividingBy: rate)
        return whole.multipliedReportingOverflow(by: 1_000_000_000).partialValue &+ rest * 1_000_000_000 / rate
    }
}
