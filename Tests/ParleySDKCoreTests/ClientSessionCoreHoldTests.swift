import Foundation
@_spi(ParleyEngines) @testable import ParleySDKCore
import ParleySignaling
import Testing

private let c1 = "6f1c2a9e-3b7d-4c55-9a41-0e8f5d2b7c13"
private typealias H = CoreHarness

/// `setHeld` in `ClientSessionCore`: `call.hold` sent only on an established call, its
/// reply completing the request without ever ending the call, and `call.held` events.
@Suite struct ClientSessionCoreHoldTests {
    /// An outgoing call to bob, established (requests so far: hello 1, call.start 2).
    static func established() -> CoreHarness {
        var h = H()
        _ = h.run(H.opening)
        _ = h.step(.callUser("bob", id: c1))
        _ = h.run([
            (.legOffered(c1), []),
            (.frame(H.result("2")), []),
            (.frame(H.event("call.answered", c1)), []),
            (.frame(H.event("call.established", c1)), []),
        ])
        return h
    }

    func hold(_ h: inout CoreHarness, _ held: Bool) -> [String] {
        h.core.hold(c1, held: held, now: h.now).map(H.render)
    }

    @Test func aHoldBeforeTheCallIsEstablishedIsRefusedAtOnceAndNothingIsSent() {
        var h = H()
        _ = h.run(H.opening)
        #expect(hold(&h, true) == ["hold \(c1) true invalid_state"])
        _ = h.step(.callUser("bob", id: c1))
        _ = h.step(.legOffered(c1))
        #expect(hold(&h, true) == ["hold \(c1) true invalid_state"])
        #expect(h.core.calls[c1]?.isHeld == false)
    }

    @Test func anAcceptedHoldCompletesThenChangesTheCallOnce() {
        var h = Self.established()
        #expect(hold(&h, true) == ["send call.hold id=3 callId=\(c1)"])
        #expect(h.step(.frame(H.result("3"))) == ["hold \(c1) true ok", "holdChanged \(c1) established"])
        #expect(h.core.calls[c1]?.isHeld == true)
        // Holding again: accepted, nothing changes.
        #expect(hold(&h, true) == ["send call.hold id=4 callId=\(c1)"])
        #expect(h.step(.frame(H.result("4"))) == ["hold \(c1) true ok"])
        #expect(hold(&h, false) == ["send call.hold id=5 callId=\(c1)"])
        #expect(h.step(.frame(H.result("5"))) == ["hold \(c1) false ok", "holdChanged \(c1) established"])
        #expect(h.core.calls[c1]?.isHeld == false)
    }

    @Test func aRefusedOrUnansweredHoldCompletesWithTheErrorAndTheCallGoesOn() {
        var h = Self.established()
        _ = hold(&h, true)
        #expect(h.step(.frame(H.error("3", "not_implemented", "a conference room call cannot be held"))) == ["hold \(c1) true not_implemented"])
        #expect(h.core.calls[c1]?.state == .established && h.core.calls[c1]?.isHeld == false)
        _ = hold(&h, true)
        let timedOut = h.step(.advance(.seconds(11)))
        #expect(timedOut.contains("hold \(c1) true request_timeout"), "\(timedOut)")
        #expect(h.core.calls[c1]?.state == .established)
    }

    @Test func aHoldWaitingWhenTheCallEndsCompletesCallEnded() {
        var h = Self.established()
        _ = hold(&h, true)
        #expect(h.step(.frame(H.ended(c1, "hungUp", established: true))) == ["hold \(c1) true call_ended", "media close \(c1)", "ended \(c1) hungUp"])
    }

    @Test func theOtherPartysHoldChangesTheCallOncePerChange() {
        var h = Self.established()
        let held = { (value: Bool) in #"{"v":1,"type":"call.held","callId":"\#(c1)","held":\#(value),"by":"callee","time":1764421210500}"# }
        #expect(h.run([
            (.frame(held(true)), ["holdChanged \(c1) established"]),
            (.frame(held(true)), []),
            (.frame(held(false)), ["holdChanged \(c1) established"]),
            (.frame(#"{"v":1,"type":"call.held","callId":"\#(c1)","held":true,"by":"nobody","time":1}"#), []),  // malformed: dropped
        ]) == [])
        #expect(h.core.calls[c1]?.isRemoteHeld == false)
    }
}
