import Foundation
import ParleyCallCore
import ParleyNetCore
import ParleyServer
import ParleySignaling
import ParleyStore
import Testing

/// Whole call flows between raw clients (docs/protocol.md "Call flows"), with real SDP but
/// no audio: end causes, events on both sides, the stored records, and recovery.
@Suite struct ServerCallFlowTests {
    @Test func callToAnUnknownUserEndsWithDestinationNotFound() throws {
        let harness = try ServerHarness()
        let alice = try harness.device("alice")
        let callID = try alice.startCall(to: "nobody", sdp: try SDPPeer.offer())
        let ended = try alice.expectEnded(callID)
        #expect(ended.cause == "error")
        #expect(ended.code == "destination_not_found")
        #expect(ended.message == "destination user not found")
        let stored = try harness.waitForStoredCall(callID) { $0.state == .ended }
        #expect(stored?.endCause == .error)
        #expect(stored?.error?.code == "destination_not_found")
        #expect(stored?.callee == .user("nobody"))
        // Alice's connection stays usable.
        try alice.send(.ping(.init(requestID: "p")))
        #expect(try alice.expectMessage().type == .pong)
    }

    /// Starts a call from alice to bob and runs it to ringing; returns the call id and
    /// bob's `call.incoming` offer.
    private func ring(_ alice: TestDevice, _ bob: TestDevice) throws -> (String, String) {
        let callID = try alice.startCall(to: "bob", sdp: try SDPPeer.offer())
        let media = try alice.expect(.callMedia)
        #expect(media.sdp?.hasPrefix("v=0") == true)
        try alice.expect(.callProgress)
        let incoming = try bob.expect(.callIncoming)
        #expect(incoming.callID == callID)
        try bob.request(SignalingMessage.callAck, callID: callID)
        try alice.expect(.callRinging)
        return (callID, try #require(incoming.sdp))
    }

    @Test func declineEndsAsDeniedForBoth() throws {
        let harness = try ServerHarness()
        let alice = try harness.device("alice")
        let bob = try harness.device("bob")
        let (callID, _) = try ring(alice, bob)
        try bob.request(SignalingMessage.callDecline, callID: callID)
        #expect(try bob.expectEnded(callID).cause == "denied")
        // The final record is stored before call.ended goes out: no waiting needed.
        let stored = try harness.storedCall(callID)
        #expect(stored?.state == .ended)
        #expect(try alice.expectEnded(callID).cause == "denied")
        #expect(stored?.endCause == .denied)
        #expect(stored?.details.rungTime != nil)
        #expect(stored?.details.progressedTime != nil)
        #expect(harness.server.mediaLegCount == 0)
        #expect(harness.server.mediaPortsInUse == 0)
    }

    @Test func theServersSDPAnnouncesTheConfiguredAddress() throws {
        let harness = try ServerHarness { $0.mediaAnnouncedAddress = SocketAddress(ipv4: 192, 0, 2, 7, port: 0) }
        let alice = try harness.device("alice")
        let bob = try harness.device("bob")
        let callID = try alice.startCall(to: "bob", sdp: try SDPPeer.offer())
        let answer = try #require(try alice.expect(.callMedia).sdp)
        #expect(answer.contains(" 192.0.2.7 "))
        #expect(!answer.contains(" 127.0.0.1 "))
        try alice.expect(.callProgress)
        let offer = try #require(try bob.expect(.callIncoming).sdp)
        #expect(offer.contains(" 192.0.2.7 "))
        try alice.request(SignalingMessage.callHangup, callID: callID)
    }

    @Test func callerHangingUpBeforeTheAnswerCancels() throws {
        let harness = try ServerHarness()
        let alice = try harness.device("alice")
        let bob = try harness.device("bob")
        let (callID, _) = try ring(alice, bob)
        try alice.request(SignalingMessage.callHangup, callID: callID)
        #expect(try alice.expectEnded(callID).cause == "canceled")
        #expect(try bob.expectEnded(callID).cause == "canceled")
        #expect(try harness.waitForStoredCall(callID) { $0.state == .ended }?.endCause == .canceled)
        // A late request about the ended call is invalid_state.
        try bob.send(.callAnswer(.init(requestID: "late", callID: callID, sdp: try SDPPeer.offer())))
        #expect(try bob.expectMessage().errorCode == "invalid_state")
    }

    @Test func nobodyAcknowledgingWithinTheRingTimeoutIsNoAnswer() throws {
        let harness = try ServerHarness { $0.ringTimeout = .milliseconds(800) }
        let alice = try harness.device("alice")
        let bob = try harness.device("bob")
        let callID = try alice.startCall(to: "bob", sdp: try SDPPeer.offer())
        try alice.expect(.callMedia)
        try alice.expect(.callProgress)
        try bob.expect(.callIncoming)
        #expect(try alice.expectEnded(callID, timeout: .seconds(5)).cause == "noAnswer")
        #expect(try bob.expectEnded(callID).cause == "noAnswer")
        #expect(try harness.waitForStoredCall(callID) { $0.state == .ended }?.endCause == .noAnswer)
    }

    @Test func oneDeviceAnswersAndTheOtherGetsOtherDeviceAnswered() throws {
        let harness = try ServerHarness()
        let alice = try harness.device("alice")
        let phone = try harness.device("bob", deviceID: "bob-phone")
        let tablet = try harness.device("bob", deviceID: "bob-tablet")
        let callID = try alice.startCall(to: "bob", sdp: try SDPPeer.offer())
        try alice.expect(.callMedia)
        try alice.expect(.callProgress)
        let offer = try #require(try phone.expect(.callIncoming).sdp)
        try tablet.expect(.callIncoming)
        try phone.request(SignalingMessage.callAck, callID: callID)
        try alice.expect(.callRinging)
        try tablet.request(SignalingMessage.callAck, callID: callID)
        try phone.answer(callID: callID, sdp: try SDPPeer.answer(to: offer))
        try alice.expect(.callAnswered)
        try phone.expect(.callAnswered)
        #expect(try tablet.expectEnded(callID).cause == "otherDeviceAnswered")
        // The tablet's leg is closed; the caller's and the phone's remain.
        #expect(harness.server.mediaLegCount == 2)
        try alice.request(SignalingMessage.callHangup, callID: callID)
        #expect(try alice.expectEnded(callID).cause == "hungUp")
        #expect(try phone.expectEnded(callID).cause == "hungUp")
        let stored = try harness.waitForStoredCall(callID) { $0.state == .ended }
        #expect(stored?.endCause == .hungUp)
        #expect(stored?.details.answeredTime != nil)
        #expect(harness.server.mediaPortsInUse == 0)
    }

    @Test func restHangUpThroughCallControl() throws {
        let harness = try ServerHarness()
        let alice = try harness.device("alice")
        let bob = try harness.device("bob")
        let (callID, _) = try ring(alice, bob)
        let control = harness.server.callControl
        let key = harness.application.key
        #expect(awaitOffPool { await control.liveCallCounts()[.ringing] } == 1)
        #expect(awaitOffPool { await control.hangUp(callID: callID, applicationKey: "other-app") } == .notFound)
        #expect(awaitOffPool { await control.hangUp(callID: callID, applicationKey: key) } == .hungUp)
        #expect(try alice.expectEnded(callID).cause == "canceled")
        #expect(try bob.expectEnded(callID).cause == "canceled")
        _ = try harness.waitForStoredCall(callID) { $0.state == .ended }
        #expect(awaitOffPool { await control.hangUp(callID: callID, applicationKey: key) } == .alreadyEnded)
        let unknown = newCallID()
        #expect(awaitOffPool { await control.hangUp(callID: unknown, applicationKey: key) } == .notFound)
    }

    @Test func aCallLeftInProgressIsClosedAsErrorByTheNextServer() throws {
        let directory = ServerHarness.temporaryDirectory()
        let callID = newCallID()
        let appKey: String
        do {
            let first = try ServerHarness(directory: directory)
            appKey = first.application.key
            // What a crash leaves behind: a call stored as ringing, never finished.
            try first.query { (store) throws(StoreError) in
                try store.createCall(id: callID, applicationKey: appKey, caller: "alice", callee: "bob", startedTime: 1_000)
                try store.updateCallState(id: callID, to: .ringing, at: 1_100)
            }
            first.server.shutdown()
        }
        let second = try ServerHarness(directory: directory)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(second.server.developmentApplication == nil)  // the store already had one
        #expect(second.application.key == appKey)
        #expect(second.server.recoveredCalls.map(\.callId) == [callID])
        let stored = try #require(try second.storedCall(callID))
        #expect(stored.state == .ended)
        #expect(stored.endCause == .error)
        #expect(stored.error?.code == "server_restarted")
        #expect(stored.details.rungTime == 1_100)
    }

    @Test func usersFromTheStoreAreKnownAfterARestart() throws {
        let directory = ServerHarness.temporaryDirectory()
        do {
            let first = try ServerHarness(directory: directory)
            let bob = try first.device("bob")
            bob.close()
            _ = try first.query { (store) throws(StoreError) in try store.knownUsers() }
            // Wait for the write of "bob seen".
            let deadline = ContinuousClock.now + .seconds(3)
            while try first.query({ (store) throws(StoreError) in try store.knownUsers() }).isEmpty, ContinuousClock.now < deadline {
                Thread.sleep(forTimeInterval: 0.02)
            }
            first.server.shutdown()
        }
        let second = try ServerHarness(directory: directory)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let alice = try second.device("alice")
        let callID = try alice.startCall(to: "bob", sdp: try SDPPeer.offer())
        // Known but not connected: unavailable, not "not found".
        let ended = try alice.expectEnded(callID)
        #expect(ended.code == "destination_unavailable")
    }
}

/// Sessions that outlive their connection, and shutdown.
@Suite struct ServerSessionLifecycleTests {
    @Test func messagesForAnAwayCallerAreDeliveredWhenItResumes() throws {
        let harness = try ServerHarness()
        let first = try TestDevice(address: harness.address)
        guard case .helloOK(let ok) = try first.hello(appKey: harness.application.key, token: try harness.token(for: "alice"),
                                                      deviceID: "alice-phone")
        else { Issue.record("hello failed"); return }
        let bob = try harness.device("bob")
        let callID = try first.startCall(to: "bob", sdp: try SDPPeer.offer())
        try first.expect(.callMedia)
        try first.expect(.callProgress)
        try bob.expect(.callIncoming)
        first.drop()
        Thread.sleep(forTimeInterval: 0.2)
        // While alice is away: ringing, then the decline.
        try bob.request(SignalingMessage.callAck, callID: callID)
        try bob.request(SignalingMessage.callDecline, callID: callID)
        #expect(try bob.expectEnded(callID).cause == "denied")
        let again = try TestDevice(address: harness.address)
        guard case .helloOK(let resumed) = try again.hello(appKey: harness.application.key, token: try harness.token(for: "alice"),
                                                           deviceID: "alice-phone", resume: ok.sessionID)
        else { Issue.record("resume failed"); return }
        #expect(resumed.resumed)
        try again.expect(.callRinging)
        #expect(try again.expectEnded(callID).cause == "denied")
    }

