import Testing
import ParleyCallModel
import ParleyCallCore
import ParleySessionCore
import ParleySignaling

/// The server's session protocol as tables: each step is one input at a virtual time and
/// the outputs it must give (events left out unless a step names them). Every close code
/// of docs/protocol.md, resume within and after the grace, buffering, the heartbeat and
/// both rate limits.
@Suite struct ServerSessionCoreTests {
    typealias Output = ServerSessionOutput

    static let t0 = ContinuousClock.now
    static func at(_ seconds: Double) -> ContinuousClock.Instant {
        t0.advanced(by: .milliseconds(Int64(seconds * 1000)))
    }

    static let callID = "3f2a1b4c-0000-4000-8000-000000000001"
    static let alice = Device(user: AppUser(applicationKey: "app-1", userID: "alice"), deviceID: "phone")

    static func configuration() -> ServerSessionConfiguration {
        var configuration = ServerSessionConfiguration()
        configuration.helloTimeout = .seconds(10)
        configuration.heartbeatInterval = .seconds(20)
        configuration.reconnectGrace = .seconds(30)
        configuration.maxBufferedMessages = 3
        configuration.maxRequestsPerSecond = 2
        configuration.requestBurst = 4
        configuration.maxFrameSize = 4096
        return configuration
    }

    static func helloMessage(_ id: String = "h1", device: String = "phone", resume: String? = nil) -> SignalingMessage.Hello {
        .init(requestID: id, appKey: "app-1", token: "aaaa.bbbb.cccc", deviceID: device,
              sdk: .init(name: "test", version: "1"), resumeSessionID: resume)
    }

    static func frame(_ message: SignalingMessage) -> String { SignalingCodec.encodeToString(message) }
    static func hello(_ id: String = "h1", resume: String? = nil) -> String { frame(.hello(helloMessage(id, resume: resume))) }
    static func ping(_ id: String) -> String { frame(.ping(.init(requestID: id))) }
    static func hangup(_ id: String) -> String { frame(.callHangup(.init(requestID: id, callID: callID))) }
    static func pushRegister(_ id: String) -> String {
        frame(.pushRegister(.init(requestID: id, pushType: .apnsVoip, token: String(repeating: "ab", count: 32), appID: "com.example.app")))
    }

    /// Outputs without the log/metric events.
    static func actions(_ outputs: [Output]) -> [Output] {
        outputs.filter { if case .event = $0 { false } else { true } }
    }

    static func error(_ outputs: [Output]) -> SignalingMessage.ErrorReply? {
        for case .send(_, .error(let error), _) in outputs { return error }
        return nil
    }

    static func helloOK(_ outputs: [Output]) -> SignalingMessage.HelloOK? {
        for case .send(_, .helloOK(let ok), _) in outputs { return ok }
        return nil
    }

    /// A core with connection `1` holding alice's session `s-1` since 0 s.
    static func signedIn() -> ServerSessionCore {
        var core = ServerSessionCore(configuration: configuration())
        _ = core.connectionOpened(1, now: at(0))
        _ = core.frameReceived(hello(), on: 1, now: at(0))
        _ = core.helloAccepted(on: 1, hello: helloMessage(), userID: "alice", sessionID: "s-1", unixMillis: 1_000)
        return core
    }

    // MARK: hello

    @Test func helloTakesTheConnectionThroughVerificationToItsSession() {
        var core = ServerSessionCore(configuration: Self.configuration())
        #expect(core.connectionOpened(1, now: Self.at(0)) == [.event(.connectionOpened(1))])
        // A ping before hello is answered; anything else is refused.
        #expect(Self.actions(core.frameReceived(Self.ping("p0"), on: 1, now: Self.at(0.1)))
                == [.send(1, .pong(.init(replyTo: "p0")), device: nil)])
        let early = core.frameReceived(Self.hangup("r0"), on: 1, now: Self.at(0.2))
        #expect(Self.error(early)?.code == .notAuthenticated)
        #expect(Self.error(early)?.replyTo == "r0")
        #expect(Self.actions(core.frameReceived(Self.hello(), on: 1, now: Self.at(0.3))) == [.verifyHello(1, Self.helloMessage())])
        #expect(core.awaitsHelloVerdict(on: 1))
        #expect(Self.error(core.frameReceived(Self.hello("h2"), on: 1, now: Self.at(0.4)))?.code == .alreadyAuthenticated)

