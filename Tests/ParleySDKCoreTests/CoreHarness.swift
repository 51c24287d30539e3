import Foundation
@_spi(ParleyEngines) @testable import ParleySDKCore
import ParleySignaling

/// Drives a `ClientSessionCore` on a virtual clock and renders its outputs as short lines
/// (`send call.ack id=3 callId=c1 sdp`: `sdp` when the frame carries one), so tests read as `input -> expected outputs` tables.
struct CoreHarness {
    enum Step {
        case start, opened, token(String), tokenFailed, connectFailed, closed(UInt16), closedOn(Int, UInt16), frame(String)
        case advance(Duration), callUser(String, id: String), legOffered(String), legAnswered(String), legFailed(String)
        case legPrepared(String), legPreparationFailed(String)
        case answer(String), hangup(String), terminate
    }

    var core: ClientSessionCore
    var instant = ContinuousClock.now
    var wall: Int64 = 1_764_421_200_000
    var connection = 0

    init(configure: (inout ClientSessionCore.Configuration) -> Void = { _ in }) {
        var configuration = ClientSessionCore.Configuration(applicationKey: "app-1", userID: "alice", deviceID: "dev-1")
        configure(&configuration)
        core = ClientSessionCore(configuration: configuration)
    }

    var now: ClientSessionCore.Time { .init(instant: instant, unixMilliseconds: wall) }

    /// The deadline relative to now, if any.
    var nextDeadlineIn: Duration? { core.nextDeadline.map { instant.duration(to: $0) } }

    mutating func step(_ step: Step) -> [String] {
        let outputs: [ClientSessionOutput]
        switch step {
        case .start: outputs = core.start(now: now)
        case .opened: outputs = core.connectionOpened(connection, now: now)
        case .token(let jwt): outputs = core.tokenProvided(jwt, connection: connection, now: now)
        case .tokenFailed: outputs = core.tokenFailed("backend down", connection: connection, now: now)
        case .connectFailed: outputs = core.connectionFailed(connection, message: "connection refused", now: now)
        case .closed(let code): outputs = core.connectionClosed(connection, code: code, reason: "", now: now)
        case .closedOn(let old, let code): outputs = core.connectionClosed(old, code: code, reason: "", now: now)
        case .frame(let json): outputs = core.frameReceived(Array(json.utf8), connection: connection, now: now)
        case .advance(let duration):
            instant += duration
            wall += Int64(duration.components.seconds * 1000) + duration.components.attoseconds / 1_000_000_000_000_000
            outputs = core.tick(now: now)
        case .callUser(let user, let id):
            outputs = core.callUser(user, headers: [:], callID: id, now: now).1
        case .legOffered(let id): outputs = core.legOffered(id, sdp: "v=0\r\no=offer\r\n", now: now)
        case .legAnswered(let id): outputs = core.legAnswered(id, sdp: "v=0\r\no=answer\r\n", now: now)
        case .legFailed(let id): outputs = core.legFailed(id, message: "ICE failed", now: now)
        case .legPrepared(let id): outputs = core.legPrepared(id, sdp: "v=0\r\no=early\r\n", now: now)
        case .legPreparationFailed(let id): outputs = core.legPreparationFailed(id, now: now)
        case .answer(let id): outputs = core.answer(id, now: now)
        case .hangup(let id): outputs = core.hangup(id, now: now)
        case .terminate: outputs = core.terminate(now: now)
        }
        for case .connect(let id) in outputs { connection = id }
        return outputs.map(Self.render)
    }

    /// Runs a table; returns the mismatches as readable lines (empty when all matched).
    mutating func run(_ table: [(Step, [String])], sourceLine: Int = #line) -> [String] {
        var mismatches: [String] = []
        for (index, row) in table.enumerated() {
            let got = step(row.0)
            if got != row.1 { mismatches.append("row \(index) \(row.0): expected \(row.1), got \(got)") }
        }
        return mismatches
    }

    static func render(_ output: ClientSessionOutput) -> String {
        guard case .send(let message) = output else { return output.description }
        var parts = ["send", message.type.rawValue]
        if let id = message.requestID { parts.append("id=\(id)") }
        if let callID = message.callID { parts.append("callId=\(callID)") }
        switch message {
        case .hello(let hello):
            parts.append("token=\(hello.token)")
            if let resume = hello.resumeSessionID { parts.append("resume=\(resume)") }
        case .callStart(let start): parts.append("to=\(start.to.address)")
        case .callAck(let ack): if ack.sdp != nil { parts.append("sdp") }
        case .callAnswer(let answer): if answer.sdp != nil { parts.append("sdp") }
        default: break
        }
        return parts.joined(separator: " ")
    }

    /// Start, token, hello.ok: the usual opening (connection 1, hello id 1, session s-1, heartbeat 25 s).
    static let opening: [(Step, [String])] = [
        (.start, ["connect #1"]),
        (.opened, ["token? #1"]),
        (.token("jwt-1"), ["send hello id=1 token=jwt-1"]),
        (.frame(helloOK(re: "1", session: "s-1")), ["started"]),
    ]

    static func helloOK(re: String, session: String, resumed: Bool = false, heartbeat: Int = 25_000) -> String {
        #"{"v":1,"type":"hello.ok","re":"\#(re)","sessionId":"\#(session)","userId":"alice","serverVersion":"0.1.0","heartbeatMs":\#(heartbeat),"time":1764421200000,"resumed":\#(resumed)}"#
    }

    static func event(_ type: String, _ callID: String, time: Int64 = 1_764_421_201_000) -> String {
        #"{"v":1,"type":"\#(type)","callId":"\#(callID)","time":\#(time)}"#
    }

    static func result(_ re: String) -> String { #"{"v":1,"type":"result","re":"\#(re)"}"# }

    static func error(_ re: String, _ code: String, _ message: String = "refused") -> String {
        #"{"v":1,"type":"error","re":"\#(re)","code":"\#(code)","message":"\#(message)"}"#
    }

    static func media(_ callID: String) -> String {
        #"{"v":1,"type":"call.media","callId":"\#(callID)","sdp":"v=0\r\no=server\r\n"}"#
    }

    static func incoming(_ callID: String, from: String = "bob") -> String {
        #"{"v":1,"type":"call.incoming","callId":"\#(callID)","from":{"kind":"user","address":"\#(from)"},"headers":{"topic":"x"},"video":false,"time":1764421201250,"sdp":"v=0\r\no=server\r\n"}"#
    }

    static func ended(_ callID: String, _ cause: String, error: (String, String)? = nil, established: Bool = false) -> String {
        let errorMember = error.map { #","error":{"code":"\#($0.0)","message":"\#($0.1)"}"# } ?? ""
        let establishedMember = established ? #","establishedTime":1764421206110"# : ""
        return #"{"v":1,"type":"call.ended","callId":"\#(callID)","cause":"\#(cause)"\#(errorMember),"details":{"startedTime":1764421201200\#(establishedMember),"endedTime":1764421318400}}"#
    }
}
