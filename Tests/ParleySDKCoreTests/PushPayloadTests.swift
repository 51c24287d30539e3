@_spi(ParleyEngines) @testable import ParleySDKCore
import Testing

/// `PushPayloadVerifier` against payloads signed outside the SDK (PushFixtures).
@Suite struct PushPayloadTests {
    let verifier = PushPayloadVerifier(applicationKey: "app-1", userID: "alice", deviceID: "dev-1", hmacSHA256: TestEngines.make().hmacSHA256)
    let registration = ParleyPushRegistration(pushType: .apnsVoip, token: "9f1c", environment: .sandbox, appId: "com.example.chat",
                                              pushKey: PushFixtures.key, userId: "alice", deviceId: "dev-1")
    let during: Int64 = 1_764_421_210_000

    func check(_ token: String, now: Int64? = nil, registration: ParleyPushRegistration?? = nil) -> PushPayloadVerifier.Verdict {
        verifier.verify(["parley": token, "aps": ["content-available": 1]], registration: registration ?? self.registration,
                        nowMilliseconds: now ?? during)
    }

    @Test func validPayloadGivesTheCall() {
        let verdict = check(PushFixtures.valid)
        #expect(verdict.result.isCall && verdict.result.isValid, "\(verdict.problem ?? "")")
        #expect(verdict.result.callResult == ParleyCallNotificationResult(
            callId: "6f1c2a9e-3b7d-4c55-9a41-0e8f5d2b7c13", remoteUserId: "bob", isVideoOffered: false,
            isTimedOut: false, headers: ["topic": "billing"]))
        #expect(verdict.token == PushFixtures.valid)
    }

    @Test func theCallersDisplayNameIsRead() {
        let verdict = check(PushFixtures.named)
        #expect(verdict.result.isValid, "\(verdict.problem ?? "")")
        #expect(verdict.result.callResult?.displayName == "Bob Ödman")
        #expect(check(PushFixtures.valid).result.callResult?.displayName == nil, "no name claim, no name")
        for token in [PushFixtures.numericName, PushFixtures.longName] {
            let bad = check(token)
            #expect(!bad.result.isValid && bad.result.callResult == nil)
            #expect(bad.problem?.contains("claim name") == true, "\(bad.problem ?? "")")
        }
    }

    @Test func forgedAndTamperedPayloadsAreInvalid() {
        for token in [PushFixtures.forged, PushFixtures.tampered] {
            let verdict = check(token)
            #expect(verdict.result.isCall && !verdict.result.isValid && verdict.result.callResult == nil)
            #expect(verdict.problem?.contains("signature") == true)
        }
    }

    @Test func expiredPayloadIsInvalidButTimedOut() {
        let verdict = check(PushFixtures.valid, now: 1_764_421_230_000)
        #expect(verdict.result.isCall && !verdict.result.isValid)
        #expect(verdict.result.callResult?.isTimedOut == true)
        #expect(verdict.problem?.contains("expired") == true)
    }

    @Test func foreignOrMalformedPayloadsAreInvalid() {
        let cases: [(String, String)] = [
            (PushFixtures.otherDevice, "another device"),
            (PushFixtures.otherApp, "another application"),
            (PushFixtures.badType, "header"),
            (PushFixtures.duplicateKey, "duplicate"),
            (PushFixtures.numberAsBool, "video"),
            ("a.b", "compact JWS"),
            ("..", "compact JWS"),
            ("e30.e30.!!!", "Base64"),
            (String(repeating: "a", count: 5000), "bytes"),
        ]
        for (token, problem) in cases {
            let verdict = check(token)
            #expect(!verdict.result.isValid && verdict.result.callResult == nil, "\(problem)")
            #expect(verdict.problem?.contains(problem) == true, "expected '\(problem)', got \(verdict.problem ?? "nil")")
        }
    }

    @Test func withoutOrWithAnotherRegistrationNothingVerifies() {
        #expect(check(PushFixtures.valid, registration: .some(nil)).problem?.contains("no push registration") == true)
        var other = registration
        other.userId = "carol"
        #expect(check(PushFixtures.valid, registration: other).result.isValid == false)
        other = registration
        other.pushKey = "AQID"
        #expect(check(PushFixtures.valid, registration: other).problem?.contains("32 bytes") == true)
    }

    @Test func nonParleyPushIsNotACall() {
        let verdict = verifier.verify(["aps": ["alert": "hi"]], registration: registration, nowMilliseconds: during)
        #expect(!verdict.result.isCall && !verdict.result.isValid)
        let wrongType = verifier.verify(["parley": 42], registration: registration, nowMilliseconds: during)
        #expect(!wrongType.result.isCall)
    }

    /// Before any client exists: the device the push names is looked up and the push
    /// verified with its registration; without one, nothing unverified comes back.
    @Test func aPushIsQueriedBeforeAnyClientExists() {
        let hmac = TestEngines.make().hmacSHA256
        let stored = InMemoryPushRegistrationStore()
        stored.save(registration)
        var asked: [String] = []
        let found = ParleyClient.queryPushNotificationPayload(["parley": PushFixtures.valid], hmacSHA256: hmac,
                                                              store: { asked.append($0); return stored }, nowMilliseconds: during)
        #expect(asked == ["dev-1"], "the store of the device the push names")
        #expect(found.isCall && found.isValid && found.callResult?.remoteUserId == "bob")
        let forged = ParleyClient.queryPushNotificationPayload(["parley": PushFixtures.forged], hmacSHA256: hmac,
                                                               store: { _ in stored }, nowMilliseconds: during)
        #expect(forged.isCall && !forged.isValid && forged.callResult == nil)
        let unknown = ParleyClient.queryPushNotificationPayload(["parley": PushFixtures.valid], hmacSHA256: hmac,
                                                                store: { _ in InMemoryPushRegistrationStore() }, nowMilliseconds: during)
        #expect(unknown.isCall && !unknown.isValid && unknown.callResult == nil)
        let other = ParleyClient.queryPushNotificationPayload(["aps": ["alert": "hi"]], hmacSHA256: hmac,
                                                              store: { _ in stored }, nowMilliseconds: during)
        #expect(!other.isCall)
        let garbage = ParleyClient.queryPushNotificationPayload(["parley": "a.%%%.c"], hmacSHA256: hmac,
                                                                store: { _ in stored }, nowMilliseconds: during)
        #expect(garbage.isCall && !garbage.isValid)
    }
}
