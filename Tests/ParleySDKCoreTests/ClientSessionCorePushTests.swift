import Foundation
@_spi(ParleyEngines) @testable import ParleySDKCore
import ParleySignaling
import Testing

private let c1 = "6f1c2a9e-3b7d-4c55-9a41-0e8f5d2b7c13"
private let c2 = "0d6b9f64-1e2a-4f8c-8b37-6a5c2e1f9d08"
private typealias H = CoreHarness
private let device = PushDevice(pushType: .apnsVoip, token: "9f1c5e2a", environment: .sandbox, appID: "com.example.chat")
private let pushKey = PushFixtures.key

private extension CoreHarness {
    /// Runs a core method directly (the harness's step table has no push inputs).
    mutating func apply(_ body: (inout ClientSessionCore, ClientSessionCore.Time) -> [ClientSessionOutput]) -> [String] {
        let time = now
        let outputs = body(&core, time)
        for case .connect(let id) in outputs { connection = id }
        return outputs.map(Self.render)
    }

    static func resultWithKey(_ re: String, _ key: String) -> String {
        #"{"v":1,"type":"result","re":"\#(re)","pushKey":"\#(key)"}"#
    }

    static func relayed(_ callID: String) -> ParleyCallNotificationResult {
        ParleyCallNotificationResult(callId: callID, remoteUserId: "bob", isVideoOffered: false, isTimedOut: false, headers: ["topic": "x"])
    }
}

/// The core's push requests: registration and its key, unregistration, relay and what a
/// relayed call does when the server says it is live, over, or the payload is bad.
@Suite struct ClientSessionCorePushTests {
    @Test func registerStoresTheKeyAndIsNotRepeated() {
        var h = H()
        #expect(h.run(H.opening).isEmpty)
        #expect(h.apply { $0.registerPush(device, now: $1) } == ["send push.register id=2"])
        // The same token again while in flight: one request.
        #expect(h.apply { $0.registerPush(device, now: $1) } == [])
        #expect(h.step(.frame(H.resultWithKey("2", pushKey))) == ["push registered apnsVoip 9f1c5e2a key=\(pushKey)"])
        #expect(h.core.pushRegistration == device)
        // Registered: not sent again (that would replace the key under pushes in flight).
        #expect(h.apply { $0.registerPush(device, now: $1) } == [])
        var changed = device
        changed.token = "77aa"
        #expect(h.apply { $0.registerPush(changed, now: $1) } == ["send push.register id=3"])
    }

    @Test func registrationFramesCarryTheProtocolMembers() {
        var h = H()
        _ = h.run(H.opening)
        var sent: [ClientSessionOutput] = []
        let time = h.now
        sent = h.core.registerPush(device, now: time)
        guard case .send(let message) = sent.first else {
            Issue.record("no frame")
            return
        }
        #expect(SignalingCodec.encodeToString(message)
                == #"{"v":1,"type":"push.register","id":"2","pushType":"apnsVoip","token":"9f1c5e2a","environment":"sandbox","appId":"com.example.chat"}"#)
    }

    @Test func aResultWithoutAValidKeyOrAnErrorFails() {
        var h = H()
        _ = h.run(H.opening)
        _ = h.apply { $0.registerPush(device, now: $1) }
        #expect(h.step(.frame(H.result("2"))) == ["push failed push_key_missing"])
        #expect(h.core.pushRegistration == nil)
        _ = h.apply { $0.registerPush(device, now: $1) }
        #expect(h.step(.frame(H.resultWithKey("3", "AQID"))) == ["push failed push_key_missing"])
        _ = h.apply { $0.registerPush(device, now: $1) }
        #expect(h.step(.frame(H.error("4", "bad_request", "appId"))) == ["push failed bad_request"])
        _ = h.apply { $0.registerPush(device, now: $1) }
        #expect(h.step(.advance(.seconds(11))) == ["push failed request_timeout"])
    }

