import Testing
import Foundation
import Synchronization
import ParleyPush
import ParleyPushTestSupport
import ParleyCrypto
import ParleyWireCore

/// Collects a sender's events and waits for a number of `finished` ones (bounded in time).
final class EventLog: Sendable {
    private let events = Mutex<[(at: ContinuousClock.Instant, wallMilliseconds: Int64, event: PushEvent)]>([])

    func append(_ event: PushEvent) { events.withLock { $0.append((ContinuousClock.now, now(), event)) } }

    /// When (ms since the epoch, the sender's clock) attempt `attempt` was reported.
    func wallTime(ofAttempt attempt: Int) -> Int64? {
        events.withLock { $0 }.first(where: { if case .attempt(_, attempt) = $0.event { true } else { false } })?.wallMilliseconds
    }

    var all: [PushEvent] { events.withLock { $0.map(\.event) } }

    /// The time from the answer to attempt `attempt` until attempt `attempt + 1` left.
    func gap(afterAnswerTo attempt: Int) -> Duration? {
        let timed = events.withLock { $0 }
        guard let answered = timed.first(where: { if case .answer(_, attempt, _, _) = $0.event { true } else { false } })?.at,
              let next = timed.first(where: { if case .attempt(_, attempt + 1) = $0.event { true } else { false } })?.at
        else { return nil }
        return next - answered
    }

    func finished() -> [(PushJob, PushOutcome, Int)] {
        all.compactMap { if case .finished(let job, let outcome, let attempts) = $0 { (job, outcome, attempts) } else { nil } }
    }

    func waitForFinished(_ count: Int, seconds: Double = 15) async throws -> [(PushJob, PushOutcome, Int)] {
        let deadline = Date(timeIntervalSinceNow: seconds)
        while finished().count < count, Date() < deadline { try await Task.sleep(for: .milliseconds(10)) }
        return finished()
    }
}

private func now() -> Int64 { Int64(Date().timeIntervalSince1970 * 1000) }

@Suite(.serialized) struct PushSenderEmulatorTests {
    let emulator: ProviderEmulator
    init() throws { emulator = try ProviderEmulator() }

    private func sender(_ log: EventLog, policy: PushRetryPolicy = PushRetryPolicy(baseDelayMilliseconds: 20)) throws -> PushSender {
        try PushSender(endpoints: emulator.endpoints, policy: policy, timeoutMilliseconds: 5_000, caFile: emulator.caFile) { log.append($0) }
    }

    private func apnsJob(_ token: String = "9f1c5e2a7b3d4c6e", call: String = "call-1") -> PushJob {
        PushJob(callID: call, target: PushTarget(pushType: .apnsVoip, token: token, environment: .sandbox, appID: "com.example.chat", deviceID: "ios-1"),
                credentials: .apns(emulator.apns), payloadJWS: "h.c.s", deadline: now() + 30_000)
    }

    private func fcmJob(call: String = "call-2") -> PushJob {
        PushJob(callID: call, target: PushTarget(pushType: .fcm, token: "fQ3x9kL2TzW:APA91b", environment: .production, appID: "com.example.chat", deviceID: "android-1"),
                credentials: .fcm(emulator.fcm), payloadJWS: "h.c.s", deadline: now() + 30_000)
    }

    @Test func apnsPushIsDeliveredOverHTTP2WithAValidProviderToken() async throws {
        let log = EventLog()
        let sender = try sender(log)
        defer { sender.stop() }
        sender.send(apnsJob())
        sender.send(apnsJob("aa", call: "call-1b"))
        let finished = try await log.waitForFinished(2)
        #expect(finished.count == 2)
        #expect(finished.allSatisfy { $0.1 == .delivered && $0.2 == 1 })
        let requests = try emulator.requests()
        #expect(requests.count == 2)
        let first = try #require(requests.first)
        #expect(first["status"] as? Int == 200)
        #expect(first["path"] as? String == "/3/device/9f1c5e2a7b3d4c6e")
        let headers = first["headers"] as? [String: String] ?? [:]
        #expect(headers["apns-push-type"] == "voip" && headers["apns-topic"] == "com.example.chat.voip")
        #expect(headers["apns-priority"] == "10" && headers["apns-expiration"] == "0")
        #expect(first["body"] as? String == #"{"parley":"h.c.s"}"#)
        #expect((first["jwtClaims"] as? [String: Any])?["iss"] as? String == "TEAM123456")
        // The provider token is cached: both pushes carry the same one.
        #expect(Set(requests.compactMap { ($0["headers"] as? [String: String])?["authorization"] }).count == 1)
    }

