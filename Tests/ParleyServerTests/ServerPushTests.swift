import Foundation
import ParleyCallCore
import ParleyPush
import ParleyPushTestSupport
import ParleyServer
import ParleySignaling
import ParleyStore
import ParleyWireCore
import Testing

/// Push against a real server and the provider emulator (docs/push.md): the callee's only
/// device is offline with an APNs VoIP token.
@Suite(.serialized) struct ServerPushTests {
    let emulator: ProviderEmulator
    let harness: ServerHarness
    static let apnsToken = "9f1c5e2a7b3d4c6e8f0a1b2c3d4e5f60718293a4b5c6d7e8f9012a3b4c5d6e7f"

    init() throws {
        let emulator = try ProviderEmulator()
        self.emulator = emulator
        harness = try ServerHarness { configuration in
            // Two APNs environments, so a token's environment is checked as Apple does.
            configuration.pushEndpoints = emulator.endpointsWithSandbox
            configuration.pushCAFile = emulator.caFile
            configuration.pushRetryPolicy = PushRetryPolicy(maxAttempts: 4, baseDelayMilliseconds: 50, maxDelayMilliseconds: 200)
            // Long enough for a retried push under a fully loaded machine: each attempt is
            // a TLS and HTTP/2 exchange with the Python emulator, and a push job gives up
            // at the ring deadline ("ring deadline passed"), which made a 4 s ring flaky.
            configuration.ringTimeout = .seconds(10)
        }
        let application = harness.application
        let settings = emulator.apns.settingsJSON
        try harness.query { (store) throws(StoreError) in
            try store.setPushCredentials(StoredPushCredentials(applicationKey: application.key, provider: .apns, settings: settings, updatedTime: 1))
        }
    }