    @Test func requestsWaitForTheSessionAndSurviveADrop() {
        var h = H()
        #expect(h.apply { $0.registerPush(device, now: $1) } == [])
        #expect(h.run(H.opening.dropLast()).isEmpty)
        #expect(h.step(.frame(H.helloOK(re: "1", session: "s-1"))) == ["started", "send push.register id=2"])
        // Dropped before the result: sent again on the resumed session.
        #expect(h.step(.closed(1006)) == [])
        #expect(h.step(.advance(.seconds(1))) == ["connect #2"])
        #expect(h.step(.opened) == ["token? #2"])
        #expect(h.step(.token("jwt-2")) == ["send hello id=3 token=jwt-2 resume=s-1"])
        #expect(h.step(.frame(H.helloOK(re: "3", session: "s-1", resumed: true))) == ["send push.register id=4"])
        #expect(h.step(.frame(H.resultWithKey("4", pushKey))).count == 1)
    }

    @Test func unregisterForgetsAtOnceAndTellsTheServer() {
        var h = H()
        h.core.restorePushRegistration(device)
        _ = h.run(H.opening)
        #expect(h.apply { $0.unregisterPush(now: $1) } == ["push unregistered", "send push.unregister id=2"])
        #expect(h.core.pushRegistration == nil)
        #expect(h.core.hasWorkToFinish, "the client must stay until the server answers")
        #expect(h.step(.frame(H.result("2"))) == ["push unregister done"])
        #expect(!h.core.hasWorkToFinish)
    }