    @Test func unregisteredTokenEndsAsTokenGone() async throws {
        try emulator.script(apns: [410])
        let log = EventLog()
        let sender = try sender(log)
        defer { sender.stop() }
        sender.send(apnsJob())
        let finished = try await log.waitForFinished(1)
        #expect(finished.first?.1 == .tokenGone(reason: "Unregistered"))
        #expect(finished.first?.2 == 1)
    }

    @Test func serviceUnavailableIsRetriedThenDelivered() async throws {
        try emulator.script(apns: [503, 429])
        let log = EventLog()
        let sender = try sender(log)
        defer { sender.stop() }
        sender.send(apnsJob())
        let finished = try await log.waitForFinished(1)
        #expect(finished.first?.1 == .delivered)
        #expect(finished.first?.2 == 3)
        let statuses = log.all.compactMap { if case .answer(_, _, let status, _) = $0 { status } else { nil } }
        #expect(statuses == [503, 429, 200])
    }

    @Test func retriesStopAtMaxAttempts() async throws {
        try emulator.script(apns: [503, 503, 503])
        let log = EventLog()
        let sender = try sender(log, policy: PushRetryPolicy(maxAttempts: 2, baseDelayMilliseconds: 10))
        defer { sender.stop() }
        sender.send(apnsJob())
        let finished = try await log.waitForFinished(1)
        #expect(finished.first?.1 == .retryable(reason: "ServiceUnavailable", retryAfter: nil))
        #expect(finished.first?.2 == 2)
    }

    @Test func fcmExchangesTheServiceAccountJWTOnceAndSends() async throws {
        let log = EventLog()
        let sender = try sender(log)
        defer { sender.stop() }
        sender.send(fcmJob())
        sender.send(fcmJob(call: "call-3"))
        let finished = try await log.waitForFinished(2)
        #expect(finished.count == 2 && finished.allSatisfy { $0.1 == .delivered })
        let requests = try emulator.requests()
        #expect(requests.filter { $0["provider"] as? String == "oauth" }.count == 1)
        let sends = requests.filter { $0["provider"] as? String == "fcm" }
        #expect(sends.count == 2)
        #expect(sends.first?["body"] as? String == #"{"message":{"token":"fQ3x9kL2TzW:APA91b","android":{"priority":"HIGH","ttl":"0s"},"data":{"parley":"h.c.s"}}}"#)
    }

    @Test func fcmUnregisteredAndUnavailable() async throws {
        try emulator.script(fcm: [503, 404])
        let log = EventLog()
        let sender = try sender(log)
        defer { sender.stop() }
        sender.send(fcmJob())
        let finished = try await log.waitForFinished(1)
        #expect(finished.first?.1 == .tokenGone(reason: "UNREGISTERED"))
        #expect(finished.first?.2 == 2)
    }

    @Test func aForeignAPNsKeyIsRefused() async throws {
        let log = EventLog()
        let sender = try sender(log)
        defer { sender.stop() }
        var job = apnsJob()
        job.credentials = .apns(try APNsCredentials(teamID: "TEAM123456", keyID: "KEY1234567", privateKeyPEM: try ES256Key.generate().privateKeyPEM()))
        sender.send(job)
        let finished = try await log.waitForFinished(1)
        // 403 InvalidProviderToken: a new token is made once, refused again, then it stops.
        #expect(finished.first?.1 == .authRefused(reason: "InvalidProviderToken"))
        #expect(finished.first?.2 == 2)
    }

