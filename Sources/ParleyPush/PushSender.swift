internal import Foundation
internal import Synchronization

/// Sends pushes on a thread of its own: builds each provider request, keeps the APNs
/// provider tokens and FCM access tokens per credential, retries by ``PushRetryPolicy``,
/// and reports every attempt and answer through `onEvent` (on its thread).
///
/// One ``HTTP2Client``, so each provider host gets one HTTP/2 connection that every push
/// reuses. Pushes are sent one at a time; a push waiting for its backoff does not hold up
/// the others.
public final class PushSender: Sendable {
    private struct Pending {
        var job: PushJob
        var attempt: Int
        var dueAt: Int64
        var authRetried: Bool
        /// Sent to the other APNs environment after a `BadDeviceToken`.
        var environmentRetried = false
    }

    private struct State {
        var pending: [Pending] = []
        var stopped = false
        var apnsTokens: [String: APNsProviderToken] = [:]
        var fcmTokens: [String: FCMAccessToken] = [:]
        /// Draws the backoff jitter.
        var random: any RandomNumberGenerator & Sendable
    }

    private let endpoints: PushEndpoints
    private let policy: PushRetryPolicy
    private let client: HTTP2Client
    private let clock: @Sendable () -> Int64
    private let onEvent: @Sendable (PushEvent) -> Void
    private let state: Mutex<State>
    private let wakeUp = NSConditionBox()
    /// Milliseconds since the Unix epoch from the system clock.
    public static let wallClock: @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970 * 1000) }
    /// Bounds the queue so a flood of calls cannot grow memory without limit.
    public static let maxPending = 10_000

    /// Starts the sender thread.
    ///
    /// - Parameters:
    ///   - clock: milliseconds since the epoch (tests may pass their own).
    ///   - random: draws each retry's jitter (the policy's `jitter` input); a seeded one
    ///     makes a test's retry times repeat.
    ///   - onEvent: called on the sender's thread for every attempt, answer and end.
    public init(
        endpoints: PushEndpoints, policy: PushRetryPolicy = PushRetryPolicy(), timeoutMilliseconds: Int = 10_000,
        caFile: String? = nil, clock: @escaping @Sendable () -> Int64 = PushSender.wallClock,
        random: some RandomNumberGenerator & Sendable = SystemRandomNumberGenerator(),
        onEvent: @escaping @Sendable (PushEvent) -> Void
    ) throws(PushError) {
        state = Mutex(State(random: random))
        self.endpoints = endpoints
        self.policy = policy
        self.client = try HTTP2Client(timeoutMilliseconds: timeoutMilliseconds, caFile: caFile)
        self.clock = clock
        self.onEvent = onEvent
        let thread = Thread { [self] in run() }
        thread.name = "parley-push"
        thread.start()
    }

    /// Queues a push; it leaves at once unless others are in flight. Returns false (and
    /// drops it) when the sender is stopped or full.
    @discardableResult
    public func send(_ job: PushJob) -> Bool {
        let now = clock()
        let queued = state.withLock { state in
            guard !state.stopped, state.pending.count < Self.maxPending else { return false }
            state.pending.append(Pending(job: job, attempt: 1, dueAt: now, authRetried: false))
            return true
        }
        if queued { wakeUp.signal() }
        return queued
    }

    /// Stops the thread after the exchange in progress; queued pushes are dropped.
    public func stop() {
        state.withLock { $0.stopped = true; $0.pending.removeAll() }
        wakeUp.signal()
    }

    deinit { stop() }

    private func run() {
        while true {
            let now = clock()
            let next: (Pending?, Int64?, Bool) = state.withLock { state in
                if state.stopped { return (nil, nil, true) }
                guard let index = state.pending.indices.min(by: { state.pending[$0].dueAt < state.pending[$1].dueAt }) else {
                    return (nil, nil, false)
                }
                if state.pending[index].dueAt <= now { return (state.pending.remove(at: index), nil, false) }
                return (nil, state.pending[index].dueAt, false)
            }
            if next.2 { return }
            guard let item = next.0 else {
                // Bounded wait: at most a second, so a lost signal costs at most that.
                let wait = min(1000, max(1, (next.1 ?? (now + 1000)) - now))
                wakeUp.wait(milliseconds: wait)
                continue
            }
            process(item)
        }
    }

    private func process(_ item: Pending) {
        var item = item
        let job = item.job
        var outcome: PushOutcome
        var status: Int?
        if clock() >= job.deadline {
            onEvent(.finished(job, outcome: .rejected(reason: "ring deadline passed"), attempts: item.attempt - 1))
            return
        }
        onEvent(.attempt(job, attempt: item.attempt))
        do {
            let request = try buildRequest(job)
            let response = try client.send(request.request)
            status = response.status
            outcome = PushOutcome(provider: request.provider, response: response, now: clock())
            if case .authRefused = outcome { invalidateToken(job.credentials) }
        } catch {
            switch error.kind {
            case .transport: outcome = .retryable(reason: error.detail, retryAfter: nil)
            case .badResponse: outcome = .retryable(reason: error.detail, retryAfter: nil)
            default: outcome = .rejected(reason: error.description)
            }
        }
        onEvent(.answer(job, attempt: item.attempt, status: status, outcome: outcome))
        if case .badDeviceToken(let reason) = outcome, item.environmentRetried {
            // Refused in both environments: the token itself is bad.
            outcome = .tokenGone(reason: reason + " in both APNs environments")
        }
        let decision = policy.decide(
            after: outcome, attempt: item.attempt, now: clock(), deadline: job.deadline,
            jitter: state.withLock { Double.random(in: 0..<1, using: &$0.random) }, authRetried: item.authRetried, environmentRetried: item.environmentRetried)
        switch decision {
        case .stop:
            onEvent(.finished(job, outcome: outcome, attempts: item.attempt))
        case .retry(let at):
            if case .authRefused = outcome { item.authRetried = true }
            if case .badDeviceToken = outcome {
                item.environmentRetried = true
                item.job.target.environment = job.target.environment == .sandbox ? .production : .sandbox
                onEvent(.environmentSwitched(item.job, from: job.target.environment))
            }
            item.attempt += 1
            item.dueAt = at
            let queued = state.withLock { state in
                guard !state.stopped else { return false }
                state.pending.append(item)
                return true
            }
            if !queued { onEvent(.finished(job, outcome: outcome, attempts: item.attempt - 1)) }
        }
    }

    private func buildRequest(_ job: PushJob) throws(PushError) -> (request: PushRequest, provider: PushOutcome.Provider) {
        let seconds = clock() / 1000
        switch job.credentials {
        case .apns(let credentials):
            let cacheKey = "\(credentials.teamID)/\(credentials.keyID)/\(credentials.privateKeyPEM.hashValue)"
            let token = try state.withLock { state throws(PushError) -> String in
                var provider = state.apnsTokens[cacheKey] ?? APNsProviderToken(credentials: credentials)
                let token = try provider.token(now: seconds)
                state.apnsTokens[cacheKey] = provider
                return token
            }
            let request = PushRequest.apns(
                endpoints: endpoints, environment: job.target.environment, deviceToken: job.target.token,
                appID: job.target.appID, providerToken: token, payloadJWS: job.payloadJWS)
            return (request, .apns)
        case .fcm(let credentials):
            let cacheKey = "\(credentials.clientEmail)/\(credentials.tokenURI)/\(credentials.serviceAccountJSON.hashValue)"
            var access = state.withLock { $0.fcmTokens[cacheKey] } ?? FCMAccessToken(credentials: credentials)
            let token: String
            if let cached = access.cached(now: seconds) {
                token = cached
            } else {
                let response = try client.send(try access.exchangeRequest(now: seconds))
                token = try access.accept(response, now: seconds)
                let updated = access
                state.withLock { $0.fcmTokens[cacheKey] = updated }
            }
            let request = PushRequest.fcm(
                endpoints: endpoints, projectID: credentials.projectID, registrationToken: job.target.token,
                accessToken: token, payloadJWS: job.payloadJWS)
            return (request, .fcm)
        }
    }

    private func invalidateToken(_ credentials: PushProviderCredentials) {
        state.withLock { state in
            switch credentials {
            case .apns(let c): state.apnsTokens["\(c.teamID)/\(c.keyID)/\(c.privateKeyPEM.hashValue)"]?.invalidate()
            case .fcm(let c): state.fcmTokens["\(c.clientEmail)/\(c.tokenURI)/\(c.serviceAccountJSON.hashValue)"]?.invalidate()
            }
        }
    }
}

/// A condition variable with a "signaled" flag, so a signal sent while the thread is busy
/// is not lost. `@unchecked Sendable`: NSCondition is thread-safe; `signaled` is only
/// touched while holding it.
private final class NSConditionBox: @unchecked Sendable {
    private let condition = NSCondition()
    private var signaled = false

    func signal() {
        condition.lock()
        signaled = true
        condition.signal()
        condition.unlock()
    }

    func wait(milliseconds: Int64) {
        condition.lock()
        if !signaled { _ = condition.wait(until: Date(timeIntervalSinceNow: Double(milliseconds) / 1000)) }
        signaled = false
        condition.unlock()
    }
}
