import ParleyMediaCore
import Testing

@Suite("AudioPayloadCodec")
struct AudioPayloadCodecTests {
    /// For each lost frame index, whether FEC from the next packet gives other audio than
    /// PLC (libopus gives exactly the PLC output when the next packet carries no LBRR).
    static func framesWithFEC(_ payloads: [[UInt8]], lost: [Int]) throws -> Int {
        var withFEC = 0
        for index in lost {
            let fec = try #require(try AudioPayloadCodec(name: "opus"))
            let plc = try #require(try AudioPayloadCodec(name: "opus"))
            for payload in payloads[..<index] {
                _ = try fec.decode(payload[...])
                _ = try plc.decode(payload[...])
            }
            let recovered = fec.conceal(samples48k: 960, nextPayload: payloads[index + 1][...])
            let concealed = plc.conceal(samples48k: 960, nextPayload: nil)
            #expect(fec.lastConcealmentUsedFEC && !plc.lastConcealmentUsedFEC)
            if recovered != concealed { withFEC += 1 }
        }
        return withFEC
    }

    @Test("setLossProtection switches the encoder's in-band FEC on a running stream")
    func lossProtectionSwitchesLBRR() throws {
        let encoder = try #require(try AudioPayloadCodec(name: "opus", opus: .init(inbandFEC: false, expectedLossPercent: 0)))
        let frames = AudioPlayoutTests.speechLike(frames: 200)
        let off = try frames[..<100].map { try encoder.encode($0) }
        try encoder.setLossProtection(inbandFEC: true, expectedLossPercent: 10)
        let on = try frames[100...].map { try encoder.encode($0) }
        let stream = off + on
        let lostWhileOff = Array(stride(from: 20, to: 95, by: 8))
        let lostWhileOn = Array(stride(from: 120, to: 195, by: 8))
        #expect(try Self.framesWithFEC(stream, lost: lostWhileOff) == 0)
        let recovered = try Self.framesWithFEC(stream, lost: lostWhileOn)
        // SILK skips LBRR for some quiet frames (the envelope's troughs), as in the Opus tests.
        #expect(recovered >= lostWhileOn.count / 2, "FEC data in \(recovered) of \(lostWhileOn.count)")
        // And off again.
        try encoder.setLossProtection(inbandFEC: false, expectedLossPercent: 0)
        let offAgain = try AudioPlayoutTests.speechLike(frames: 60).map { try encoder.encode($0) }
        #expect(try Self.framesWithFEC(stream + offAgain, lost: Array(stride(from: 210, to: 255, by: 8))) == 0)
    }

    @Test("the Opus options' complexity reaches the encoder and tells configurations apart")
    func complexityReachesTheEncoder() throws {
        let frames = AudioPlayoutTests.speechLike(frames: 50)
        func stream(_ options: AudioPayloadCodec.OpusOptions) throws -> [[UInt8]] {
            let codec = try AudioEncoderConfiguration(kind: .opus, opus: options).makeCodec()
            return try frames.map { try codec.encode($0) }
        }
        #expect(AudioPayloadCodec.OpusOptions().complexity == 9)
        let nine = AudioPayloadCodec.OpusOptions(inbandFEC: false, expectedLossPercent: 0)
        var zero = nine
        zero.complexity = 0
        // Same settings, same bytes; another complexity, other bytes from the same audio.
        #expect(try stream(nine) == stream(nine))
        #expect(try stream(zero) != stream(nine))
        #expect(AudioEncoderConfiguration(kind: .opus, opus: zero) != AudioEncoderConfiguration(kind: .opus, opus: nine))
        var explicitNine = zero
        explicitNine.complexity = 9
        #expect(try stream(explicitNine) == stream(nine))
    }

    @Test("a complexity outside 0...10 is refused with a codec error", arguments: [-1, 11, 1_000])
    func complexityOutOfRange(complexity: Int) {
        #expect(throws: CodecError.self) {
            _ = try AudioPayloadCodec(name: "opus", opus: .init(complexity: complexity))
        }
        // G.711 has no encoder settings to refuse.
        #expect(throws: Never.self) { _ = try AudioPayloadCodec(name: "PCMU", opus: .init(complexity: complexity)) }
    }
}