    @Test func anUnreachableProviderIsATransportRetryThenStops() async throws {
        let log = EventLog()
        let sender = try PushSender(endpoints: .emulator("https://127.0.0.1:9"), policy: PushRetryPolicy(maxAttempts: 2, baseDelayMilliseconds: 10),
                                    timeoutMilliseconds: 2_000) { log.append($0) }
        defer { sender.stop() }
        sender.send(apnsJob())
        let finished = try await log.waitForFinished(1)
        if case .retryable = finished.first?.1 {} else { Issue.record("expected a transport retry, got \(String(describing: finished.first?.1))") }
        #expect(finished.first?.2 == 2)
    }

    // MARK: Retry-After (issue 14 item 11)

    @Test func apnsRetryAfterSecondsIsWaitedAtLeast() async throws {
        try emulator.script(apnsAnswers: [.init(429, reason: "TooManyRequests", retryAfter: "1")])
        let log = EventLog()
        let sender = try sender(log)
        defer { sender.stop() }
        sender.send(apnsJob())
        let finished = try await log.waitForFinished(1)
        #expect(finished.first?.1 == .delivered)
        #expect(finished.first?.2 == 2)
        let gap = try #require(log.gap(afterAnswerTo: 1))
        // The backoff alone would be 10-20 ms here (base 20 ms); Retry-After says 1 s.
        #expect(gap >= .milliseconds(990), "retried \(gap) after Retry-After: 1")
        #expect(gap < .seconds(3))
    }

    @Test func fcmRetryAfterAsAnHTTPDateIsWaitedAtLeast() async throws {
        // Two seconds ahead, whole seconds as an HTTP date has: the retry may not leave
        // before that second begins.
        let notBefore = (now() / 1000 + 2) * 1000
        try emulator.script(fcmAnswers: [.init(503, retryAfter: HTTPDateText.imfFixdate(unixSeconds: notBefore / 1000))])
        let log = EventLog()
        let sender = try sender(log)
        defer { sender.stop() }
        sender.send(fcmJob())
        let finished = try await log.waitForFinished(1)
        #expect(finished.first?.1 == .delivered)
        let requests = try emulator.requests().filter { $0["provider"] as? String == "fcm" }
        #expect(requests.count == 2)
        // The sender reads the same wall clock: the retry leaves at or after the date.
        let second = try #require(log.wallTime(ofAttempt: 2))
        #expect(second >= notBefore, "retried \(notBefore - second) ms before the Retry-After date")
    }

    @Test func aRetryAfterPastTheRingDeadlineStopsWithoutAnotherAttempt() async throws {
        try emulator.script(apnsAnswers: [.init(503, reason: "ServiceUnavailable", retryAfter: "60")])
        let log = EventLog()
        let sender = try sender(log)
        defer { sender.stop() }
        var job = apnsJob()
        job.deadline = now() + 10_000
        sender.send(job)
        let finished = try await log.waitForFinished(1)
        #expect(finished.first?.1 == .retryable(reason: "ServiceUnavailable", retryAfter: 60))
        #expect(finished.first?.2 == 1)
        #expect(try emulator.requests().filter { $0["provider"] as? String == "apns" }.count == 1)
    }

    // MARK: APNs environments (issue 14 item 11)

    private func sandboxSender(_ log: EventLog, policy: PushRetryPolicy = PushRetryPolicy(baseDelayMilliseconds: 20)) throws -> PushSender {
        try PushSender(endpoints: emulator.endpointsWithSandbox, policy: policy, timeoutMilliseconds: 5_000, caFile: emulator.caFile) { log.append($0) }
    }

    private func apnsEnvironments() throws -> [String] {
        try emulator.requests().filter { $0["provider"] as? String == "apns" }.compactMap { $0["environment"] as? String }
    }

