extension Duration {
    /// This duration in whole milliseconds, rounded toward zero and saturating at the
    /// bounds of `Int64`: the one conversion for every millisecond count Parley sends,
    /// stores or configures (`heartbeatMs`, `expiresTime`, retry delays, poll timeouts).
    public var wholeMilliseconds: Int64 { milliseconds(roundingUp: false) }

    /// This duration in whole milliseconds, rounded up (toward +∞) and saturating: for a
    /// wait handed to the kernel in milliseconds that must not end before the deadline.
    public var wholeMillisecondsRoundedUp: Int64 { milliseconds(roundingUp: true) }

    private func milliseconds(roundingUp: Bool) -> Int64 {
        let attosecondsPerMillisecond: Int64 = 1_000_000_000_000_000
        // `components` gives both parts the sign of the duration.
        let (seconds, attoseconds) = components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        if overflow { return seconds < 0 ? .min : .max }
        var fraction = attoseconds / attosecondsPerMillisecond
        if roundingUp, attoseconds > fraction * attosecondsPerMillisecond { fraction += 1 }
        let (sum, overflow2) = scaled.addingReportingOverflow(fraction)
        if overflow2 { return seconds < 0 ? .min : .max }
        return sum
    }
}
