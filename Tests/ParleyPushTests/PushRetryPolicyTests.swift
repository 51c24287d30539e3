import Testing
import ParleyPush

@Suite struct PushRetryPolicyTests {
    let policy = PushRetryPolicy(maxAttempts: 4, baseDelayMilliseconds: 200, maxDelayMilliseconds: 500)
    let busy = PushOutcome.retryable(reason: "ServiceUnavailable", retryAfter: nil)

    @Test func backoffDoublesWithEqualJitterUpToTheCap() {
        #expect(policy.decide(after: busy, attempt: 1, now: 0, deadline: 10_000, jitter: 0) == .retry(at: 100))
        #expect(policy.decide(after: busy, attempt: 1, now: 0, deadline: 10_000, jitter: 0.999) == .retry(at: 199))
        #expect(policy.decide(after: busy, attempt: 2, now: 0, deadline: 10_000, jitter: 0) == .retry(at: 200))
        #expect(policy.decide(after: busy, attempt: 3, now: 0, deadline: 10_000, jitter: 1) == .retry(at: 500))
        #expect(policy.decide(after: busy, attempt: 3, now: 0, deadline: 10_000, jitter: .nan) == .retry(at: 250))
    }

    @Test func stopsAfterMaxAttemptsOrAtTheDeadline() {
        #expect(policy.decide(after: busy, attempt: 4, now: 0, deadline: 10_000, jitter: 0) == .stop)
        #expect(policy.decide(after: busy, attempt: 1, now: 9_950, deadline: 10_000, jitter: 0) == .stop)
    }

    @Test func retryAfterIsHonoured() {
        let limited = PushOutcome.retryable(reason: "TooManyRequests", retryAfter: 2)
        #expect(policy.decide(after: limited, attempt: 1, now: 0, deadline: 10_000, jitter: 0) == .retry(at: 2_000))
        // Longer than the backoff's cap: still at least Retry-After.
        let slow = PushOutcome.retryable(reason: "ServiceUnavailable", retryAfter: 8)
        #expect(policy.decide(after: slow, attempt: 3, now: 1_000, deadline: 10_000, jitter: 1) == .retry(at: 9_000))
    }

    @Test func aRetryAfterReachingTheDeadlineStops() {
        // Retry-After: 60 with a 10 s ring: no attempt at or after the deadline.
        let later = PushOutcome.retryable(reason: "ServiceUnavailable", retryAfter: 60)
        #expect(policy.decide(after: later, attempt: 1, now: 0, deadline: 10_000, jitter: 0) == .stop)
        let exactly = PushOutcome.retryable(reason: "ServiceUnavailable", retryAfter: 10)
        #expect(policy.decide(after: exactly, attempt: 1, now: 0, deadline: 10_000, jitter: 0) == .stop)
        // An absurd value stops too, without overflowing the arithmetic.
        let absurd = PushOutcome.retryable(reason: "TooManyRequests", retryAfter: Int.max)
        #expect(policy.decide(after: absurd, attempt: 1, now: 0, deadline: 10_000, jitter: 0) == .stop)
    }

    @Test func finalAnswersStopAndAuthIsRetriedOnce() {
        #expect(policy.decide(after: .delivered, attempt: 1, now: 0, deadline: 10_000, jitter: 0) == .stop)
        #expect(policy.decide(after: .tokenGone(reason: "Unregistered"), attempt: 1, now: 0, deadline: 10_000, jitter: 0) == .stop)
        #expect(policy.decide(after: .rejected(reason: "BadTopic"), attempt: 1, now: 0, deadline: 10_000, jitter: 0) == .stop)
        let auth = PushOutcome.authRefused(reason: "ExpiredProviderToken")
        #expect(policy.decide(after: auth, attempt: 1, now: 5, deadline: 10_000, jitter: 0.5) == .retry(at: 5))
        #expect(policy.decide(after: auth, attempt: 2, now: 5, deadline: 10_000, jitter: 0.5, authRetried: true) == .stop)
    }

    @Test func aBadDeviceTokenIsTriedOnceInTheOtherEnvironmentAtOnce() {
        let bad = PushOutcome.badDeviceToken(reason: "BadDeviceToken")
        #expect(policy.decide(after: bad, attempt: 1, now: 7, deadline: 10_000, jitter: 0.9) == .retry(at: 7))
        #expect(policy.decide(after: bad, attempt: 2, now: 7, deadline: 10_000, jitter: 0.9, environmentRetried: true) == .stop)
        #expect(policy.decide(after: bad, attempt: 4, now: 7, deadline: 10_000, jitter: 0.9) == .stop)
        #expect(policy.decide(after: bad, attempt: 1, now: 10_000, deadline: 10_000, jitter: 0) == .stop)
    }
}
