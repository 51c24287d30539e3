/// When to try a push again: exponential backoff with "equal" jitter, a cap, a bound on
/// attempts, and a deadline (a push after the call stopped ringing is useless). Sans-I/O:
/// the caller passes the attempt count, the time and a random fraction.
public struct PushRetryPolicy: Sendable, Hashable {
    /// Attempts in all, the first included.
    public var maxAttempts: Int
    /// The backoff before the second attempt, in milliseconds; it doubles per attempt.
    public var baseDelayMilliseconds: Int64
    /// The largest backoff, in milliseconds.
    public var maxDelayMilliseconds: Int64

    public init(maxAttempts: Int = 4, baseDelayMilliseconds: Int64 = 200, maxDelayMilliseconds: Int64 = 5_000) {
        self.maxAttempts = max(1, maxAttempts)
        self.baseDelayMilliseconds = max(1, baseDelayMilliseconds)
        self.maxDelayMilliseconds = max(self.baseDelayMilliseconds, maxDelayMilliseconds)
    }

    /// The decision after an answer.
    public enum Decision: Sendable, Hashable {
        /// Send again at this time (milliseconds, the caller's clock).
        case retry(at: Int64)
        /// The push is finished (delivered, gone, refused, or out of attempts or time).
        case stop
    }

    /// Decides after attempt number `attempt` (1-based) got `outcome` at `now`.
    ///
    /// - Parameters:
    ///   - deadline: no attempt starts at or after this time (the call's ring deadline).
    ///   - jitter: a random number in `0..<1`; with `c = min(cap, base * 2^(attempt-1))` the
    ///     delay is `c/2 + jitter * c/2` (half fixed so a retry never fires at once, half
    ///     random so many servers do not retry in step), never less than `Retry-After`.
    ///   - authRetried: whether this push already made a new auth token once.
    ///   - environmentRetried: whether this push already went to the other APNs
    ///     environment once after a `BadDeviceToken`.
    public func decide(
        after outcome: PushOutcome, attempt: Int, now: Int64, deadline: Int64, jitter: Double, authRetried: Bool = false,
        environmentRetried: Bool = false
    ) -> Decision {
        guard attempt < maxAttempts else { return .stop }
        let delay: Int64
        switch outcome {
        case .delivered, .tokenGone, .rejected: return .stop
        case .authRefused:
            guard !authRetried else { return .stop }
            delay = 0
        case .badDeviceToken:
            // The other environment is another host: no reason to wait.
            guard !environmentRetried else { return .stop }
            delay = 0
        case .retryable(_, let retryAfter):
            let exponent = min(attempt - 1, 30)
            let ceiling = min(maxDelayMilliseconds, baseDelayMilliseconds << Int64(exponent))
            let fraction = jitter.isFinite ? min(max(jitter, 0), 1) : 0
            let jittered = ceiling / 2 + Int64(Double(ceiling / 2) * fraction)
            // A provider's wait is a floor, never shortened by the backoff's cap.
            delay = max(jittered, Int64(min(retryAfter ?? 0, RetryAfter.maximumSeconds)) * 1000)
        }
        let at = now + delay
        return at < deadline ? .retry(at: at) : .stop
    }
}
