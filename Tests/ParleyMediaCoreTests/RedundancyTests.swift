import ParleyMediaCore
import ParleyRTP
import Testing

@Suite("RED policy, encoder and decoder")
struct RedundancyTests {
    @Test("on at 1 % smoothed, two frames at 6 %, back to one below 4 %, off below 0.3 %")
    func policy() {
        var policy = RedundancyPolicy(allowed: true)
        let changed1 = policy.report(fractionLost: 0)
        #expect(!changed1)
        let changed2 = policy.report(fractionLost: 0.05)
        #expect(changed2)  // smoothed 2.5 %
        #expect(policy.depth == 1)
        let changed3 = policy.report(fractionLost: 0.01)
        #expect(!changed3)  // 1.75 %: hysteresis keeps it on
        let changed4 = policy.report(fractionLost: 0.25)
        #expect(changed4)  // 13.4 %
        #expect(policy.depth == 2)
        let changed5 = policy.report(fractionLost: 0)
        #expect(!changed5)  // 6.7 %
        let changed6 = policy.report(fractionLost: 0.02)
        #expect(!changed6)  // 4.35 %: still two
        let changed7 = policy.report(fractionLost: 0)
        #expect(changed7)  // 2.2 %
        #expect(policy.depth == 1)
        for _ in 0..<2 { _ = policy.report(fractionLost: 0) }  // 0.54 %
        #expect(policy.depth == 1)
        let changed8 = policy.report(fractionLost: 0)
        #expect(changed8)
        #expect(policy.depth == 0)
        var never = RedundancyPolicy(allowed: false)
        let changed9 = never.report(fractionLost: 0.5)
        #expect(!changed9)
        #expect(never.depth == 0)
        let changed10 = never.report(fractionLost: .nan)
        #expect(!changed10)
    }

    @Test("the first report is taken whole: 3 % turns one frame on, 12 % two")
    func firstReport() {
        var light = RedundancyPolicy(allowed: true)
        let lightChanged = light.report(fractionLost: 0.03)
        #expect(lightChanged)
        #expect(light.depth == 1)
        #expect(light.smoothedLoss == 0.03)
        var heavy = RedundancyPolicy(allowed: true)
        let heavyChanged = heavy.report(fractionLost: 0.12)
        #expect(heavyChanged)
        #expect(heavy.depth == 2)
        let second = heavy.report(fractionLost: 0)
        #expect(!second)  // later reports are smoothed: 6 %, still two
        let third = heavy.report(fractionLost: 0)
        #expect(third)  // 3 %: one
        #expect(heavy.depth == 1)
        #expect(heavy.reports == 3)
    }

    @Test("encoder wraps the previous frames; decoder rebuilds only what is missing")
    func roundTrip() throws {
        var encoder = RedundantAudioEncoder(redPayloadType: 63, primaryPayloadType: 111)
        var decoder = RedundantAudioDecoder(primaryPayloadType: 111, frameDuration: 960)
        // Depth 0: remembered, sent plain.
        let plainFirst = encoder.wrap([1], timestamp: 1000, stream: 5)
        #expect(plainFirst == nil)
        encoder.depth = 2
        _ = encoder.wrap([2], timestamp: 1960, stream: 5)
        let wrappedThird = encoder.wrap([3, 3], timestamp: 2920, stream: 5)
        let third = try #require(wrappedThird)
        let parsed = try RedundantAudioPayload(parsing: third)
        #expect(parsed.redundant == [.init(payloadType: 111, timestampOffset: 1920, data: [1]),
                                     .init(payloadType: 111, timestampOffset: 960, data: [2])])
        #expect(parsed.primary == [3, 3])
        // Packets 10 (frame 1) arrived, 11 (frame 2) was lost, 12 carries both.
        decoder.note(10, ssrc: 5)
        let packet = RTPPacket(payloadType: 63, sequenceNumber: 12, timestamp: 2920, ssrc: 5, payload: third[...])
        let unwrapped = try decoder.unwrap(packet)
        #expect(unwrapped.recovered.map(\.sequenceNumber) == [11])
        #expect(unwrapped.recovered.first?.timestamp == 1960)
        #expect(Array(unwrapped.recovered.first?.payload ?? []) == [2])
        #expect(unwrapped.primary.payloadType == 111 && Array(unwrapped.primary.payload) == [3, 3])
        // The same packet again rebuilds nothing.
        let again = try decoder.unwrap(packet)
        #expect(again.recovered.isEmpty)
        // A new stream forgets the old frames.
        let wrappedFresh = encoder.wrap([9], timestamp: 50, stream: 6)
        let fresh = try #require(wrappedFresh)
        #expect(try RedundantAudioPayload(parsing: fresh).redundant.isEmpty)
        // Malformed RED throws.
        var malformed = false
        do { _ = try decoder.unwrap(RTPPacket(payloadType: 63, sequenceNumber: 13, timestamp: 3880, ssrc: 5, payload: [0xef, 0, 0][...])) } catch {
            malformed = error.kind == .truncated
        }
        #expect(malformed)
    }
}