    /// Bob registers his token, then goes offline; returns the push key the server made.
    private func registerOfflineBob() throws -> [UInt8] {
        let bob = try harness.device("bob", deviceID: "bob-phone")
        try bob.send(.pushRegister(.init(requestID: "reg", pushType: .apnsVoip, token: Self.apnsToken, environment: .sandbox, appID: "com.example.chat")))
        guard case .result(let reply) = try bob.expect(.result) else { throw TestFailure("no result") }
        #expect(reply.replyTo == "reg")
        let key = try Base64.decodeURL(try #require(reply.pushKey))
        #expect(key.count == 32)
        bob.close()
        try waitFor("bob's disconnect") { harness.log.contains("ws.close") }
        return key
    }

    private func waitFor(_ what: String, seconds: Double = 8, _ condition: () throws -> Bool) throws {
        let deadline = Date(timeIntervalSinceNow: seconds)
        while Date() < deadline {
            if try condition() { return }
            Thread.sleep(forTimeInterval: 0.02)
        }
        let pushLines = harness.log.split(separator: "\n").filter { $0.contains("push.") }.joined(separator: "\n")
        throw TestFailure("timed out waiting for \(what); the server's push log:\n\(pushLines)")
    }

    private func pushRequests() throws -> [[String: Any]] {
        try emulator.requests().filter { $0["provider"] as? String == "apns" }
    }

    /// The JWS of the n-th push the emulator received.
    private func payload(ofPush index: Int) throws -> String {
        let body = try #require(try pushRequests()[index]["body"] as? String)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: String])
        return try #require(object["parley"])
    }

    @Test func offlineCalleeGetsAVoIPPushWithTheRightHeadersAndAValidToken() throws {
        let key = try registerOfflineBob()
        let alice = try harness.device("alice")
        let callID = try alice.startCall(to: "bob", sdp: try SDPPeer.offer())
        try waitFor("the push") { try !pushRequests().isEmpty }
        let request = try pushRequests()[0]
        #expect(request["status"] as? Int == 200)
        #expect(request["path"] as? String == "/3/device/" + Self.apnsToken)
        #expect(request["environment"] as? String == "sandbox")
        let headers = request["headers"] as? [String: String] ?? [:]
        #expect(headers["apns-push-type"] == "voip")
        #expect(headers["apns-topic"] == "com.example.chat.voip")
        #expect(headers["apns-priority"] == "10")
        #expect(headers["apns-expiration"] == "0")
        #expect((request["jwtClaims"] as? [String: Any])?["iss"] as? String == emulator.apns.teamID)
        let claims = try PushPayload.verified(try payload(ofPush: 0), pushKey: key, now: Int64(Date().timeIntervalSince1970 * 1000))
        #expect(claims.callID == callID)
        #expect(claims.from == .user("alice"))
        #expect(claims.deviceID == "bob-phone")
        #expect(claims.appKey == harness.application.key)
        #expect(claims.headers == ["X-Test": "1"])
        #expect(claims.expiresAt - claims.issuedAt == 10_000)
        try waitFor("the push log") { harness.log.contains("push.answer call=\(callID)") || harness.log.contains("push.answer call=\"\(callID)\"") }
        #expect(harness.log.contains("push.attempt"))
    }

    @Test func relayingThePayloadRingsTheCallerAndDeliversTheCall() throws {
        _ = try registerOfflineBob()
        let alice = try harness.device("alice")
        let callID = try alice.startCall(to: "bob", sdp: try SDPPeer.offer())
        _ = try alice.expect(.callMedia)
        _ = try alice.expect(.callProgress)
        try waitFor("the push") { try !pushRequests().isEmpty }
        let jws = try payload(ofPush: 0)

        let bob = try harness.device("bob", deviceID: "bob-phone")
        try bob.send(.pushRelay(.init(requestID: "relay", payload: jws)))
        let reply = try bob.expect(.result)
        #expect(reply.replyTo == "relay")
        guard case .callIncoming(let incoming) = try bob.expect(.callIncoming) else { throw TestFailure("no call.incoming") }
        #expect(incoming.callID == callID && incoming.from == .user("alice"))
        _ = try alice.expect(.callRinging)
        try bob.answer(callID: callID, sdp: try SDPPeer.answer(to: incoming.sdp))
        _ = try alice.expect(.callAnswered)
        #expect(try harness.waitForStoredCall(callID) { $0.details.answeredTime != nil }?.details.answeredTime != nil)
        let kinds = try timeline(callID, until: { $0.contains { $0.kind == "push.relayed" } }).map(\.kind)
        #expect(kinds == ["push.sent", "push.answer", "push.relayed"])
    }

    /// The call's timeline once `done` holds for it (bounded by `waitFor`).
    private func timeline(_ callID: String, until done: ([CallEvent]) -> Bool) throws -> [CallEvent] {
        let application = harness.application
        var events: [CallEvent] = []
        try waitFor("the timeline of \(callID)") {
            events = try harness.query { (store) throws(StoreError) in try store.callEvents(callId: callID, applicationKey: application.key) }
            return done(events)
        }
        return events
    }

    @Test func callerCancelsDuringThePushAndALateRelayEndsCanceled() throws {
        _ = try registerOfflineBob()
        let alice = try harness.device("alice")
        let callID = try alice.startCall(to: "bob", sdp: try SDPPeer.offer())
        _ = try alice.expect(.callMedia)
        _ = try alice.expect(.callProgress)
        try waitFor("the push") { try !pushRequests().isEmpty }
        try alice.request({ .callHangup($0) }, callID: callID)
        #expect(try alice.expectEnded(callID).cause == "canceled")

        let bob = try harness.device("bob", deviceID: "bob-phone")
        try bob.send(.pushRelay(.init(requestID: "late", payload: try payload(ofPush: 0))))
        _ = try bob.expect(.result)
        #expect(try bob.expectEnded(callID).cause == "canceled")
    }

    @Test func forgedOrForeignPayloadsAreRefused() throws {
        _ = try registerOfflineBob()
        let alice = try harness.device("alice")
        _ = try alice.startCall(to: "bob", sdp: try SDPPeer.offer())
        try waitFor("the push") { try !pushRequests().isEmpty }
        let jws = try payload(ofPush: 0)
        let bob = try harness.device("bob", deviceID: "bob-phone")
        var forged = Array(jws.utf8)
        forged[forged.count - 3] = forged[forged.count - 3] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        try bob.send(.pushRelay(.init(requestID: "forged", payload: String(decoding: forged, as: UTF8.self))))
        guard case .error(let error) = try bob.expect(.error) else { throw TestFailure("no error") }
        #expect(error.code == .pushPayloadInvalid)
        // The right payload from another device of the same user is refused too.
        let tablet = try harness.device("bob", deviceID: "bob-tablet")
        try tablet.send(.pushRelay(.init(requestID: "other", payload: jws)))
        guard case .error(let other) = try tablet.expect(.error) else { throw TestFailure("no error") }
        #expect(other.code == .pushPayloadInvalid)
    }

    @Test func unregisteredAnswerRemovesTheTokenAndTheCallEndsNoAnswer() throws {
        _ = try registerOfflineBob()
        try emulator.script(apns: [410])
        let alice = try harness.device("alice")
        let application = harness.application
        let callID = try alice.startCall(to: "bob", sdp: try SDPPeer.offer())
        try waitFor("the token's removal") {
            try harness.query { (store) throws(StoreError) in try store.pushRegistrations(applicationKey: application.key, userId: "bob") }.isEmpty
        }
        // The coordinator logs the removal after the store's commit, on its own queue.
        try waitFor("the removal's log line") { harness.log.contains("push.token.removed") }
        #expect(try pushRequests().count == 1)
        let removal = try timeline(callID, until: { $0.contains { $0.kind == "push.token_removed" } })
        #expect(removal.map(\.kind) == ["push.sent", "push.answer", "push.token_removed"])
        #expect(removal[1].detail["status"] == "410" && removal[1].detail["outcome"] == "token_gone")
        #expect(removal[2].detail["ok"] == "true" && removal[2].detail["device"] == "bob-phone")
        _ = try alice.expect(.callMedia)
        _ = try alice.expect(.callProgress)
        #expect(try alice.expectEnded(callID, timeout: .seconds(16)).cause == "noAnswer")
        // Without a token Bob is unavailable now.
        let next = try alice.startCall(to: "bob", sdp: try SDPPeer.offer())
        let ended = try alice.expectEnded(next)
        #expect(ended.code == "destination_unavailable")
    }

    @Test func aTokenRegisteredWithTheWrongEnvironmentIsKeptAndReachedInTheOther() throws {
        // Bob's app registered a production token as sandbox: Apple's sandbox answers
        // BadDeviceToken, production takes it.
        _ = try registerOfflineBob()
        try emulator.knownAPNsTokens(production: [Self.apnsToken], sandbox: [])
        let alice = try harness.device("alice")
        let application = harness.application
        let callID = try alice.startCall(to: "bob", sdp: try SDPPeer.offer())
        let events = try timeline(callID, until: { $0.filter { $0.kind == "push.answer" }.count >= 2 })
        #expect(events.map(\.kind) == ["push.sent", "push.answer", "push.environment_switched", "push.retry", "push.answer"])
        #expect(events[1].detail["status"] == "400" && events[1].detail["outcome"] == "bad_device_token")
        #expect(events[2].detail["registered"] == "sandbox" && events[2].detail["trying"] == "production")
        #expect(events[4].detail["status"] == "200" && events[4].detail["outcome"] == "delivered")
        #expect(try pushRequests().compactMap { $0["environment"] as? String } == ["sandbox", "production"])
        try waitFor("the push outcome") { harness.log.contains("outcome=delivered") }
        #expect(harness.log.contains("push.environment"))
        #expect(!harness.log.contains("push.token.removed"))
        let kept = try harness.query { (store) throws(StoreError) in try store.pushRegistrations(applicationKey: application.key, userId: "bob") }
        #expect(kept.map(\.token) == [Self.apnsToken])
    }

    @Test func aTokenBothEnvironmentsRefuseIsRemoved() throws {
        _ = try registerOfflineBob()
        try emulator.knownAPNsTokens(production: [], sandbox: [])
        let alice = try harness.device("alice")
        let application = harness.application
        let callID = try alice.startCall(to: "bob", sdp: try SDPPeer.offer())
        let events = try timeline(callID, until: { $0.contains { $0.kind == "push.token_removed" } })
        #expect(events.map(\.kind) == ["push.sent", "push.answer", "push.environment_switched", "push.retry", "push.answer", "push.token_removed"])
        #expect(events[4].detail["outcome"] == "bad_device_token")
        #expect(try harness.query { (store) throws(StoreError) in try store.pushRegistrations(applicationKey: application.key, userId: "bob") }.isEmpty)
        _ = try alice.expect(.callMedia)
        _ = try alice.expect(.callProgress)
        #expect(try alice.expectEnded(callID, timeout: .seconds(16)).cause == "noAnswer")
    }

    @Test func serviceUnavailableIsRetriedUntilDelivered() throws {
        _ = try registerOfflineBob()
        try emulator.script(apns: [503])
        let alice = try harness.device("alice")
        let callID = try alice.startCall(to: "bob", sdp: try SDPPeer.offer())
        try waitFor("the retried push") { try pushRequests().count >= 2 }
        #expect(try pushRequests().compactMap { $0["status"] as? Int } == [503, 200])
        try waitFor("the push outcome") { harness.log.contains("outcome=delivered") && harness.log.contains("attempts=2") }
        let answers = harness.log.split(separator: "\n").filter { $0.contains("push.answer") && $0.contains(callID) }
        #expect(answers.count == 2)
        // The call's timeline holds every attempt and answer, in order.
        let application = harness.application
        var timeline: [CallEvent] = []
        try waitFor("the timeline") {
            timeline = try harness.query { (store) throws(StoreError) in try store.callEvents(callId: callID, applicationKey: application.key) }
            return timeline.count >= 4
        }
        #expect(timeline.map(\.kind) == ["push.sent", "push.answer", "push.retry", "push.answer"])
        #expect(timeline.map { $0.detail["status"] } == [nil, "503", nil, "200"])
        #expect(timeline[1].detail["outcome"] == "retryable")
        #expect(timeline[3].detail["outcome"] == "delivered")
        #expect(timeline[2].detail["attempt"] == "2" && timeline[0].detail["device"] == "bob-phone")
        #expect(zip(timeline, timeline.dropFirst()).allSatisfy { $0.time <= $1.time })
    }

    @Test func fcmDeviceGetsAHighPriorityDataMessageAfterOneTokenExchange() throws {
        let application = harness.application
        let account = emulator.fcm.serviceAccountJSON
        try harness.query { (store) throws(StoreError) in
            try store.setPushCredentials(StoredPushCredentials(applicationKey: application.key, provider: .fcm, settings: account, updatedTime: 2))
        }
        let android = try harness.device("bob", deviceID: "bob-android")
        try android.send(.pushRegister(.init(requestID: "reg", pushType: .fcm, token: "fQ3x9kL2TzW:APA91b", appID: "com.example.chat")))
        guard case .result(let reply) = try android.expect(.result) else { throw TestFailure("no result") }
        let key = try Base64.decodeURL(try #require(reply.pushKey))
        android.close()
        try waitFor("the disconnect") { harness.log.contains("ws.close") }
        let alice = try harness.device("alice")
        var calls: [String] = []
        for _ in 0..<2 {
            let callID = try alice.startCall(to: "bob", sdp: try SDPPeer.offer())
            calls.append(callID)
            _ = try alice.expect(.callMedia)
            _ = try alice.expect(.callProgress)
            try waitFor("the FCM push") { try emulator.requests().filter { $0["provider"] as? String == "fcm" }.count == calls.count }
            try alice.request({ .callHangup($0) }, callID: callID)
            #expect(try alice.expectEnded(callID).cause == "canceled")
        }
        let requests = try emulator.requests()
        #expect(requests.filter { $0["provider"] as? String == "oauth" }.count == 1, "the access token is cached")
        let sends = requests.filter { $0["provider"] as? String == "fcm" }
        #expect(sends.allSatisfy { $0["status"] as? Int == 200 })
        #expect(sends.first?["path"] as? String == "/v1/projects/\(emulator.projectID)/messages:send")
        let body = try #require(sends.first?["body"] as? String)
        let message = try #require((try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])?["message"] as? [String: Any])
        #expect(message["token"] as? String == "fQ3x9kL2TzW:APA91b")
        #expect((message["android"] as? [String: String]) == ["priority": "HIGH", "ttl": "0s"])
        let jws = try #require((message["data"] as? [String: String])?["parley"])
        let claims = try PushPayload.verified(jws, pushKey: key, now: Int64(Date().timeIntervalSince1970 * 1000))
        #expect(claims.callID == calls[0] && claims.deviceID == "bob-android")
    }

    @Test func unregisterRemovesTheTokens() throws {
        let bob = try harness.device("bob", deviceID: "bob-phone")
        try bob.send(.pushRegister(.init(requestID: "reg", pushType: .apnsVoip, token: Self.apnsToken, environment: .sandbox, appID: "com.example.chat")))
        _ = try bob.expect(.result)
        try bob.send(.pushUnregister(.init(requestID: "unreg")))
        #expect(try bob.expect(.result).replyTo == "unreg")
        let application = harness.application
        #expect(try harness.query { (store) throws(StoreError) in try store.pushRegistrations(applicationKey: application.key, userId: "bob") }.isEmpty)
    }
}
