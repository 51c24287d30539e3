import Foundation
@_spi(ParleyEngines) @testable import ParleySDKCore
import ParleySignaling
import Testing

private let c1 = "6f1c2a9e-3b7d-4c55-9a41-0e8f5d2b7c13"
private let c2 = "0d6b9f64-1e2a-4f8c-8b37-6a5c2e1f9d08"
private typealias H = CoreHarness

/// `ClientSessionCore` without I/O: each row is `input -> expected outputs`.
@Suite struct ClientSessionCoreTests {
    // MARK: Connecting and authenticating

    @Test func helloCarriesTheConfigurationAndAFreshTokenThenHeartbeats() {
        var h = H()
        #expect(h.step(.start) == ["connect #1"])
        #expect(h.step(.start) == [], "a second start while connecting does nothing")
        #expect(h.step(.opened) == ["token? #1"])
        let outputs = h.core.tokenProvided("jwt-1", connection: 1, now: h.now)
        #expect(outputs.map(\.description) == [
            #"send {"v":1,"type":"hello","id":"1","appKey":"app-1","token":"jwt-1","deviceId":"dev-1","sdk":{"name":"parley-swift","version":"0.1.0","platform":"Linux"},"capabilities":["audio"]}"#,
        ])
        #expect(h.nextDeadlineIn == .seconds(10), "hello timeout")
        #expect(h.run([
            (.frame(H.helloOK(re: "1", session: "s-1")), ["started"]),
            (.advance(.seconds(24)), []),
            (.advance(.seconds(1)), ["send ping id=2"]),
            (.frame(#"{"v":1,"type":"pong","re":"2"}"#), []),
            (.advance(.seconds(25)), ["send ping id=3"]),
        ]) == [])
        #expect(h.core.isStarted)
    }

    @Test func helloTimeoutReconnectsWithBackoff() {
        var h = H()
        #expect(h.run([
            (.start, ["connect #1"]),
            (.opened, ["token? #1"]),
            (.token("jwt-1"), ["send hello id=1 token=jwt-1"]),
            (.advance(.seconds(10)), ["close #1 1000"]),
        ]) == [])
        let wait = try! #require(h.nextDeadlineIn)
        #expect(wait >= .milliseconds(250) && wait <= .milliseconds(500), "first backoff in [d/2, d], d = 0.5 s: \(wait)")
        #expect(h.run([
            (.advance(wait), ["connect #2"]),
            (.opened, ["token? #2"]),
            (.token("jwt-2"), ["send hello id=2 token=jwt-2"]),
            (.frame(H.helloOK(re: "1", session: "s-1")), []),   // a reply to the old hello: ignored
            (.frame(H.helloOK(re: "2", session: "s-1")), ["started"]),
        ]) == [])
    }

    @Test func anExpiredTokenIsRetriedOnceWithAFreshOneThenFails() {
        var h = H()
        #expect(h.run([
            (.start, ["connect #1"]),
            (.opened, ["token? #1"]),
            (.token("jwt-old"), ["send hello id=1 token=jwt-old"]),
            (.frame(H.error("1", "token_expired")), ["close #1 1000", "connect #2"]),
            (.closedOn(1, 4001), []),                  // the old connection's close: stale
            (.opened, ["token? #2"]),
            (.token("jwt-new"), ["send hello id=2 token=jwt-new"]),
            (.frame(H.error("2", "token_expired")), ["close #2 1000", "failed token_expired"]),
        ]) == [])
        #expect(!h.core.isStarted)
    }

    @Test(arguments: ["token_malformed", "token_bad_signature", "token_not_yet_valid", "token_wrong_application", "token_replayed", "unsupported_version"])
    func tokenAndVersionRefusalsFailTheClient(code: String) {
        var h = H()
        #expect(h.run([
            (.start, ["connect #1"]),
            (.opened, ["token? #1"]),
            (.token("jwt"), ["send hello id=1 token=jwt"]),
            (.frame(H.error("1", code)), ["close #1 1000", "failed \(code)"]),
            (.advance(.seconds(60)), []),
        ]) == [])
    }

    @Test func aDelegateWithoutTokenFailsTheClient() {
        var h = H()
        #expect(h.run([(.start, ["connect #1"]), (.opened, ["token? #1"]), (.tokenFailed, ["close #1 1000", "failed registration_failed"])]) == [])
        var slow = H()
        #expect(slow.run([(.start, ["connect #1"]), (.opened, ["token? #1"]), (.advance(.seconds(30)), ["close #1 1000", "failed registration_failed"])]) == [])
    }

    @Test func aTokenForAnotherUserFailsTheClient() {
        var h = H()
        #expect(h.run([
            (.start, ["connect #1"]),
            (.opened, ["token? #1"]),
            (.token("jwt"), ["send hello id=1 token=jwt"]),
            (.frame(H.helloOK(re: "1", session: "s-1").replacingOccurrences(of: #""userId":"alice""#, with: #""userId":"mallory""#)),
             ["close #1 1000", "failed user_mismatch"]),
        ]) == [])
    }

    @Test func anUnreachableServerFailsTheFirstStart() {
        var h = H()
        #expect(h.run([(.start, ["connect #1"]), (.connectFailed, ["failed server_unreachable"]), (.start, ["connect #2"])]) == [])
    }

    @Test func helloOKBeforeHelloAndRepliesToNothingAreIgnored() {
        var h = H()
        #expect(h.run([
            (.start, ["connect #1"]),
            (.frame(H.helloOK(re: "1", session: "s-1")), []),   // before the socket even opened
            (.opened, ["token? #1"]),
            (.frame(H.helloOK(re: "1", session: "s-1")), []),   // before hello was sent
            (.token("jwt"), ["send hello id=1 token=jwt"]),
            (.frame(H.result("1")), []),
            (.frame(H.helloOK(re: "1", session: "s-1")), ["started"]),
            (.frame(H.helloOK(re: "1", session: "s-2")), []),   // a second hello.ok
            (.frame(H.result("99")), []),
            (.frame(H.error("98", "internal_error")), []),
        ]) == [])
    }

    // MARK: Drops, resume, close codes

    @Test(arguments: [UInt16(1006), 1011, 1001, 4004, 4002, 1005])
    func aDropReconnectsAndResumes(code: UInt16) {
        var h = H()
        #expect(h.run(H.opening) == [])
        #expect(h.step(.closed(code)) == [])
        let wait = try! #require(h.nextDeadlineIn)
        #expect(wait >= .milliseconds(250) && wait <= .milliseconds(500))
        #expect(h.run([
            (.advance(wait), ["connect #2"]),
            (.opened, ["token? #2"]),
            (.token("jwt-2"), ["send hello id=2 token=jwt-2 resume=s-1"]),
            (.frame(H.helloOK(re: "2", session: "s-1", resumed: true)), []),   // no second clientDidStart
        ]) == [])
        #expect(h.core.isStarted)
    }

    @Test(arguments: [(UInt16(4003), "replaced"), (4006, "unsupported_version"), (4001, "authentication_failed"),
                      (1000, "connection_closed"), (1002, "connection_closed"), (1003, "connection_closed"),
                      (1007, "connection_closed"), (1009, "connection_closed")])
    func closesThatMustNotBeRetriedFailTheClient(code: UInt16, error: String) {
        var h = H()
        #expect(h.run(H.opening) == [])
        #expect(h.step(.closed(code)) == ["failed \(error)"])
        #expect(h.core.nextDeadline == nil)
    }

    @Test func rateLimitedWaitsAtLeastThePause() {
        var h = H()
        #expect(h.run(H.opening) == [])
        #expect(h.step(.closed(4005)) == [])
        #expect(h.nextDeadlineIn == .seconds(5))
    }

    @Test func backoffGrowsWithJitterAndGivesUpAfterTheLimit() {
        var h = H { $0.maxReconnectAttempts = 6 }
        #expect(h.run(H.opening) == [])
        #expect(h.step(.closed(1006)) == [])
        var waits: [Duration] = []
        for attempt in 1...6 {
            let wait = try! #require(h.nextDeadlineIn)
            let (low, high) = h.core.backoffBounds(attempt: attempt)
            #expect(wait >= low && wait <= high, "attempt \(attempt): \(wait) not in [\(low), \(high)]")
            waits.append(wait)
            #expect(h.step(.advance(wait)) == ["connect #\(attempt + 1)"])
            #expect(h.step(.connectFailed) == (attempt == 6 ? ["failed server_unreachable"] : []))
        }
        #expect(h.core.backoffBounds(attempt: 1) == (.milliseconds(250), .milliseconds(500)))
        #expect(h.core.backoffBounds(attempt: 4) == (.seconds(2), .seconds(4)))
        #expect(h.core.backoffBounds(attempt: 30) == (.seconds(15), .seconds(30)), "capped")
        #expect(Set(waits).count == waits.count, "jittered")
    }

    @Test func aMissingPongCountsAsADrop() {
        var h = H()
        #expect(h.run(H.opening + [
            (.advance(.seconds(25)), ["send ping id=2"]),
            (.advance(.seconds(10)), ["close #1 1000"]),
        ]) == [])
        #expect(h.nextDeadlineIn != nil)
    }

    // MARK: Outgoing calls

    @Test func anOutgoingCallRunsThroughEveryEventInOrder() {
        var h = H()
        #expect(h.run(H.opening + [
            (.callUser("bob", id: c1), ["media offer \(c1)"]),
            (.legOffered(c1), ["send call.start id=2 callId=\(c1) to=bob"]),
            (.legOffered(c1), []),
            (.frame(H.result("2")), []),
            (.frame(H.media(c1)), ["media accept \(c1)"]),
            (.frame(H.media(c1)), []),
            (.frame(H.event("call.progress", c1)), ["progressed \(c1) initiating"]),
            (.frame(H.event("call.ringing", c1)), ["rang \(c1) ringing"]),
            (.frame(H.event("call.answered", c1)), ["answered \(c1) answered"]),
            (.frame(H.event("call.established", c1, time: 1_764_421_206_110)), ["established \(c1) established"]),
            (.hangup(c1), ["send call.hangup id=3 callId=\(c1)"]),
            (.hangup(c1), []),
            (.frame(H.result("3")), []),
            (.frame(H.ended(c1, "hungUp", established: true)), ["media close \(c1)", "ended \(c1) hungUp"]),
            (.frame(H.ended(c1, "hungUp")), []),
            (.frame(H.event("call.established", c1)), []),
        ]) == [])
        #expect(h.core.calls.isEmpty)
    }

    @Test func callDetailsComeFromTheServersTimes() {
        var h = H()
        _ = h.run(H.opening)
        let (call, _) = h.core.callUser("bob", headers: ["topic": "billing"], callID: c1, now: h.now)
        #expect(call.details.startedTime == Date(timeIntervalSince1970: 1_764_421_200))
        #expect(call.state == .initiating && call.direction == .outgoing && call.headers == ["topic": "billing"])
        _ = h.step(.legOffered(c1))
        _ = h.step(.frame(H.event("call.established", c1, time: 1_764_421_206_110)))
        let outputs = h.core.frameReceived(Array(H.ended(c1, "hungUp", established: true).utf8), connection: 1, now: h.now)
        guard case .call(.ended, let ended)? = outputs.last else { Issue.record("no end: \(outputs)"); return }
        #expect(ended.details.establishedTime == Date(timeIntervalSince1970: 1_764_421_206.110))
        #expect(ended.details.endedTime == Date(timeIntervalSince1970: 1_764_421_318.400))
        #expect(abs(ended.details.duration - 112.29) < 0.001)
        #expect(ended.details.endCause == .hungUp && ended.details.error == nil)
    }

    @Test func eventsOutOfOrderDuplicatedOrForOtherCallsAreIgnored() {
        var h = H()
        #expect(h.run(H.opening + [
            (.callUser("bob", id: c1), ["media offer \(c1)"]),
            (.legOffered(c1), ["send call.start id=2 callId=\(c1) to=bob"]),
            (.frame(H.media(c1)), ["media accept \(c1)"]),      // call.media before result: fine
            (.frame(H.result("2")), []),
            (.frame(H.event("call.ringing", c1)), ["rang \(c1) ringing"]),
            (.frame(H.event("call.progress", c1)), []),          // after ringing: too late
            (.frame(H.event("call.ringing", c1)), []),           // duplicate
            (.frame(H.event("call.ringing", c2)), []),           // unknown call
            (.frame(H.ended(c2, "hungUp")), []),
            (.frame(H.event("call.established", c1)), ["established \(c1) established"]),   // answered skipped
            (.frame(H.event("call.answered", c1)), []),          // after established
            (.frame(#"{"v":1,"type":"call.transfer","callId":"\#(c1)"}"#), []),   // unknown type
            (.frame(#"{"v":1,"type":"call.ringing","#), []),      // malformed
            (.frame(#"{"v":2,"type":"call.ringing","callId":"\#(c1)","time":1}"#), []),
            (.frame(#"{"v":1,"type":"call.start","id":"9","callId":"\#(c1)","to":{"kind":"user","address":"x"},"sdp":"v=0\r\n"}"#), []),   // a device type from the server
            (.frame(#"{"v":1,"type":"call.ringing","callId":"not-a-uuid","time":1}"#), []),
            (.frame(#"{"v":1,"type":"call.ringing","callId":"\#(c1)","callId":"\#(c1)","time":1}"#), []),   // duplicate key
            (.frame(""), []),
            (.frame(H.ended(c1, "canceled")), ["media close \(c1)", "ended \(c1) canceled"]),
        ]) == [])
    }

    @Test func aRefusedCallStartEndsTheCallWithItsError() {
        var h = H()
        #expect(h.run(H.opening + [
            (.callUser("bob", id: c1), ["media offer \(c1)"]),
            (.legOffered(c1), ["send call.start id=2 callId=\(c1) to=bob"]),
            (.frame(H.error("2", "not_implemented", "not yet")), ["media close \(c1)", "ended \(c1) error not_implemented"]),
            (.frame(H.media(c1)), []),
        ]) == [])
    }

    @Test func anUnknownCalleeEndsWithTheServersError() {
        var h = H()
        _ = h.run(H.opening)
        _ = h.step(.callUser("nobody", id: c1))
        _ = h.step(.legOffered(c1))
        _ = h.step(.frame(H.result("2")))
        let outputs = h.core.frameReceived(Array(H.ended(c1, "error", error: ("destination_not_found", "destination user not found")).utf8), connection: 1, now: h.now)
        guard case .call(.ended, let ended)? = outputs.last else { Issue.record("no end: \(outputs)"); return }
        #expect(ended.details.endCause == .error)
        #expect(ended.details.error == ParleyCallError(code: "destination_not_found", message: "destination user not found"))
        #expect(ended.details.duration == 0)
    }

    @Test func aRequestWithoutReplyTimesOut() {
        var h = H()
        #expect(h.run(H.opening + [
            (.callUser("bob", id: c1), ["media offer \(c1)"]),
            (.legOffered(c1), ["send call.start id=2 callId=\(c1) to=bob"]),
            (.advance(.seconds(10)), ["media close \(c1)", "ended \(c1) error request_timeout"]),
        ]) == [])
    }

    @Test func hangingUpBeforeTheOfferCancelsLocally() {
        var h = H()
        #expect(h.run(H.opening + [
            (.callUser("bob", id: c1), ["media offer \(c1)"]),
            (.hangup(c1), ["media close \(c1)", "ended \(c1) canceled"]),
            (.legOffered(c1), []),
        ]) == [])
    }

    @Test func aLegFailureEndsTheCallAndTellsTheServer() {
        var h = H()
        #expect(h.run(H.opening + [
            (.callUser("bob", id: c1), ["media offer \(c1)"]),
            (.legFailed(c1), ["media close \(c1)", "ended \(c1) error media_failed"]),
            (.callUser("bob", id: c2), ["media offer \(c2)"]),
            (.legOffered(c2), ["send call.start id=2 callId=\(c2) to=bob"]),
            (.legFailed(c2), ["send call.hangup id=3 callId=\(c2)", "media close \(c2)", "ended \(c2) error media_failed"]),
        ]) == [])
    }

    // MARK: Incoming calls

    @Test func anIncomingCallPreparesItsLegAcknowledgesWithItsAnswerThenAnswers() {
        var h = H()
        #expect(h.run(H.opening + [
            (.frame(H.incoming(c1)), ["media prepare \(c1)", "incoming \(c1) ringing"]),
            (.frame(H.incoming(c1)), []),                      // duplicate
            (.legPrepared(c1), ["send call.ack id=2 callId=\(c1) sdp"]),
            (.legPrepared(c1), []),
            (.frame(H.media(c1)), []),                         // call.media is the caller's
            (.frame(H.event("call.ringing", c1)), []),         // so is ringing
            (.frame(H.event("call.answered", c1)), []),        // not answered here
            (.frame(H.result("2")), []),
            (.answer(c1), ["media activate \(c1)", "send call.answer id=3 callId=\(c1)"]),
            (.answer(c1), []),
            (.legAnswered(c1), []),                            // no leg answers at the answer
            (.frame(H.result("3")), []),
            (.frame(H.event("call.answered", c1)), ["answered \(c1) answered"]),
            (.frame(H.event("call.established", c1)), ["established \(c1) established"]),
            (.hangup(c1), ["send call.hangup id=4 callId=\(c1)"]),
            (.frame(H.ended(c1, "hungUp")), ["media close \(c1)", "ended \(c1) hungUp"]),
            (.frame(H.incoming(c1)), []),                      // a late copy of an ended call
        ]) == [])
    }

    @Test(arguments: [true, false])
    func anIncomingCallSaysWhetherVideoWasOffered(_ video: Bool) throws {
        var h = H()
        _ = h.run(H.opening)
        let frame = H.incoming(c1).replacingOccurrences(of: #""video":false"#, with: #""video":\#(video)"#)
        let outputs = h.core.frameReceived(Array(frame.utf8), connection: h.connection, now: h.now)
        let record = try #require(outputs.lazy.compactMap { output -> ClientCallRecord? in
            if case .call(.incoming, let record) = output { return record } else { return nil }
        }.first)
        #expect(record.details.isVideoOffered == video)
    }

    @Test func anAnswerBeforeTheLegIsPreparedIsSentOnceItIs() {
        var h = H()
        #expect(h.run(H.opening + [
            (.frame(H.incoming(c1)), ["media prepare \(c1)", "incoming \(c1) ringing"]),
            (.answer(c1), []),
            (.legPrepared(c1), ["send call.ack id=2 callId=\(c1) sdp", "media activate \(c1)", "send call.answer id=3 callId=\(c1)"]),
            (.frame(H.event("call.answered", c1)), ["answered \(c1) answered"]),
        ]) == [])
    }

    @Test func aLegThatCannotBePreparedLeavesTheAnswerToMakeOne() {
        var h = H()
        #expect(h.run(H.opening + [
            (.frame(H.incoming(c1)), ["media prepare \(c1)", "incoming \(c1) ringing"]),
            (.legPreparationFailed(c1), ["send call.ack id=2 callId=\(c1)"]),
            (.legPreparationFailed(c1), []),
            (.legPrepared(c1), []),                            // too late: it failed
            (.answer(c1), ["media answer \(c1)"]),
            (.legAnswered(c1), ["send call.answer id=3 callId=\(c1) sdp"]),
            (.frame(H.event("call.answered", c1)), ["answered \(c1) answered"]),
        ]) == [])
        // Answered while it was being prepared: the failure makes the leg at once.
        #expect(h.run([
            (.frame(H.incoming(c2)), ["media prepare \(c2)", "incoming \(c2) ringing"]),
            (.answer(c2), []),
            (.legPreparationFailed(c2), ["send call.ack id=4 callId=\(c2)", "media answer \(c2)"]),
        ]) == [])
    }

    @Test func declineIsHangupBeforeAnswer() {
        var h = H()
        #expect(h.run(H.opening + [
            (.frame(H.incoming(c1)), ["media prepare \(c1)", "incoming \(c1) ringing"]),
            (.legPrepared(c1), ["send call.ack id=2 callId=\(c1) sdp"]),
            (.hangup(c1), ["send call.hangup id=3 callId=\(c1)"]),
            (.answer(c1), []),                                 // too late
            (.frame(H.ended(c1, "denied")), ["media close \(c1)", "ended \(c1) denied"]),
        ]) == [])
    }

    @Test func anotherDeviceAnsweringEndsTheCallHere() {
        var h = H()
        #expect(h.run(H.opening + [
            (.frame(H.incoming(c1)), ["media prepare \(c1)", "incoming \(c1) ringing"]),
            (.legPrepared(c1), ["send call.ack id=2 callId=\(c1) sdp"]),
            (.frame(H.ended(c1, "otherDeviceAnswered")), ["media close \(c1)", "ended \(c1) otherDeviceAnswered"]),
            (.answer(c1), []),
        ]) == [])
    }

    @Test func aFailedAnswerEndsTheCallWithTheError() {
        var h = H()
        #expect(h.run(H.opening + [
            (.frame(H.incoming(c1)), ["media prepare \(c1)", "incoming \(c1) ringing"]),
            (.legPrepared(c1), ["send call.ack id=2 callId=\(c1) sdp"]),
            (.answer(c1), ["media activate \(c1)", "send call.answer id=3 callId=\(c1)"]),
            (.frame(H.error("3", "invalid_state", "the call ended")), ["media close \(c1)", "ended \(c1) error invalid_state"]),
        ]) == [])
    }

    // MARK: Calls across reconnects

    @Test func callsSurviveAResumedSession() {
        var h = H()
        #expect(h.run(H.opening + [
            (.frame(H.incoming(c1)), ["media prepare \(c1)", "incoming \(c1) ringing"]),
            (.legPrepared(c1), ["send call.ack id=2 callId=\(c1) sdp"]),
            (.frame(H.result("2")), []),
            (.closed(1006), []),
            (.answer(c1), ["media activate \(c1)"]),          // call.answer queued until the session is back
            (.advance(.seconds(1)), ["connect #2"]),
            (.opened, ["token? #2"]),
            (.token("jwt-2"), ["send hello id=3 token=jwt-2 resume=s-1"]),
            (.frame(H.helloOK(re: "3", session: "s-1", resumed: true)), ["send call.answer id=4 callId=\(c1)"]),
            (.frame(H.event("call.answered", c1)), ["answered \(c1) answered"]),
        ]) == [])
    }

    @Test func aSessionThatWasNotResumedEndsItsCallsInactive() {
        var h = H()
        #expect(h.run(H.opening + [
            (.callUser("bob", id: c1), ["media offer \(c1)"]),
            (.legOffered(c1), ["send call.start id=2 callId=\(c1) to=bob"]),
            (.frame(H.result("2")), []),
            (.closed(1011), []),
            (.callUser("carol", id: c2), ["media offer \(c2)"]),   // placed while reconnecting
            (.legOffered(c2), []),
            (.advance(.seconds(1)), ["connect #2"]),
            (.opened, ["token? #2"]),
            (.token("jwt-2"), ["send hello id=3 token=jwt-2 resume=s-1"]),
            (.frame(H.helloOK(re: "3", session: "s-2", resumed: false)),
             ["media close \(c1)", "ended \(c1) inactive", "send call.start id=4 callId=\(c2) to=carol"]),
        ]) == [])
    }

    @Test func aCallStartInFlightAtADropIsSentAgainAndCallExistsMeansItArrived() {
        var h = H()
        #expect(h.run(H.opening + [
            (.callUser("bob", id: c1), ["media offer \(c1)"]),
            (.legOffered(c1), ["send call.start id=2 callId=\(c1) to=bob"]),
            (.closed(1006), []),
            (.advance(.seconds(1)), ["connect #2"]),
            (.opened, ["token? #2"]),
            (.token("jwt-2"), ["send hello id=3 token=jwt-2 resume=s-1"]),
            (.frame(H.helloOK(re: "3", session: "s-1", resumed: true)), ["send call.start id=4 callId=\(c1) to=bob"]),
            (.frame(H.error("4", "call_exists")), []),
            (.frame(H.media(c1)), ["media accept \(c1)"]),
        ]) == [])
    }

    @Test func terminateWhileReconnectingEndsCallsWithoutSending() {
        var h = H()
        #expect(h.run(H.opening + [
            (.frame(H.incoming(c1)), ["media prepare \(c1)", "incoming \(c1) ringing"]),
            (.legPrepared(c1), ["send call.ack id=2 callId=\(c1) sdp"]),
            (.closed(1006), []),
            (.hangup(c1), []),                                 // queued: no connection
            (.terminate, ["media close \(c1)", "ended \(c1) denied"]),
            (.advance(.seconds(60)), []),                      // no reconnect after terminate
            (.answer(c1), []),
        ]) == [])
        #expect(h.core.nextDeadline == nil)
    }

    @Test func actionsOnUnknownCallsDoNothing() {
        var h = H()
        #expect(h.run(H.opening + [
            (.answer(c1), []), (.hangup(c1), []), (.legOffered(c1), []), (.legAnswered(c1), []), (.legFailed(c1), []),
        ]) == [])
        // An outgoing call cannot be answered here, and its leg cannot "answer".
        #expect(h.run([
            (.callUser("bob", id: c2), ["media offer \(c2)"]),
            (.answer(c2), []),
            (.legAnswered(c2), []),
        ]) == [])
    }

    @Test func terminateHangsUpCallsAndClosesNormally() {
        var h = H()
        #expect(h.run(H.opening + [
            (.callUser("bob", id: c1), ["media offer \(c1)"]),
            (.legOffered(c1), ["send call.start id=2 callId=\(c1) to=bob"]),
            (.frame(H.incoming(c2)), ["media prepare \(c2)", "incoming \(c2) ringing"]),
            (.legPrepared(c2), ["send call.ack id=3 callId=\(c2) sdp"]),
            (.terminate, ["send call.hangup id=4 callId=\(c2)", "media close \(c2)", "ended \(c2) denied",
                          "send call.hangup id=5 callId=\(c1)", "media close \(c1)", "ended \(c1) canceled",
                          "close #1 1000"]),
            (.closed(1000), []),
            (.advance(.seconds(60)), []),
            (.frame(H.event("call.ringing", c1)), []),
        ]) == [])
        #expect(!h.core.isStarted)
        #expect(h.run([
            (.start, ["connect #2"]),
            (.opened, ["token? #2"]),
            (.token("jwt-2"), ["send hello id=6 token=jwt-2"]),   // a fresh session: no resume
            (.frame(H.helloOK(re: "6", session: "s-9")), ["started"]),
        ]) == [], "a terminated client starts again")
    }
}
