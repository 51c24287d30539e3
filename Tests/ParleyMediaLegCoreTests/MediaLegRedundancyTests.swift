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
        /// The offerer's jitter-buffer target at the end.
        var targetDelayMilliseconds: Int64
        /// When the answerer first sent RED after the loss began (nil: never).
        var redAfterLoss: Duration?
    }

    /// Clean for 10 s, then `lossRate` random loss for 25 s (RED turns on), then 30 s measured.
    static func lossyCall(redundancy: Bool, seed: UInt64, lossRate: Double = 0.05) throws -> Outcome {
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
            guard dropping, Double.random(in: 0..<1, using: &loss) < lossRate else { return bytes }
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
        var redAfterLoss: Duration?
        for tenth in 1...250 {
            harness.run(for: .milliseconds(100), audio: true)
            if redAfterLoss == nil, harness.answerer.statistics.redPacketsSent > 0 { redAfterLoss = .milliseconds(100 * tenth) }
        }
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
            dominant: FrequencyAnalysis.dominantFrequency(samples: Array(heard.suffix(48_000)), sampleRate: 48_000) ?? 0,
            targetDelayMilliseconds: after.jitterBuffer.targetDelayNanoseconds / 1_000_000, redAfterLoss: redAfterLoss)
    }

    @Test("5 % loss: RED turns on from the reports; lost packets are rebuilt, concealment drops to about p²")
    func redRecoversRandomLoss() throws {
        let red = try Self.lossyCall(redundancy: true, seed: 7)
        print("RED on: \(red)")
        #expect(red.depth == 1)
        // Reports a second apart (SAVPF): protected within a few seconds of the loss.
        #expect(red.redAfterLoss.map { $0 <= .seconds(4) } == true, "\(red)")
        // While RED comes the receiver holds two frames and a margin.
        #expect(red.targetDelayMilliseconds >= 45, "\(red)")
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

    @Test("12 % loss: two redundant frames, the receiver's buffer holds them, concealment under 0.5 %")
    func deepRedundancyRecoversHeavyLoss() throws {
        let red = try Self.lossyCall(redundancy: true, seed: 11, lossRate: 0.12)
        print("RED at 12 %: \(red)")
        #expect(red.depth == 2, "\(red)")
        #expect(red.targetDelayMilliseconds >= 45, "\(red)")
        #expect(red.dropped > 150)
        // Two in a row come back from the third packet; only three in a row (p³, 0.17 %)
        // or a lost packet whose copies were lost too escape.
        #expect(Double(red.concealed) <= 0.005 * Double(red.frames), "\(red)")
        #expect(Double(red.recovered) >= 0.95 * Double(red.dropped), "\(red)")
        #expect(abs(red.dominant - 1000) < 10)
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
