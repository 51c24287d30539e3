import Testing
@testable import ParleyCLI
import ParleySDK

/// The softphone's rules as `input at time -> actions`, without a server: what is printed
/// when, when it answers, hangs up, gives up, and with which exit status.
@Suite struct SoftphoneControllerTests {
    static let key = "3f6c1f2e-8d3a-4b7e-9c1d-5a2b7e9f0c41"
    static let secret = "AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA="
    static let id = "6f1c2a9e-3b7d-4c55-9a41-0e8f5d2b7c13"
    static let other = "0b8e3c1d-2f4a-4e6b-8c9d-1a2b3c4d5e6f"
    static let stats = SoftphoneStatistics(packetsSent: 100, packetsReceived: 99, packetsLost: 1, jitterMs: 1, roundTripMs: 2)

    /// A controller started at t = 0 (times in ms; the formatter prints UTC clock times).
    struct Script {
        var controller: SoftphoneController
        init(_ command: String, _ extra: [String], terminal: Bool = false) throws {
            let base = ["--server", "http://127.0.0.1:8080", "--app", SoftphoneControllerTests.key,
                        "--secret", SoftphoneControllerTests.secret, "--as", command == "call" ? "alice" : "bob"]
            let options = try SoftphoneOptions.parse(command: command, extra + base)
            controller = SoftphoneController(options: options, formatter: SoftphoneFormatter(json: false), isTerminal: terminal)
        }
        mutating func start() -> [SoftphoneController.Action] { controller.start(nowMs: 0) }
        mutating func at(_ ms: Int64, _ input: SoftphoneController.Input) -> [SoftphoneController.Action] {
            controller.handle(input, nowMs: ms)
        }
        /// Connects and, for a call, places it as call `id`.
        mutating func connected(callID: String = SoftphoneControllerTests.id) {
            _ = start()
            _ = at(10, .clientStarted)
            if case .call = controller.options.mode { _ = at(11, .callPlaced(callID: callID)) }
        }
    }

    static func ended(_ cause: ParleyCallEndCause, id: String = id, code: String? = nil, message: String? = nil) -> SoftphoneController.Input {
        .ended(callID: id, cause: cause, errorCode: code, errorMessage: message, statistics: stats)
    }