    @Test func logoutClosesOnlyOnceTheServerAnsweredTheUnregister() {
        var h = H()
        h.core.restorePushRegistration(device)
        _ = h.run(H.opening)
        _ = h.step(.frame(H.incoming(c1)))
        _ = h.step(.legPrepared(c1))
        #expect(h.apply { $0.unregisterPush(now: $1) + $0.terminate(now: $1) }
                == ["push unregistered", "send push.unregister id=3", "send call.hangup id=4 callId=\(c1)", "media close \(c1)", "ended \(c1) denied"])
        #expect(!h.core.isStarted && h.core.hasWorkToFinish && h.core.terminatingAfterUnregister)
        // Quiet meanwhile: the session is kept alive, calls are declined, nothing is delivered.
        #expect(h.step(.advance(.seconds(5))) == [])
        #expect(h.step(.frame(H.incoming(c2))) == ["send call.decline id=5 callId=\(c2)"])
        #expect(h.step(.frame(H.result("3"))) == ["push unregister done", "close #1 1000"])
        #expect(h.core.phase == .stopped && !h.core.hasWorkToFinish)
        #expect(h.run([(.start, ["connect #2"])]).isEmpty, "a logged-out client starts again")
    }

    @Test func logoutWhileReconnectingWaitsForTheSessionToSendTheUnregister() {
        var h = H()
        h.core.restorePushRegistration(device)
        _ = h.run(H.opening)
        #expect(h.step(.closed(1006)) == [])
        #expect(h.apply { $0.unregisterPush(now: $1) + $0.terminate(now: $1) } == ["push unregistered"])
        #expect(h.run([
            (.advance(.seconds(1)), ["connect #2"]),
            (.opened, ["token? #2"]),
            (.token("jwt-2"), ["send hello id=2 token=jwt-2 resume=s-1"]),
            // No clientDidStart: the app logged out. Only the unregister goes out.
            (.frame(H.helloOK(re: "2", session: "s-1", resumed: true)), ["send push.unregister id=3"]),
            (.frame(H.result("3")), ["push unregister done", "close #2 1000"]),
        ]) == [])
        #expect(h.core.phase == .stopped)
    }

    @Test func anUnregisterWithNoSessionWithinItsTimeoutFailsAndIsReported() {
        var h = H()
        _ = h.run(H.opening)
        _ = h.step(.closed(1006))
        #expect(h.apply { $0.unregisterPush(now: $1) + $0.terminate(now: $1) } == ["push unregistered"])
        // The server stays away: every reconnect fails until the unregister's 30 s are up.
        var lines: [String] = []
        for _ in 0..<400 where h.core.phase != .stopped {
            lines += h.step(.advance(.milliseconds(100)))
            if case .connecting = h.core.phase { lines += h.step(.connectFailed) }
        }
        #expect(h.core.phase == .stopped && !h.core.hasWorkToFinish)
        #expect(lines.last == "push unregister failed request_timeout", "\(lines.suffix(3))")
        #expect(!lines.contains { $0.hasPrefix("failed") }, "a logout reports no client failure")
        #expect(h.core.nextDeadline == nil)
    }

    @Test func anUnregisterNeedsAStartedClientAndARefusalIsReported() {
        var h = H()
        #expect(h.apply { $0.unregisterPush(now: $1) } == ["push unregistered", "push unregister failed not_started"])
        #expect(!h.core.hasWorkToFinish)
        _ = h.run(H.opening)
        #expect(h.apply { $0.unregisterPush(now: $1) } == ["push unregistered", "send push.unregister id=2"])
        #expect(h.step(.frame(H.error("2", "internal_error", "the push token could not be removed; retry"))) == ["push unregister failed internal_error"])
        #expect(!h.core.hasWorkToFinish)
        #expect(h.apply { $0.unregisterPush(now: $1) } == ["push unregistered", "send push.unregister id=3"])
        #expect(h.step(.advance(.seconds(11))) == ["push unregister failed request_timeout"])
    }

    @Test func aClientFailureDuringLogoutReportsTheUnregisterNotTheFailure() {
        var h = H()
        _ = h.run(H.opening)
        _ = h.apply { $0.unregisterPush(now: $1) + $0.terminate(now: $1) }
        #expect(h.step(.closed(4001)) == ["push unregister failed authentication_failed"])
        #expect(h.core.phase == .stopped)
    }

    @Test func startingAgainDuringLogoutKeepsTheSession() {
        var h = H()
        _ = h.run(H.opening)
        _ = h.apply { $0.unregisterPush(now: $1) + $0.terminate(now: $1) }
        #expect(h.step(.start) == ["started"])
        #expect(h.step(.frame(H.result("2"))) == ["push unregister done"])
        #expect(h.core.phase == .open(connection: 1) && h.core.isStarted)
    }

    @Test func aPushTheSystemRefusedIsRelayedThenDeclinedOnArrival() {
        var h = H()
        #expect(h.apply { $0.declinePush(H.relayed(c1), payload: PushFixtures.valid, now: $1) } == [])
        _ = h.run(H.opening.dropLast())
        #expect(h.step(.frame(H.helloOK(re: "1", session: "s-1"))) == ["started", "send push.relay id=2"])
        #expect(h.step(.frame(H.result("2"))) == [])
        // No ack, no incoming event: declined at once.
        #expect(h.step(.frame(H.incoming(c1))) == ["send call.decline id=3 callId=\(c1)"])
        #expect(h.step(.frame(H.result("3"))) == [])
        #expect(h.step(.frame(H.ended(c1, "denied"))) == [])
        #expect(h.core.decliningCalls.isEmpty && h.core.calls.isEmpty)
        // A second push for it changes nothing.
        #expect(h.apply { $0.declinePush(H.relayed(c1), payload: PushFixtures.valid, now: $1) } == [])
    }

    @Test func decliningACallAlreadyHereHangsItUpAndALateOneEndsSilently() {
        var h = H()
        _ = h.run(H.opening)
        _ = h.step(.frame(H.incoming(c1)))
        _ = h.step(.legPrepared(c1))
        #expect(h.apply { $0.declinePush(H.relayed(c1), payload: PushFixtures.valid, now: $1) } == ["send call.hangup id=3 callId=\(c1)"])
        // Over before it arrived (canceled while the push was out): nothing to decline or show.
        #expect(h.apply { $0.declinePush(H.relayed(c2), payload: PushFixtures.secondCall, now: $1) } == ["send push.relay id=4"])
        #expect(h.step(.frame(H.result("4"))) == [])
        #expect(h.step(.frame(H.ended(c2, "canceled"))) == [])
        #expect(h.core.decliningCalls.isEmpty)
        // A relay already out (the app relayed, then the system refused): declined on arrival.
        let c3 = "1a2b3c4d-0000-4000-8000-000000000003"
        _ = h.apply { $0.relayPush(H.relayed(c3), payload: "x.y.z", now: $1) }
        #expect(h.apply { $0.declinePush(H.relayed(c3), payload: "x.y.z", now: $1) } == [])
        #expect(h.step(.frame(H.incoming(c3))).first?.hasPrefix("send call.decline") == true)
    }

    @Test func relayedCallArrivesThroughCallIncoming() {
        var h = H()
        #expect(h.apply { $0.relayPush(H.relayed(c1), payload: PushFixtures.valid, now: $1) } == [])
        _ = h.run(H.opening.dropLast())
        #expect(h.step(.frame(H.helloOK(re: "1", session: "s-1"))) == ["started", "send push.relay id=2"])
        #expect(h.step(.frame(H.result("2"))) == [])
        #expect(h.step(.frame(H.incoming(c1))) == ["media prepare \(c1)", "incoming \(c1) ringing"])
        #expect(h.step(.legPrepared(c1)) == ["send call.ack id=3 callId=\(c1) sdp"])
        #expect(h.core.relayedCalls.isEmpty)
        // A second push for the same call is not relayed.
        #expect(h.apply { $0.relayPush(H.relayed(c1), payload: PushFixtures.valid, now: $1) } == [])
    }

    @Test func lateRelayOfACanceledCallEndsAtOnce() {
        var h = H()
        _ = h.run(H.opening)
        #expect(h.apply { $0.relayPush(H.relayed(c1), payload: PushFixtures.valid, now: $1) } == ["send push.relay id=2"])
        #expect(h.apply { $0.relayPush(H.relayed(c1), payload: PushFixtures.valid, now: $1) } == [])
        #expect(h.step(.frame(H.result("2"))) == [])
        #expect(h.step(.frame(H.ended(c1, "canceled"))) == ["incoming \(c1) ringing", "ended \(c1) canceled"])
        // Nothing more of it: a late call.incoming is dropped, no ack.
        #expect(h.step(.frame(H.incoming(c1))) == [])
    }

    @Test func refusedRelayEndsTheCallWithTheError() {
        var h = H()
        _ = h.run(H.opening)
        _ = h.apply { $0.relayPush(H.relayed(c1), payload: PushFixtures.valid, now: $1) }
        #expect(h.step(.frame(H.error("2", "push_payload_invalid", "stale"))) == ["incoming \(c1) ringing", "ended \(c1) error push_payload_invalid"])
        _ = h.apply { $0.relayPush(H.relayed(c2), payload: PushFixtures.secondCall, now: $1) }
        #expect(h.step(.advance(.seconds(11))) == ["incoming \(c2) ringing", "ended \(c2) error request_timeout"])
    }

    @Test func aCallAlreadyHereIsNotRelayedAndFailureEndsRelayedCalls() {
        var h = H()
        _ = h.run(H.opening)
        _ = h.step(.frame(H.incoming(c1)))
        #expect(h.apply { $0.relayPush(H.relayed(c1), payload: PushFixtures.valid, now: $1) } == [])
        _ = h.apply { $0.relayPush(H.relayed(c2), payload: PushFixtures.secondCall, now: $1) }
        #expect(h.step(.closed(4001)) == ["media close \(c1)", "ended \(c1) inactive", "incoming \(c2) ringing", "ended \(c2) inactive", "failed authentication_failed"])
    }

    @Test func relayedCallsAreBounded() {
        var h = H()
        for index in 0..<100 {
            let id = String(format: "00000000-0000-4000-8000-%012d", index)
            _ = h.apply { $0.relayPush(H.relayed(id), payload: "x.y.z", now: $1) }
        }
        #expect(h.core.relayedCalls.count <= 65)
    }
}

extension ClientSessionCorePushTests {
    @Test func relayBeforeStartOfACanceledCallEndsAtOnce() {
        var h = H()
        #expect(h.apply { $0.relayPush(H.relayed(c1), payload: PushFixtures.valid, now: $1) } == [])
        _ = h.run(H.opening.dropLast())
        #expect(h.step(.frame(H.helloOK(re: "1", session: "s-1"))) == ["started", "send push.relay id=2"])
        #expect(h.step(.frame(H.result("2"))) == [])
        #expect(h.step(.frame(H.ended(c1, "canceled"))) == ["incoming \(c1) ringing", "ended \(c1) canceled"])
    }
}
