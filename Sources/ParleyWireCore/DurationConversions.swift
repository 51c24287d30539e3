
/// The one set of conversions from `Duration` to the plain numbers Parley hands to
/// protocols, records, kernels and timers. Each saturates at the bounds of its type rather
/// than trapping or wrapping, so a configured or computed extreme (a deadline in the far
/// future, a negative remainder) stays an extreme instead of becoming nonsense.
extension Duration {
    /// This duration in whole milliseconds, rounded toward zero and saturating at the
    /// bounds of `Int64`: the one conversion for every millisecond count Parley sends,
    /// stores or configures (`heartbeatMs`, `expiresTime`, retry delays, poll timeouts).
    public var wholeMilliseconds: Int64 { whole(per: 1_000_000_000_000_000, scale: 1000, roundingUp: false) }

    /// This duration in whole milliseconds, rounded up (toward +∞) and saturating: for a
    /// wait handed to the kernel in milliseconds that must not end before the deadline.
    public var wholeMillisecondsRoundedUp: Int64 { whole(per: 1_000_000_000_000_000, scale: 1000, roundingUp: true) }

    /// This duration in whole nanoseconds, rounded toward zero and saturating at the bounds
    /// of `Int64` (about ±292 years): for monotonic media time, RTP clock arithmetic and
    /// Dispatch deadlines (`.nanoseconds(Int(wholeNanoseconds))`).
    public var wholeNanoseconds: Int64 { whole(per: 1_000_000_000, scale: 1_000_000_000, roundingUp: false) }

    /// This duration in seconds as a `Double` (to about 15 significant digits): for rates,
    /// such as a token bucket refilled at so many tokens per second.
    public var fractionalSeconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    /// Whole units of `attosecondsPerUnit` attoseconds, `scale` of them to a second.
    private func whole(per attosecondsPerUnit: Int64, scale: Int64, roundingUp: Bool) -> Int64 {
        // `components` gives both parts the sign of the duration.
        let (seconds, attoseconds) = components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: scale)
        if overflow { return seconds < 0 ? .min : .max }
        var fraction = attoseconds / attosecondsPerUnit
        if roundingUp, attoseconds > fraction * attosecondsPerUnit { fraction += 1 }
        let (sum, overflow2) = scaled.addingReportingOverflow(fraction)
        if overflow2 { return seconds < 0 ? .min : .max }
        return sum
    }
}
