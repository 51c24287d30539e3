import ParleyMediaCore
@testable import ParleyMediaLegCore
import ParleyTestSupport
import Testing

/// RFC 2198 RED between two device legs in virtual time: the answerer's RTP to the offerer
/// crosses a hop with seeded 5 % random loss; the answerer's RED follows the offerer's
/// receiver reports, and the offerer rebuilds lost packets from the next ones.
@Suite struct MediaLegRedundancyTests {
    struct Outcome {
        var depth: Int
        var dropped: Int
        var frames: UInt64
        var concealed: UInt64
        var recovered: UInt64
        var redPacketsSent: UInt64
        /// 20 ms windows of the received tone more than 6 dB below its level.
        var damagedWindows: Int
        var windows: Int
        var dominant: Double
    }

    /// Clean for 10 s, then 5 % loss for 25 s (RED turns on), then 30 s measured.
    static func lossyCall(redundancy: Bool, seed: UInt64) throws -> Outcome {
        var offerer = MediaLegConfiguration(iceMode: .full, certificate: try #require(MediaLegCoreTests.certificates.0))
        var answerer = MediaLegConfiguration(iceMode: .lite, certificate: try #require(MediaLegCoreTests.certificates.1))
        offerer.codecs = [.opus]
        answerer.codecs = [.opus]
        offerer.opusRedundancy = redundancy
        answerer.opusRedundancy = redundancy
        var harness = try LegPairHarness(offererConfiguration: offerer, answererConfiguration: answerer)
        var dropping = false
        var dropped = 0
        var loss = SeededGenerator(seed: seed)
        let offererAddress = harness.offererAddress
        harness.filter = { bytes, _, to in
            guard to == offererAddress, bytes.count > 12, (128...191).contains(bytes[0]), !(192...223).contains(bytes[1]) else { return bytes }
            guard dropping, Double.random(in: 0..<1, using: &loss) < 0.05 else { return bytes }
            dropped += 1
            return nil
        }
        try harness.negotiate()
        try harness.startBoth()
        harness.run(for: .seconds(1))
        harness.run(for: .seconds(10), audio: true)
        // A clean path: plain packets.
        #expect(harness.answerer.redundancyPolicy.depth == 0)
        #expect(harness.answerer.statistics.redPacketsSent == 0)
        dropping = true
        harness.run(for: .seconds(25), audio: true)
        let before = harness.offerer.statistics
        let sentBefore = harness.answerer.statistics.redPacketsSent
        dropped = 0
        harness.offererReceived = []
        harness.run(for: .seconds(30), audio: true)
        let after = harness.offerer.statistics
        let heard = harness.offererReceived
        let expected = FrequencyAnalysis.rmsDBFS(samples: harness.answererTone.next(count: 9600))
        var damaged = 0
        var windows = 0
        // Skip the first second: the buffer's delay shifts what was heard.
        for start in stride(from: 48_000, to: heard.count - 960, by: 960) {
            windows += 1
            let level = FrequencyAnalysis.toneLevelDBFS(samples: Array(heard[start..<start + 960]), sampleRate: 48_000, frequency: 1000)
            if level < expected - 6 { damaged += 1 }
        }
        return Outcome(
            depth: harness.answerer.redundancyPolicy.depth, dropped: dropped,
            frames: (after.framesPlayedFromPackets + after.framesConcealed) - (before.framesPlayedFromPackets + before.framesConcealed),
            concealed: after.framesConcealed - before.framesConcealed, recovered: after.redRecovered - before.redRecovered,
            redPacketsSent: harness.answerer.statistics.redPacketsSent - sentBefore,
            damagedWindows: damaged, windows: windows,
            dominant: FrequencyAnalysis.dominantFrequency(samples: Array(heard.suffix(48_000)), sampleRate: 48_000) ?? 0)
    }

    @Test("5 % loss: RED turns on from the reports; lost packets are rebuilt, concealment drops to about p²")
    func redRecoversRandomLoss() throws {
        let red = try Self.lossyCall(redundancy: true, seed: 7)
        print("RED on: \(red)")
        #expect(red.depth == 1)
        #expect(red.redPacketsSent > 1400)
        #expect(red.dropped > 40)
        // Only a loss of two packets in a row (p² = 0.25 %) escapes one redundant frame.
        #expect(Double(red.recovered) >= 0.85 * Double(red.dropped), "\(red)")
        #expect(Double(red.concealed) <= 0.01 * Double(red.frames), "\(red)")
        #expect(abs(red.dominant - 1000) < 10)
        #expect(Double(red.damagedWindows) <= 0.01 * Double(red.windows), "\(red)")

        let plain = try Self.lossyCall(redundancy: false, seed: 7)
        print("RED off: \(plain)")
        #expect(plain.recovered == 0 && plain.redPacketsSent == 0)
        #expect(red.concealed < plain.concealed, "RED \(red) vs FEC only \(plain)")
        #expect(red.damagedWindows <= plain.damagedWindows)
    }

    @Test("the offer and answer of two legs carry red/48000/2 with fmtp 111/111")
    func negotiated() throws {
        var harness = try MediaLegCoreTests.pair(offerer: .full, answerer: .lite, codecs: [.opus])
        let offer = try harness.offerer.makeOffer()
        #expect(offer.contains("a=rtpmap:63 red/48000/2\r\n"))
        #expect(offer.contains("a=fmtp:63 111/111\r\n"))
        let answer = try harness.answerer.answer(offer: offer)
        #expect(answer.contains("a=rtpmap:63 red/48000/2\r\n"))
        try harness.offerer.acceptAnswer(answer)
    }
}
