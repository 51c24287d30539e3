import ParleyWireCore

/// The signaling layer's soft limit on one connection's requests (docs/protocol.md,
/// Limits): a token bucket of `burst` tokens refilled at `perSecond`. A request that
/// finds it empty is answered `rate_limited` instead of being carried out; the edge's own
/// bucket, twice as large, is the hard stop that closes with 4005.
///
/// Sans-I/O: the caller passes the time each request arrived.
public struct RequestRateLimiter: Sendable {
    /// Tokens added per second.
    public let perSecond: Double
    /// The bucket's size.
    public let burst: Double
    private var tokens: Double
    private var updated: ContinuousClock.Instant?

    public init(perSecond: Int, burst: Int) {
        self.perSecond = Double(max(perSecond, 1))
        self.burst = Double(max(burst, 1))
        tokens = self.burst
    }

    /// Takes one token for a request that arrived at `now`; false when none was left.
    public mutating func allow(at now: ContinuousClock.Instant) -> Bool {
        if let updated, updated < now {
            let elapsed = updated.duration(to: now)
            tokens = min(burst, tokens + elapsed.fractionalSeconds * perSecond)
            self.updated = now
        } else if updated == nil {
            updated = now
        }
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }
}