    @Test func callThatIsAnsweredAndHungUpAfterItsDuration() throws {
        var script = try Script("call", ["bob", "--duration", "2", "--header", "X-Order=1"])
        #expect(script.start() == [.print("00:00:00.000 connecting to http://127.0.0.1:8080 as alice"), .startClient])
        #expect(script.at(10, .clientStarted) == [.print("00:00:00.010 signed in as alice"), .placeCall(callee: "bob", headers: ["X-Order": "1"])])
        #expect(script.at(11, .callPlaced(callID: Self.id)) == [.print("00:00:00.011 calling bob (call \(Self.id)) headers X-Order=1")])
        #expect(script.at(50, .progressed(callID: Self.id)) == [.print("00:00:00.050 progressing")])
        #expect(script.at(60, .rang(callID: Self.id)) == [.print("00:00:00.060 ringing")])
        #expect(script.at(900, .answered(callID: Self.id)) == [.print("00:00:00.900 answered")])
        #expect(script.at(1000, .established(callID: Self.id)) == [.print("00:00:01.000 established")])
        #expect(script.at(1000, .established(callID: Self.id)) == [], "a repeated event prints nothing")
        #expect(script.at(2900, .tick(statistics: Self.stats)) == [])
        #expect(script.at(3000, .tick(statistics: Self.stats)) == [.print("00:00:03.000 hanging up (duration 2.0 s)"), .hangUp(callID: Self.id)])
        #expect(script.at(3100, .tick(statistics: Self.stats)) == [], "hangs up once")
        #expect(script.at(3200, Self.ended(.hungUp)) == [
            .print("00:00:03.200 ended hungUp"),
            .print("00:00:03.200 summary: ended hungUp, duration 2.2 s, received 99 packets, sent 100, loss 1.0 % (1 lost), jitter 1.0 ms, rtt 2.0 ms"
                + "; playout 0 frames, concealed 0 (FEC 0, comfort noise 0), silent 0, stretched 0, shrunk 0, late 0, target delay 0.0 ms"),
            .terminateClient, .exit(.success),
        ])
        #expect(script.controller.isFinished)
        #expect(script.at(3300, .tick(statistics: nil)) == [], "nothing after the end")
    }

    @Test func statisticsLinesEveryFiveSecondsOnAPipeEverySecondOnATerminal() throws {
        var piped = try Script("call", ["bob"])
        piped.connected()
        _ = piped.at(1000, .established(callID: Self.id))
        #expect(piped.at(5999, .tick(statistics: Self.stats)) == [])
        #expect(piped.at(6000, .tick(statistics: Self.stats))
            == [.print("00:00:06.000 00:05 rx 99 packets, tx 100, loss 1.0 %, jitter 1.0 ms, rtt 2.0 ms")])
        #expect(piped.at(7000, .tick(statistics: Self.stats)) == [])

        var terminal = try Script("call", ["bob"], terminal: true)
        terminal.connected()
        _ = terminal.at(1000, .established(callID: Self.id))
        #expect(terminal.at(2000, .tick(statistics: Self.stats)) == [.status("00:01 rx 99 packets, tx 100, loss 1.0 %, jitter 1.0 ms, rtt 2.0 ms")])
        #expect(terminal.at(3050, .tick(statistics: Self.stats)) == [.status("00:02 rx 99 packets, tx 100, loss 1.0 %, jitter 1.0 ms, rtt 2.0 ms")])

        var custom = try Script("call", ["bob", "--stats-interval", "0.5"], terminal: true)
        custom.connected()
        _ = custom.at(1000, .established(callID: Self.id))
        #expect(custom.at(1500, .tick(statistics: nil)).count == 1)
    }

    @Test func callToAnUnknownUserEndsWithItsErrorAndStatus3() throws {
        var script = try Script("call", ["nobody"])
        script.connected()
        #expect(script.at(40, Self.ended(.error, code: "destination_not_found", message: "destination user not found")) == [
            .print("00:00:00.040 ended error: destination user not found"),
            .print("00:00:00.040 summary: ended error: destination user not found, duration 0.0 s, received 99 packets, sent 100, loss 1.0 % (1 lost), jitter 1.0 ms, rtt 2.0 ms"
                + "; playout 0 frames, concealed 0 (FEC 0, comfort noise 0), silent 0, stretched 0, shrunk 0, late 0, target delay 0.0 ms"),
            .error("call ended: error: destination user not found"),
            .terminateClient, .exit(.callError),
        ])
    }

    @Test(arguments: [
        (ParleyCallEndCause.denied, SoftphoneExitCode.denied), (.noAnswer, .noAnswer), (.timeout, .timeout),
        (.canceled, .canceled), (.inactive, .inactive), (.hungUp, .notEstablished),
    ])
    func callEndsBeforeEstablishment(cause: ParleyCallEndCause, code: SoftphoneExitCode) throws {
        var script = try Script("call", ["bob"])
        script.connected()
        #expect(script.at(100, Self.ended(cause)).last == .exit(code))
    }

    @Test func connectionProblems() throws {
        var unreachable = try Script("call", ["bob", "--connect-timeout", "2"])
        _ = unreachable.start()
        #expect(unreachable.at(1999, .tick(statistics: nil)) == [])
        #expect(unreachable.at(2000, .tick(statistics: nil)) == [
            .error("server unreachable: http://127.0.0.1:8080 did not accept the sign-in within 2.0 s"), .terminateClient, .exit(.usage),
        ])

        var refused = try Script("listen", [])
        _ = refused.start()
        #expect(refused.at(5, .clientFailed(message: "bad token")) == [
            .error("cannot sign in to http://127.0.0.1:8080: bad token"), .terminateClient, .exit(.usage),
        ])

        var lost = try Script("call", ["bob"])
        lost.connected()
        #expect(lost.at(5000, .clientFailed(message: "connection closed")) == [
            .error("connection to http://127.0.0.1:8080 lost: connection closed"), .terminateClient, .exit(.connectionLost),
        ])

        var failedToStart = try Script("call", ["bob"])
        _ = failedToStart.start()
        _ = failedToStart.at(10, .clientStarted)
        #expect(failedToStart.at(11, .callFailedToStart(message: "client not started")) == [
            .error("cannot place the call: client not started"), .terminateClient, .exit(.callError),
        ])
    }

    @Test func interruptHangsUpThenLeaves() throws {
        var ringing = try Script("call", ["bob"])
        ringing.connected()
        _ = ringing.at(50, .rang(callID: Self.id))
        #expect(ringing.at(60, .interrupt) == [.print("00:00:00.060 hanging up (interrupted)"), .hangUp(callID: Self.id)])
        #expect(ringing.at(90, Self.ended(.canceled)).last == .exit(.canceled))

        var established = try Script("call", ["bob"])
        established.connected()
        _ = established.at(500, .established(callID: Self.id))
        _ = established.at(600, .interrupt)
        #expect(established.at(700, Self.ended(.hungUp)).last == .exit(.success), "Ctrl-C is a clean hang-up")

        var impatient = try Script("call", ["bob"])
        impatient.connected()
        _ = impatient.at(60, .interrupt)
        #expect(impatient.at(70, .interrupt) == [.terminateClient, .exit(.interrupted)])

        var connecting = try Script("call", ["bob"])
        _ = connecting.start()
        #expect(connecting.at(5, .interrupt) == [.terminateClient, .exit(.interrupted)])

        var idle = try Script("listen", [])
        idle.connected()
        #expect(idle.at(5, .interrupt) == [.terminateClient, .exit(.success)])
    }

    @Test func aServerThatNeverEndsTheCallIsNotWaitedForForever() throws {
        var script = try Script("call", ["bob", "--duration", "1", "--stats-interval", "60"])
        script.connected()
        _ = script.at(100, .established(callID: Self.id))
        _ = script.at(1100, .tick(statistics: nil))
        #expect(script.at(11_099, .tick(statistics: nil)) == [])
        #expect(script.at(11_100, .tick(statistics: nil)) == [
            .error("call did not end within 10 s of hanging up"), .terminateClient, .exit(.callError),
        ])
    }

    @Test func listenerThatAnswersAtOnce() throws {
        var script = try Script("listen", ["--answer"])
        _ = script.start()
        #expect(script.at(10, .clientStarted) == [.print("00:00:00.010 signed in as bob"), .print("00:00:00.010 listening: answering calls")])
        #expect(script.at(20, .incomingCall(callID: Self.id, caller: "alice", headers: ["topic": "x"])) == [
            .print("00:00:00.020 incoming call from alice (call \(Self.id)) headers topic=x"),
            .print("00:00:00.020 answering"), .answer(callID: Self.id),
        ])
        #expect(script.at(30, .answered(callID: Self.id)) == [.print("00:00:00.030 answered")])
        #expect(script.at(40, .established(callID: Self.id)) == [.print("00:00:00.040 established")])
        #expect(script.at(3040, Self.ended(.hungUp)).suffix(2) == [.terminateClient, .exit(.success)])
    }

    @Test func listenerThatAnswersAfterADelayAndTakesTwoCalls() throws {
        var script = try Script("listen", ["--answer", "--answer-delay", "1", "--count", "2"])
        script.connected()
        _ = script.at(20, .incomingCall(callID: Self.id, caller: "alice", headers: [:]))
        #expect(script.at(1019, .tick(statistics: nil)) == [])
        #expect(script.at(1020, .tick(statistics: nil)) == [.print("00:00:01.020 answering"), .answer(callID: Self.id)])
        #expect(script.at(1120, .tick(statistics: nil)) == [])
        _ = script.at(1200, .established(callID: Self.id))
        #expect(script.at(2000, Self.ended(.hungUp)).count == 2, "ended and summary; one call to go")
        #expect(!script.controller.isFinished)
        _ = script.at(3000, .incomingCall(callID: Self.other, caller: "carol", headers: [:]))
        #expect(script.at(3100, Self.ended(.inactive, id: Self.other)).suffix(3) == [
            .error("call ended: inactive"), .terminateClient, .exit(.inactive),
        ])
    }

    @Test func interactiveListener() throws {
        var script = try Script("listen", ["--count", "2"])
        script.connected()
        #expect(script.at(15, .inputLine("")) == [], "Enter with no call does nothing")
        _ = script.at(20, .incomingCall(callID: Self.id, caller: "alice", headers: [:]))
        #expect(script.at(30, .inputLine("x")) == [])
        #expect(script.at(40, .inputLine(" \r")) == [.print("00:00:00.040 answering"), .answer(callID: Self.id)])
        #expect(script.at(41, .inputLine("")) == [], "answers once")
        _ = script.at(100, .established(callID: Self.id))
        #expect(script.at(500, .inputLine("h")) == [.print("00:00:00.500 hanging up (asked)"), .hangUp(callID: Self.id)])
        _ = script.at(600, Self.ended(.hungUp))

        _ = script.at(700, .incomingCall(callID: Self.other, caller: "carol", headers: [:]))
        #expect(script.at(800, .inputLine("D")) == [.print("00:00:00.800 declining"), .hangUp(callID: Self.other)])
        #expect(script.at(900, Self.ended(.denied, id: Self.other)).last == .exit(.success), "declining is not a failure")
    }

    @Test func decliningListener() throws {
        var script = try Script("listen", ["--decline"])
        script.connected()
        #expect(script.at(20, .incomingCall(callID: Self.id, caller: "alice", headers: [:])) == [
            .print("00:00:00.020 incoming call from alice (call \(Self.id))"), .print("00:00:00.020 declining"), .hangUp(callID: Self.id),
        ])
        #expect(script.at(30, Self.ended(.denied)).last == .exit(.success))
    }

    @Test func aSecondCallWhileBusyIsDeclinedAndNotCounted() throws {
        var script = try Script("listen", ["--answer"])
        script.connected()
        _ = script.at(20, .incomingCall(callID: Self.id, caller: "alice", headers: [:]))
        #expect(script.at(30, .incomingCall(callID: Self.other, caller: "carol", headers: [:])) == [
            .print("00:00:00.030 incoming call from carol (call \(Self.other))"),
            .print("00:00:00.030 hanging up (busy with another call)"), .hangUp(callID: Self.other),
        ])
        #expect(script.at(40, .rang(callID: Self.other)) == [])
        #expect(script.at(50, Self.ended(.denied, id: Self.other)) == [])
        #expect(!script.controller.isFinished)
        _ = script.at(60, .established(callID: Self.id))
        #expect(script.at(70, Self.ended(.hungUp)).last == .exit(.success))
    }

    @Test func otherDevicesCallsAndStrayEventsAreIgnored() throws {
        var script = try Script("listen", [])
        script.connected()
        #expect(script.at(10, .established(callID: Self.other)) == [])
        #expect(script.at(10, Self.ended(.hungUp, id: Self.other)) == [])
        #expect(script.at(10, .callPlaced(callID: Self.other)) == [], "a listener places no calls")
        _ = script.at(20, .incomingCall(callID: Self.id, caller: "alice", headers: [:]))
        #expect(script.at(30, Self.ended(.otherDeviceAnswered)).count == 2, "ended and summary, no error")
        #expect(!script.controller.isFinished, "--count 0 listens on")

        var caller = try Script("call", ["bob"])
        caller.connected()
        #expect(caller.at(20, .incomingCall(callID: Self.other, caller: "carol", headers: [:])) == [.hangUp(callID: Self.other)])
        #expect(caller.at(30, .inputLine("")) == [])
    }
}
