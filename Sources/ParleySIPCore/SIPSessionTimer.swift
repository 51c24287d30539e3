import ParleySIP

/// One dialog's session timer (RFC 4028): the negotiated interval, which side refreshes,
/// and the two deadlines that follow. The refresher refreshes at half the interval (§10);
/// either side ends a session that went unrefreshed with a BYE, sent the smaller of 32 s
/// and a third of the interval before it would expire (§10), so the BYE arrives in time.
struct SIPSessionTimer: Sendable, Hashable {
    enum Refresher: Sendable, Hashable {
        case us, them
    }

    private(set) var interval: UInt32
    private(set) var refresher: Refresher
    /// When we send the next refresh; nil when the peer refreshes or one is in flight.
    private(set) var refreshAt: ContinuousClock.Instant?
    /// When to give up on the session and send BYE.
    private(set) var expiryAt: ContinuousClock.Instant

    init(interval: UInt32, refresher: Refresher, now: ContinuousClock.Instant) {
        self.interval = interval
        self.refresher = refresher
        self.refreshAt = nil
        self.expiryAt = now
        refreshed(interval: interval, refresher: refresher, now: now)
    }

    /// The timer a Session-Expires of a 2xx to our INVITE or refresh sets (§7.2, §7.4):
    /// `refresher=uac` (or none) is us, `uas` the peer.
    init(answering value: SIPSessionExpires, now: ContinuousClock.Instant) {
        self.init(interval: value.interval, refresher: value.refresher == .uas ? .them : .us, now: now)
    }

    var nextDeadline: ContinuousClock.Instant { refreshAt.map { min($0, expiryAt) } ?? expiryAt }

    /// A refresh succeeded (ours or the peer's): both deadlines start again.
    mutating func refreshed(interval: UInt32, refresher: Refresher, now: ContinuousClock.Instant) {
        self.interval = max(1, interval)
        self.refresher = refresher
        let seconds = Int64(self.interval)
        refreshAt = refresher == .us ? now + .seconds(max(1, seconds / 2)) : nil
        expiryAt = now + .seconds(seconds - min(32, seconds / 3))
    }

    /// A refresh of ours is in flight: no second one until it is answered.
    mutating func refreshSent() { refreshAt = nil }

    /// Try again at `instant` (after a 491, RFC 3261 §14.1).
    mutating func retryRefresh(at instant: ContinuousClock.Instant) { refreshAt = min(instant, expiryAt) }

    /// The Session-Expires value that says we keep refreshing.
    var requestValue: SIPSessionExpires { SIPSessionExpires(interval: interval, refresher: .uac) }
}