    @Test func aTokenRegisteredWithTheWrongEnvironmentIsDeliveredInTheOtherAndKept() async throws {
        // A production token the app registered as sandbox: Apple's sandbox says BadDeviceToken.
        try emulator.knownAPNsTokens(production: ["9f1c5e2a7b3d4c6e"], sandbox: [])
        let log = EventLog()
        let sender = try sandboxSender(log)
        defer { sender.stop() }
        sender.send(apnsJob())
        let finished = try await log.waitForFinished(1)
        #expect(finished.first?.1 == .delivered)
        #expect(finished.first?.2 == 2)
        #expect(try apnsEnvironments() == ["sandbox", "production"])
        let switched = log.all.compactMap { if case .environmentSwitched(let job, let from) = $0 { (job.target.environment, from) } else { nil } }
        #expect(switched.count == 1 && switched.first?.0 == .production && switched.first?.1 == .sandbox)
        let outcomes = log.all.compactMap { if case .answer(_, _, let status, let outcome) = $0 { "\(status ?? 0) \(outcome.label)" } else { nil } }
        #expect(outcomes == ["400 bad_device_token", "200 delivered"])
    }

    @Test func aTokenBothEnvironmentsRefuseIsGone() async throws {
        try emulator.knownAPNsTokens(production: [], sandbox: [])
        let log = EventLog()
        let sender = try sandboxSender(log)
        defer { sender.stop() }
        var job = apnsJob()
        job.target.environment = .production
        sender.send(job)
        let finished = try await log.waitForFinished(1)
        #expect(finished.first?.1 == .tokenGone(reason: "BadDeviceToken in both APNs environments"))
        #expect(finished.first?.2 == 2)
        #expect(try apnsEnvironments() == ["production", "sandbox"])
    }

    @Test func aBadDeviceTokenWithNoAttemptLeftIsNotGone() async throws {
        try emulator.knownAPNsTokens(production: [], sandbox: [])
        let log = EventLog()
        let sender = try sandboxSender(log, policy: PushRetryPolicy(maxAttempts: 1))
        defer { sender.stop() }
        sender.send(apnsJob())
        let finished = try await log.waitForFinished(1)
        // One environment's word is not enough to delete a token.
        #expect(finished.first?.1 == .badDeviceToken(reason: "BadDeviceToken"))
        #expect(try apnsEnvironments() == ["sandbox"])
    }

    @Test func expiredTokenIsGone() async throws {
        try emulator.script(apnsAnswers: [.init(410, reason: "ExpiredToken")])
        let log = EventLog()
        let sender = try sender(log)
        defer { sender.stop() }
        sender.send(apnsJob())
        let finished = try await log.waitForFinished(1)
        #expect(finished.first?.1 == .tokenGone(reason: "ExpiredToken"))
        #expect(finished.first?.2 == 1)
    }
}


/// HTTP dates made with Foundation's formatter, independent of the parser under test.
enum HTTPDateText {
    static func imfFixdate(unixSeconds: Int64) -> String { format(unixSeconds, "EEE, dd MMM yyyy HH:mm:ss 'GMT'") }
    static func rfc850(unixSeconds: Int64) -> String { format(unixSeconds, "EEEE, dd-MMM-yy HH:mm:ss 'GMT'") }
    static func asctime(unixSeconds: Int64) -> String {
        // asctime pads a one-digit day with a space: "Sun Nov  6 08:49:37 1994".
        let day = Calendar(identifier: .gregorian).dateComponents(in: TimeZone(identifier: "GMT")!, from: Date(timeIntervalSince1970: TimeInterval(unixSeconds))).day ?? 0
        return format(unixSeconds, day < 10 ? "EEE MMM  d HH:mm:ss yyyy" : "EEE MMM d HH:mm:ss yyyy")
    }

    private static func format(_ seconds: Int64, _ pattern: String) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = pattern
        return formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds)))
    }
}