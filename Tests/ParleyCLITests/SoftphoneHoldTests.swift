@testable import ParleyCLI
import Testing

/// The softphone's `hold` and `resume` lines during an established call, and the hold
/// events it prints.
@Suite struct SoftphoneHoldTests {
    typealias Script = SoftphoneControllerTests.Script
    static let id = SoftphoneControllerTests.id

    @Test func holdAndResumeLinesHoldTheEstablishedCallOnly() throws {
        var script = try Script("call", ["bob"])
        script.connected()
        #expect(script.at(20, .inputLine("hold")) == [], "not established yet")
        _ = script.at(100, .established(callID: Self.id))
        #expect(script.at(200, .inputLine(" HOLD ")) == [.setHeld(callID: Self.id, held: true)])
        #expect(script.at(210, .holdChanged(callID: Self.id, held: true, remoteHeld: false)) == [.print("00:00:00.210 on hold")])
        #expect(script.at(220, .holdChanged(callID: Self.id, held: true, remoteHeld: false)) == [], "once per change")
        #expect(script.at(300, .inputLine("resume")) == [.setHeld(callID: Self.id, held: false)])
        #expect(script.at(310, .holdChanged(callID: Self.id, held: false, remoteHeld: true)) == [
            .print("00:00:00.310 resumed"), .print("00:00:00.310 on hold by the other party"),
        ])
        #expect(script.at(400, .holdRefused(callID: Self.id, held: true, message: "invalid_state")) == [
            .error("call \(Self.id): the server refused to hold it: invalid_state"),
        ])
        #expect(script.at(500, .inputLine("pause")) == [])
    }

    @Test func aListenerHoldsToo() throws {
        var script = try Script("listen", ["--answer"])
        script.connected()
        _ = script.at(20, .incomingCall(callID: Self.id, caller: "alice", headers: [:]))
        _ = script.at(30, .tick(statistics: nil))
        _ = script.at(100, .established(callID: Self.id))
        #expect(script.at(200, .inputLine("hold")) == [.setHeld(callID: Self.id, held: true)])
    }
}