        let accepted = core.helloAccepted(on: 1, hello: Self.helloMessage(), userID: "alice", sessionID: "s-1", unixMillis: 1_234)
        let ok = Self.helloOK(accepted)
        #expect(ok?.replyTo == "h1")
        #expect(ok?.sessionID == "s-1")
        #expect(ok?.userID == "alice")
        #expect(ok?.heartbeatInterval == 20_000)
        #expect(ok?.time == 1_234)
        #expect(ok?.resumed == false)
        #expect(Self.actions(accepted).last == .deviceConnected(Self.alice, resumed: false))
        #expect(accepted.contains(.event(.authenticated(1, device: Self.alice, sessionID: "s-1", resumed: false, replayed: 0))))
        #expect(core.device(on: 1) == Self.alice)
        #expect(!core.awaitsHelloVerdict(on: 1))
        // A second hello on an authenticated connection.
        #expect(Self.error(core.frameReceived(Self.hello("h3"), on: 1, now: Self.at(1)))?.code == .alreadyAuthenticated)
        // Requests now reach the call engine.
        #expect(Self.actions(core.frameReceived(Self.hangup("r1"), on: 1, now: Self.at(1.5)))
                == [.callRequest(Self.alice, .callHangup(.init(requestID: "r1", callID: Self.callID)))])
    }

    @Test func noHelloWithinTheTimeoutCloses4002EvenWhileAHelloIsChecked() {
        var core = ServerSessionCore(configuration: Self.configuration())
        _ = core.connectionOpened(1, now: Self.at(0))
        _ = core.connectionOpened(2, now: Self.at(1))
        _ = core.frameReceived(Self.hello(), on: 2, now: Self.at(2))
        #expect(core.nextDeadline == Self.at(10))
        #expect(core.tick(now: Self.at(9.999)).isEmpty)
        #expect(Self.actions(core.tick(now: Self.at(10))) == [.close(1, code: 4002, reason: "no hello within 10.0 seconds")])
        #expect(Self.actions(core.tick(now: Self.at(11))) == [.close(2, code: 4002, reason: "no hello within 10.0 seconds")])
        // A verdict that comes after the close is ignored.
        #expect(core.helloAccepted(on: 2, hello: Self.helloMessage(), userID: "alice", sessionID: "s-1", unixMillis: 0).isEmpty)
        #expect(core.sessionCount == 0)
        // Frames from a connection being closed are ignored.
        #expect(core.frameReceived(Self.ping("p"), on: 1, now: Self.at(12)).isEmpty)
    }

    @Test func aRefusedHelloCloses4001AndARateLimitedOne4005() {
        var core = ServerSessionCore(configuration: Self.configuration())
        for id: UInt64 in [1, 2] {
            _ = core.connectionOpened(id, now: Self.at(0))
            _ = core.frameReceived(Self.hello(), on: id, now: Self.at(0))
        }
        let refused = core.helloRefused(on: 1, hello: Self.helloMessage(), code: "token_bad_signature", message: "bad signature")
        #expect(Self.actions(refused) == [
            .send(1, .error(.init(replyTo: "h1", code: .tokenBadSignature, message: "bad signature")), device: nil),
            .close(1, code: 4001, reason: "authentication failed"),
        ])
        let limited = core.helloRefused(on: 2, hello: Self.helloMessage(), code: "rate_limited", message: "too many")
        #expect(Self.actions(limited).last == .close(2, code: 4005, reason: "authentication failed"))
        #expect(core.sessionCount == 0)
    }

    @Test func aStoreFailureAnswersInternalErrorAndHelloMaySendAgain() {
        var core = ServerSessionCore(configuration: Self.configuration())
        _ = core.connectionOpened(1, now: Self.at(0))
        _ = core.frameReceived(Self.hello(), on: 1, now: Self.at(0))
        let failed = core.helloFailed(on: 1, hello: Self.helloMessage(), message: "database is locked")
        #expect(Self.error(failed)?.code == .internalError)
        #expect(!Self.actions(failed).contains { if case .close = $0 { true } else { false } })
        #expect(Self.actions(core.frameReceived(Self.hello("h2"), on: 1, now: Self.at(1))) == [.verifyHello(1, Self.helloMessage("h2"))])
    }

    @Test func anotherVersionsHelloCloses4006AndOtherFramesOnlyGetAnError() {
        var core = ServerSessionCore(configuration: Self.configuration())
        _ = core.connectionOpened(1, now: Self.at(0))
        let other = core.frameReceived(#"{"v":2,"type":"call.start","id":"x"}"#, on: 1, now: Self.at(0))
        #expect(Self.error(other)?.code == .unsupportedVersion)
        #expect(Self.actions(other).count == 1)
        let hello = core.frameReceived(#"{"v":2,"type":"hello","id":"h"}"#, on: 1, now: Self.at(0.1))
        #expect(Self.error(hello)?.code == .unsupportedVersion)
        #expect(Self.actions(hello).last == .close(1, code: 4006, reason: "unsupported protocol version"))
    }

    @Test func malformedAndOversizedFramesGetAnErrorAndTheConnectionStays() {
        var core = Self.signedIn()
        for text in ["{", "[]", #"{"v":1,"type":"call.hangup","id":"r"}"#, "\u{0}", String(repeating: "x", count: 5000)] {
            let outputs = core.frameReceived(text, on: 1, now: Self.at(1))
            #expect(Self.actions(outputs).count == 1, "\(text.prefix(20))")
            #expect(Self.error(outputs) != nil)
        }
        #expect(Self.error(core.frameReceived(String(repeating: "x", count: 5000), on: 1, now: Self.at(5)))?.code == .tooLarge)
        #expect(core.device(on: 1) == Self.alice)
    }

    // MARK: Heartbeat

    @Test func silenceForTwiceTheHeartbeatCloses4004AndAnyFrameKeepsItOpen() {
        var core = Self.signedIn()
        #expect(core.nextDeadline == Self.at(40))
        _ = core.frameReceived(Self.ping("p1"), on: 1, now: Self.at(30))
        // The check at 40 s finds the ping at 30 s and looks again at 70 s.
        #expect(core.tick(now: Self.at(40)).isEmpty)
        #expect(core.nextDeadline == Self.at(70))
        let closed = core.tick(now: Self.at(70))
        #expect(Self.actions(closed) == [.close(1, code: 4004, reason: "heartbeat timeout")])
        #expect(closed.contains(.event(.heartbeatTimedOut(1, device: Self.alice))))
    }

    // MARK: Sessions

    @Test func aResumeWithinTheGraceTakesTheSessionAndItsBufferedMessagesInOrder() {
        var core = Self.signedIn()
        let closed = core.connectionClosed(1, code: 1006, now: Self.at(5))
        #expect(Self.actions(closed) == [.deviceDisconnected(Self.alice)])
        #expect(!core.isConnected(Self.alice))
        let ringing = SignalingMessage.callRinging(.init(callID: "c-1", time: 1))
        let ended = SignalingMessage.error(.init(replyTo: "r9", code: .callNotFound, message: "no such call"))
        #expect(core.deliver(ringing, to: Self.alice) == [.event(.messageBuffered(ringing, device: Self.alice))])
        _ = core.deliver(ended, to: Self.alice)

        _ = core.connectionOpened(2, now: Self.at(20))
        _ = core.frameReceived(Self.hello("h2", resume: "s-1"), on: 2, now: Self.at(20))
        let resumed = core.helloAccepted(on: 2, hello: Self.helloMessage("h2", resume: "s-1"), userID: "alice", sessionID: "s-2",
                                         unixMillis: 2_000)
        #expect(Self.helloOK(resumed)?.sessionID == "s-1")
        #expect(Self.helloOK(resumed)?.resumed == true)
        let afterOK = Self.actions(resumed).drop { if case .send(_, .helloOK, _) = $0 { false } else { true } }.dropFirst()
        #expect(Array(afterOK) == [.replay(2, ringing), .replay(2, ended), .deviceConnected(Self.alice, resumed: true)])
        // The expiry of the grace was cancelled by the resume.
        #expect(core.tick(now: Self.at(36)).isEmpty)
        #expect(core.sessionID(of: Self.alice) == "s-1")
        #expect(core.deliver(ringing, to: Self.alice) == [.send(2, ringing, device: Self.alice)])
    }

    @Test func afterTheGraceTheSessionIsGoneAndAResumeStartsANewOne() {
        var core = Self.signedIn()
        _ = core.connectionClosed(1, code: nil, now: Self.at(5))
        let ringing = SignalingMessage.callRinging(.init(callID: "c-1", time: 1))
        for _ in 0..<5 { _ = core.deliver(ringing, to: Self.alice) }  // 3 kept, 2 dropped
        let expired = core.tick(now: Self.at(35))
        #expect(expired == [.event(.sessionExpired(sessionID: "s-1", device: Self.alice, dropped: 5))])
        #expect(core.sessionCount == 0)
        #expect(core.deliver(ringing, to: Self.alice) == [.event(.messageDropped(ringing, device: Self.alice))])

        _ = core.connectionOpened(2, now: Self.at(40))
        _ = core.frameReceived(Self.hello("h2", resume: "s-1"), on: 2, now: Self.at(40))
        let fresh = core.helloAccepted(on: 2, hello: Self.helloMessage("h2", resume: "s-1"), userID: "alice", sessionID: "s-2",
                                       unixMillis: 3_000)
        #expect(Self.helloOK(fresh)?.sessionID == "s-2")
        #expect(Self.helloOK(fresh)?.resumed == false)
        #expect(!fresh.contains { if case .replay = $0 { true } else { false } })
    }

    @Test func theBufferKeepsAtMostItsLimitAndCountsTheRest() {
        var core = Self.signedIn()
        _ = core.connectionClosed(1, code: 1001, now: Self.at(1))
        let messages = (0..<5).map { SignalingMessage.callRinging(.init(callID: "c-\($0)", time: 1)) }
        let outputs = messages.flatMap { core.deliver($0, to: Self.alice) }
        #expect(outputs.filter { if case .event(.messageBuffered) = $0 { true } else { false } }.count == 3)
        #expect(outputs.filter { if case .event(.messageDropped) = $0 { true } else { false } }.count == 2)
        _ = core.connectionOpened(2, now: Self.at(2))
        _ = core.frameReceived(Self.hello("h2", resume: "s-1"), on: 2, now: Self.at(2))
        let resumed = core.helloAccepted(on: 2, hello: Self.helloMessage("h2", resume: "s-1"), userID: "alice", sessionID: "x", unixMillis: 0)
        #expect(resumed.compactMap { if case .replay(_, let message) = $0 { message } else { nil } } == Array(messages.prefix(3)))
    }

    @Test func aNewerConnectionOfTheDeviceReplacesTheOlderWith4003() {
        var core = Self.signedIn()
        _ = core.connectionOpened(2, now: Self.at(1))
        _ = core.frameReceived(Self.hello("h2"), on: 2, now: Self.at(1))
        let replaced = core.helloAccepted(on: 2, hello: Self.helloMessage("h2"), userID: "alice", sessionID: "s-2", unixMillis: 0)
        #expect(replaced.contains(.event(.connectionReplaced(1, by: 2, device: Self.alice))))
        #expect(Self.actions(replaced).first == .close(1, code: 4003, reason: "replaced by a newer connection"))
        #expect(Self.helloOK(replaced)?.sessionID == "s-2")
        #expect(Self.actions(replaced).last == .deviceConnected(Self.alice, resumed: false))
        // The old connection is gone: its frames and its close change nothing.
        #expect(core.frameReceived(Self.ping("p"), on: 1, now: Self.at(2)).isEmpty)
        #expect(core.connectionClosed(1, code: 4003, now: Self.at(2)).isEmpty)
        #expect(core.isConnected(Self.alice))
        #expect(core.connectionCount == 1)
    }

    @Test func aNormalCloseIsALogoutThatEndsTheSessionAtOnce() {
        var core = Self.signedIn()
        let closed = core.connectionClosed(1, code: 1000, now: Self.at(3))
        #expect(Self.actions(closed) == [.deviceLoggedOut(Self.alice)])
        #expect(closed.contains(.event(.sessionClosed(sessionID: "s-1", device: Self.alice))))
        #expect(core.sessionCount == 0)
        #expect(core.nextDeadline == nil)
    }

    // MARK: Rate limits

    @Test func framesOverTheSoftLimitAreAnsweredRateLimitedNotCarriedOut() {
        var core = Self.signedIn()  // burst 4 (hello took one), 2 per second
        var answers: [SignalingErrorCode?] = []
        for index in 0..<4 {
            let outputs = core.frameReceived(Self.hangup("r\(index)"), on: 1, now: Self.at(0))
            answers.append(Self.error(outputs)?.code)
        }
        #expect(answers == [nil, nil, nil, .rateLimited])
        let refused = core.frameReceived(Self.hangup("r4"), on: 1, now: Self.at(0))
        #expect(Self.error(refused)?.replyTo == "r4")
        #expect(!Self.actions(refused).contains { if case .callRequest = $0 { true } else { false } })
        // Half a second later one token is back.
        #expect(Self.error(core.frameReceived(Self.hangup("r5"), on: 1, now: Self.at(0.5))) == nil)
        #expect(Self.error(core.frameReceived(Self.hangup("r6"), on: 1, now: Self.at(0.5)))?.code == .rateLimited)
    }

    @Test func theHardLimitCloses4005OnlyAfterPendingRepliesWentOut() {
        var core = Self.signedIn()
        let push = core.frameReceived(Self.pushRegister("p1"), on: 1, now: Self.at(1))
        guard case .pushRequest(1, Self.alice, _)? = Self.actions(push).first else {
            Issue.record("push.register is not handed out as a push request: \(push)")
            return
        }
        #expect(core.rateLimitReached(on: 1).isEmpty)
        let closing = core.requestAnswered(on: 1)
        #expect(Self.actions(closing) == [
            .send(1, .error(.init(replyTo: nil, code: .rateLimited, message: "message rate limit exceeded; closing")), device: Self.alice),
            .close(1, code: 4005, reason: "message rate limit exceeded"),
        ])
        #expect(core.rateLimitReached(on: 1).isEmpty)
    }

    @Test func theHardLimitWaitsForAHelloBeingChecked() {
        var core = ServerSessionCore(configuration: Self.configuration())
        _ = core.connectionOpened(1, now: Self.at(0))
        _ = core.frameReceived(Self.hello(), on: 1, now: Self.at(0))
        #expect(core.rateLimitReached(on: 1).isEmpty)
        let accepted = core.helloAccepted(on: 1, hello: Self.helloMessage(), userID: "alice", sessionID: "s-1", unixMillis: 0)
        let actions = Self.actions(accepted)
        #expect(Self.helloOK(accepted) != nil)
        #expect(actions.last == .close(1, code: 4005, reason: "message rate limit exceeded"))
    }

    // MARK: Stop

    @Test func stoppingTellsEveryConnectionAndRefusesNewOnes() {
        var core = Self.signedIn()
        _ = core.connectionOpened(2, now: Self.at(1))
        let stopping = core.stop()
        #expect(stopping.map { output -> UInt64? in if case .send(let id, .error(let error), _) = output, error.code == .shuttingDown { id } else { nil } }
                == [1, 2])
        #expect(core.connectionOpened(3, now: Self.at(2)) == [.close(3, code: 1001, reason: "server shutting down")])
        #expect(core.frameReceived(Self.ping("p"), on: 1, now: Self.at(2)).isEmpty)
        #expect(core.nextDeadline == nil)
        #expect(core.stop().isEmpty)
    }

    @Test func requestsWaitingForTheirRepliesAreLimited() {
        var configuration = Self.configuration()
        configuration.maxRequestsPerSecond = 1_000
        configuration.requestBurst = 1_000
        configuration.maxRequestsInFlight = 3
        var core = ServerSessionCore(configuration: configuration)
        _ = core.connectionOpened(1, now: Self.at(0))
        _ = core.frameReceived(Self.hello(), on: 1, now: Self.at(0))
        _ = core.helloAccepted(on: 1, hello: Self.helloMessage(), userID: "alice", sessionID: "s-1", unixMillis: 0)
        // Three requests the engine answers later (held behind a store commit, say).
        for index in 0..<3 {
            #expect(Self.error(core.frameReceived(Self.hangup("r\(index)"), on: 1, now: Self.at(1))) == nil)
        }
        let fourth = core.frameReceived(Self.hangup("r3"), on: 1, now: Self.at(1))
        #expect(Self.error(fourth)?.code == .rateLimited)
        #expect(Self.error(fourth)?.replyTo == "r3")
        #expect(!Self.actions(fourth).contains { if case .callRequest = $0 { true } else { false } })
        // A ping is answered at once and never counts.
        #expect(Self.actions(core.frameReceived(Self.ping("p"), on: 1, now: Self.at(1))) == [.send(1, .pong(.init(replyTo: "p")), device: Self.alice)])
        // One reply goes out: one more request is taken.
        _ = core.deliver(.result(.init(replyTo: "r1")), to: Self.alice)
        #expect(Self.error(core.frameReceived(Self.hangup("r4"), on: 1, now: Self.at(1))) == nil)
        #expect(Self.error(core.frameReceived(Self.hangup("r5"), on: 1, now: Self.at(1)))?.code == .rateLimited)
        // A reply to a request id not in flight changes nothing.
        _ = core.deliver(.result(.init(replyTo: "r1")), to: Self.alice)
        #expect(Self.error(core.frameReceived(Self.hangup("r6"), on: 1, now: Self.at(1)))?.code == .rateLimited)
    }
}
