/// How many requests one source IP address may send a `SIPTransportServer`, and what
/// happens to those over the limit.
///
/// Each source has a token bucket of `burst` requests refilled at `requestsPerSecond`
/// (responses are not counted: they answer our own requests). A request that finds the
/// bucket empty is refused with `503 Service Unavailable` and `Retry-After`
/// (`retryAfterSeconds`) while the source's second, smaller bucket of refusals lasts
/// (`refusalsPerSecond`, `refusalBurst`), and dropped unanswered after that, so a flood
/// costs at most a few answers per second; an ACK over the limit is always dropped (it
/// is never answered). Other sources keep their own buckets.
public struct SIPSourceRateLimit: Sendable, Hashable {
    /// Requests per second a source may send, sustained.
    public var requestsPerSecond: Double
    /// Requests a source may send at once above that rate.
    public var burst: Int
    /// 503 answers per second a source over its limit gets, sustained.
    public var refusalsPerSecond: Double
    /// 503 answers a source over its limit may get at once.
    public var refusalBurst: Int
    /// The `Retry-After` of those answers, in seconds.
    public var retryAfterSeconds: Int
    /// Sources tracked at once (about 100 bytes each). Past it, sources whose buckets are
    /// full again are forgotten; if none is, new sources share one bucket of ten times
    /// the per-source rate until some are.
    public var maxTrackedSources: Int

    /// 50 requests/s with a burst of 100; 5 refusals/s with a burst of 10, `Retry-After: 5`;
    /// 10,000 sources.
    public init(requestsPerSecond: Double = 50, burst: Int = 100, refusalsPerSecond: Double = 5, refusalBurst: Int = 10,
                retryAfterSeconds: Int = 5, maxTrackedSources: Int = 10_000) {
        self.requestsPerSecond = requestsPerSecond
        self.burst = burst
        self.refusalsPerSecond = refusalsPerSecond
        self.refusalBurst = refusalBurst
        self.retryAfterSeconds = retryAfterSeconds
        self.maxTrackedSources = maxTrackedSources
    }
}