    @Test func aCallerThatDoesNotResumeEndsItsCallAsInactive() throws {
        let harness = try ServerHarness { $0.reconnectGrace = .milliseconds(500) }
        let alice = try harness.device("alice")
        let bob = try harness.device("bob")
        let callID = try alice.startCall(to: "bob", sdp: try SDPPeer.offer())
        try alice.expect(.callMedia)
        try bob.expect(.callIncoming)
        alice.drop()
        #expect(try bob.expectEnded(callID, timeout: .seconds(5)).cause == "inactive")
        #expect(try harness.waitForStoredCall(callID) { $0.state == .ended }?.endCause == .inactive)
    }

    @Test func aCallerThatClosesWith1000HasLoggedOut() throws {
        let harness = try ServerHarness()
        let first = try TestDevice(address: harness.address)
        guard case .helloOK(let ok) = try first.hello(appKey: harness.application.key, token: try harness.token(for: "alice"),
                                                      deviceID: "alice-phone")
        else { Issue.record("hello failed"); return }
        let bob = try harness.device("bob")
        let callID = try first.startCall(to: "bob", sdp: try SDPPeer.offer())
        try first.expect(.callMedia)
        try bob.expect(.callIncoming)
        first.close()
        // At once, not after the reconnect grace: the caller hung up before the answer.
        #expect(try bob.expectEnded(callID, timeout: .seconds(2)).cause == "canceled")
        #expect(try harness.waitForStoredCall(callID) { $0.state == .ended }?.endCause == .canceled)
        let again = try TestDevice(address: harness.address)
        guard case .helloOK(let fresh) = try again.hello(appKey: harness.application.key, token: try harness.token(for: "alice"),
                                                         deviceID: "alice-phone", resume: ok.sessionID)
        else { Issue.record("hello failed"); return }
        #expect(!fresh.resumed)
    }

    @Test func shutdownEndsCallsAndClosesConnectionsWith1001() throws {
        let harness = try ServerHarness()
        let alice = try harness.device("alice")
        let bob = try harness.device("bob")
        let callID = try alice.startCall(to: "bob", sdp: try SDPPeer.offer())
        try alice.expect(.callMedia)
        try alice.expect(.callProgress)
        try bob.expect(.callIncoming)
        harness.server.shutdown()
        let ended = try alice.expectEnded(callID)
        #expect(ended.cause == "error")
        #expect(ended.code == "internal_error")
        #expect(try alice.expectMessage().errorCode == "shutting_down")
        #expect(try alice.expectClose() == 1001)
        #expect(try bob.expectEnded(callID).cause == "error")
        #expect(try bob.expectMessage().errorCode == "shutting_down")
        #expect(try bob.expectClose() == 1001)
        let stored = try harness.storedCall(callID)
        #expect(stored?.state == .ended)
        #expect(stored?.error?.code == "internal_error")
    }
}
