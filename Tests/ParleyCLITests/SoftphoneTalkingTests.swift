@testable import ParleyCLI
import ParleySDK
import Testing

/// `parley conference`'s `talking` lines: who talks in the room, as the SDK says.
@Suite("Softphone talking lines")
struct SoftphoneTalkingTests {
    static let id = SoftphoneControllerTests.id

    @Test func aRoomsTalkersArePrintedAsTheyChange() throws {
        var script = try SoftphoneControllerTests.Script("conference", ["standup"])
        _ = script.start()
        #expect(script.at(10, .clientStarted).last == .placeCall(callee: "standup", headers: [:], kind: .conference))
        _ = script.at(11, .callPlaced(callID: Self.id))
        _ = script.at(100, .established(callID: Self.id))
        #expect(script.at(1500, .talkersChanged(callID: Self.id, userIDs: ["p1", "p2"])) == [.print("00:00:01.500 talking: p1, p2")])
        #expect(script.at(2500, .talkersChanged(callID: Self.id, userIDs: [])) == [.print("00:00:02.500 talking: (nobody)")])
        #expect(script.at(2600, .talkersChanged(callID: SoftphoneControllerTests.other, userIDs: ["p3"])) == [], "another call's")
    }

    @Test func jsonLines() {
        let json = SoftphoneFormatter(json: true)
        let time: Int64 = 1_764_417_601_234
        #expect(json.line(.talking(userIDs: ["p1", "p2"]), callID: Self.id, timeMs: time)
            == #"{"event":"talking","timeMs":1764417601234,"callId":"\#(Self.id)","talking":["p1","p2"]}"#)
        #expect(json.line(.talking(userIDs: []), callID: Self.id, timeMs: time)
            == #"{"event":"talking","timeMs":1764417601234,"callId":"\#(Self.id)","talking":[]}"#)
    }
}
