import ParleyNetCore
import ParleyWireCore

/// The per-source token buckets of `SIPSourceRateLimit`: the source's address (its port
/// ignored: a flood changes ports freely) and the time in, a verdict out. Sans-I/O, used
/// on the transport's loop only.
struct SIPSourceRateLimiter {
    /// What to do with one request.
    enum Verdict: Sendable, Hashable {
        /// Within the limit: process it.
        case admit
        /// Over the limit: answer 503 with Retry-After (never for an ACK).
        case refuse
        /// Over the limit and past the refusals: drop it unanswered.
        case drop
    }

    private struct Bucket {
        var requests: Double
        var refusals: Double
        var updated: ContinuousClock.Instant
    }

    let limit: SIPSourceRateLimit
    private var buckets: [SocketAddress: Bucket] = [:]
    /// Shared by new sources while the table is full of sources still over their rate.
    private var overflow: Bucket?
    private var lastPurge: ContinuousClock.Instant?

    init(limit: SIPSourceRateLimit) {
        self.limit = limit
    }

    /// Sources tracked now.
    var trackedSources: Int { buckets.count }

    /// Takes a token for a request from `source` that arrived at `now`.
    mutating func admit(from source: SocketAddress, at now: ContinuousClock.Instant) -> Verdict {
        let key = source.withPort(0)
        if var bucket = buckets[key] {
            let verdict = take(&bucket, at: now, scale: 1)
            buckets[key] = bucket
            return verdict
        }
        if buckets.count >= max(1, limit.maxTrackedSources) { purge(at: now) }
        if buckets.count < max(1, limit.maxTrackedSources) {
            var bucket = fresh(at: now, scale: 1)
            let verdict = take(&bucket, at: now, scale: 1)
            buckets[key] = bucket
            return verdict
        }
        var shared = overflow ?? fresh(at: now, scale: 10)
        let verdict = take(&shared, at: now, scale: 10)
        overflow = shared
        return verdict
    }

    private func fresh(at now: ContinuousClock.Instant, scale: Double) -> Bucket {
        Bucket(requests: Double(max(1, limit.burst)) * scale, refusals: Double(max(0, limit.refusalBurst)) * scale, updated: now)
    }

    private func take(_ bucket: inout Bucket, at now: ContinuousClock.Instant, scale: Double) -> Verdict {
        if bucket.updated < now {
            let elapsed = bucket.updated.duration(to: now).fractionalSeconds
            bucket.requests = min(Double(max(1, limit.burst)) * scale, bucket.requests + elapsed * limit.requestsPerSecond * scale)
            bucket.refusals = min(Double(max(0, limit.refusalBurst)) * scale, bucket.refusals + elapsed * limit.refusalsPerSecond * scale)
            bucket.updated = now
        }
        if bucket.requests >= 1 {
            bucket.requests -= 1
            return .admit
        }
        if bucket.refusals >= 1 {
            bucket.refusals -= 1
            return .refuse
        }
        return .drop
    }

    /// Forgets the sources whose buckets have filled up again (a new bucket is the same),
    /// at most once a second: a flood of new source addresses must not make every request
    /// scan the table.
    private mutating func purge(at now: ContinuousClock.Instant) {
        if let lastPurge, lastPurge.duration(to: now) < .seconds(1) { return }
        lastPurge = now
        let refill = max(Double(max(1, limit.burst)) / max(limit.requestsPerSecond, 0.001),
                         Double(max(0, limit.refusalBurst)) / max(limit.refusalsPerSecond, 0.001))
        buckets = buckets.filter { $0.value.updated.duration(to: now).fractionalSeconds < refill }
        if let shared = overflow, shared.updated.duration(to: now).fractionalSeconds >= refill { overflow = nil }
    }
}
