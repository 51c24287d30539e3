import Foundation
@_spi(ParleyEngines) @testable import ParleySDKCore
import ParleySignaling
import Testing

private let c1 = "6f1c2a9e-3b7d-4c55-9a41-0e8f5d2b7c13"
private let c2 = "0d6b9f64-1e2a-4f8c-8b37-6a5c2e1f9d08"
private typealias H = CoreHarness

/// Calls to phone numbers and SIP endpoints in `ClientSessionCore`: what `call.start`
/// carries, the far side's response headers, and `call.dtmf` events.
@Suite struct ClientSessionCoreSIPTests {
    /// The `call.start` frame the core sends for the call it was asked to place.
    static func callStart(to destination: SignalingMessage.Address, headers: [String: String] = [:], cli: String? = nil) -> SignalingMessage.CallStart? {
        var h = H()
        _ = h.run(H.opening)
        _ = h.core.placeCall(to: destination, headers: headers, cli: cli, callID: c1, now: h.now)
        let outputs = h.core.legOffered(c1, sdp: "v=0\r\no=offer\r\n", now: h.now)
        guard case .send(.callStart(let start))? = outputs.first else { return nil }
        return start
    }

    @Test func aPhoneCallStartCarriesTheNumberAndTheCLI() throws {
        let start = try #require(Self.callStart(to: .phone("+4615550101"), headers: ["x-account": "77"], cli: "+46812345678"))
        #expect(start.to == .phone("+4615550101") && start.cli == "+46812345678" && start.headers == ["x-account": "77"])
        try SignalingCodec.validate(.callStart(start))
        let sip = try #require(Self.callStart(to: .sip("alice@example.test:5070;transport=tcp")))
        #expect(sip.to == .sip("alice@example.test:5070;transport=tcp") && sip.cli == nil)
        let user = try #require(Self.callStart(to: .user("bob")))
        #expect(user.to == .user("bob") && user.cli == nil, "app-to-app calls are as before")
    }

    @Test func theCallKnowsItsKindAndItsFarSidesHeaders() {
        var h = H()
        _ = h.run(H.opening)
        let (placed, _) = h.core.placeCall(to: .sip("alice@example.test"), headers: [:], callID: c1, now: h.now)
        #expect(placed.remoteKind == .sip && placed.remoteUserID == "alice@example.test" && placed.responseHeaders.isEmpty)
        _ = h.step(.legOffered(c1))
        let ringing = #"{"v":1,"type":"call.ringing","callId":"\#(c1)","time":1764421201420,"headers":{"x-queue":"support","x-position":"3"}}"#
        let answered = #"{"v":1,"type":"call.answered","callId":"\#(c1)","time":1764421205980,"headers":{"x-position":"0","X-Agent":"4711"}}"#
        #expect(h.run([
            (.frame(ringing), ["rang \(c1) ringing"]),
            (.frame(answered), ["answered \(c1) answered"]),
        ]) == [])
        // The answer's value wins for a name in both.
        #expect(h.core.calls[c1]?.responseHeaders == ["x-queue": "support", "x-position": "0", "X-Agent": "4711"])
        // Headers on the other events are not theirs: ignored.
        let progress = #"{"v":1,"type":"call.progress","callId":"\#(c2)","time":1,"headers":{"x-a":"1"}}"#
        #expect(h.step(.frame(progress)) == [])
    }

    @Test func anIncomingCallFromAPhoneNumberHasThatKind() {
        var h = H()
        _ = h.run(H.opening)
        let incoming = #"{"v":1,"type":"call.incoming","callId":"\#(c1)","from":{"kind":"phone","address":"+4615550101"},"headers":{},"video":false,"time":1764421201250,"sdp":"v=0\r\no=server\r\n"}"#
        #expect(h.step(.frame(incoming)) == ["media prepare \(c1)", "incoming \(c1) ringing"])
        #expect(h.core.calls[c1]?.remoteKind == .phone && h.core.calls[c1]?.remoteUserID == "+4615550101")
        _ = h.step(.frame(H.incoming(c2)))
        #expect(h.core.calls[c2]?.remoteKind == .user)
    }

    @Test func dtmfFromTheFarSideGoesToTheCallsDelegatesWhileTheCallLives() {
        var h = H()
        let dtmf = { (call: String, digits: String) in #"{"v":1,"type":"call.dtmf","callId":"\#(call)","digits":"\#(digits)","time":1764421207000}"# }
        #expect(h.run(H.opening + [
            (.frame(dtmf(c1, "1")), []),                       // no such call
        ]) == [])
        _ = h.core.placeCall(to: .phone("+4615550101"), headers: [:], callID: c1, now: h.now)
        #expect(h.run([
            (.legOffered(c1), ["send call.start id=2 callId=\(c1) to=+4615550101"]),
            (.frame(H.event("call.ringing", c1)), ["rang \(c1) ringing"]),
            (.frame(dtmf(c1, "4#")), ["dtmf \(c1) 4#"]),       // early media: an IVR before the answer
            (.frame(H.event("call.answered", c1)), ["answered \(c1) answered"]),
            (.frame(dtmf(c1, "0123456789*#ABCD")), ["dtmf \(c1) 0123456789*#ABCD"]),
            (.frame(dtmf(c2, "5")), []),                       // another call
            (.frame(#"{"v":1,"type":"call.dtmf","callId":"\#(c1)","digits":"x","time":1}"#), []),   // malformed: dropped
            (.frame(H.ended(c1, "hungUp")), ["media close \(c1)", "ended \(c1) hungUp"]),
            (.frame(dtmf(c1, "9")), []),                       // over
        ]) == [])
    }
}
