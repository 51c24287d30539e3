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
    }

    @Test func finalAnswersStopAndAuthIsRetriedOnce() {
        #expect(policy.decide(after: .delivered, attempt: 1, now: 0, deadline: 10_000, jitter: 0) == .stop)
        #expect(policy.decide(after: .tokenGone(reason: "Unregistered"), attempt: 1, now: 0, deadline: 10_000, jitter: 0) == .stop)
        #expect(policy.decide(after: .rejected(reason: "BadTopic"), attempt: 1, now: 0, deadline: 10_000, jitter: 0) == .stop)
        let auth = PushOutcome.authRefused(reason: "ExpiredProviderToken")
        #expect(policy.decide(after: auth, attempt: 1, now: 5, deadline: 10_000, jitter: 0.5) == .retry(at: 5))
        #expect(policy.decide(after: auth, attempt: 2, now: 5, deadline: 10_000, jitter: 0.5, authRetried: true) == .stop)
    }
}
