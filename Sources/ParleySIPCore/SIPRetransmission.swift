/// A retransmission timer: when it fires next and the interval it was last set to, which
/// the transaction doubles (or caps at T2) each time it fires.
struct SIPRetransmission: Sendable, Hashable {
    private(set) var interval: Duration
    private(set) var deadline: ContinuousClock.Instant

    /// A timer that fires `interval` after `now`.
    init(interval: Duration, now: ContinuousClock.Instant) {
        self.interval = interval
        self.deadline = now + interval
    }

    /// Sets the timer again, `next` after `now` (the RFC resets each timer when it fires).
    mutating func fire(now: ContinuousClock.Instant, next: Duration) {
        interval = next
        deadline = now + next
    }
}
