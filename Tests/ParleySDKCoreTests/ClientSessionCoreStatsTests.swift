import Foundation
@_spi(ParleyEngines) @testable import ParleySDKCore
import ParleySignaling
import Testing

/// After a call's leg closed the core reports its playout counters with `call.stats`;
/// the reply, or its absence, changes nothing (the call has ended).
@Suite struct ClientSessionCoreStatsTests {
    typealias H = CoreHarness
    let c1 = "6f1c2a9e-3b7d-4c55-9a41-0e8f5d2b7c13"

    static let statistics = ParleyCallStatistics(
        framesPlayed: 240, framesFECRecovered: 2, framesConcealed: 6, framesComfortNoise: 1, framesSilent: 4,
        framesStretched: 3, framesShrunk: 5, packetsLate: 7, targetDelayMilliseconds: 39.6, currentDelayMilliseconds: 38)

    @Test func aClosedLegSendsItsPlayoutCountersAndARefusalEndsNothing() throws {
        var h = H()
        #expect(h.run(H.opening + [
            (.frame(H.incoming(c1)), ["media prepare \(c1)", "incoming \(c1) ringing"]),
            (.legPrepared(c1), ["send call.ack id=2 callId=\(c1) sdp"]),
            (.frame(H.ended(c1, "canceled")), ["media close \(c1)", "ended \(c1) canceled"]),
        ]) == [])
        let outputs = h.core.legClosed(c1, statistics: Self.statistics, now: h.now)
        #expect(outputs.map(\.description) == [
            #"send {"v":1,"type":"call.stats","id":"3","callId":"\#(c1)","playout":{"framesPlayed":240,"framesConcealed":6,"framesFECRecovered":2,"framesComfortNoise":1,"framesSilent":4,"framesStretched":3,"framesShrunk":5,"packetsLate":7,"targetDelayMs":40}}"#,
        ])
        #expect(h.run([
            (.frame(H.error("3", "invalid_state", "the call ended too long ago for call.stats")), []),
        ]) == [])
        #expect(h.core.calls.isEmpty && h.core.isStarted)
    }

    @Test func countersBeyondJSONsIntegersAreClamped() {
        let playout = ClientSessionCore.playout(ParleyCallStatistics(framesPlayed: .max, targetDelayMilliseconds: .nan))
        #expect(playout.framesPlayed == 9_007_199_254_740_991)
        #expect(playout.targetDelayMilliseconds == 0)
    }
}
