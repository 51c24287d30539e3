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
            let recovered = fec.conceal(samples: 960, nextPayload: payloads[index + 1][...])
            let concealed = plc.conceal(samples: 960, nextPayload: nil)
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

    @Test("made for 16 kHz audio: the same Opus and G.711 on the wire, 320-sample frames on the audio side",
          arguments: ["opus", "PCMA"])
    func sixteenKilohertzAudioSide(codecName: String) throws {
        let narrow = try #require(try AudioPayloadCodec(name: codecName, audioRate: 16_000))
        let wide = try #require(try AudioPayloadCodec(name: codecName))
        #expect(narrow.audioRate == 16_000 && narrow.samplesPerFrame == 320 && wide.samplesPerFrame == 960)
        #expect(narrow.clockRate == wide.clockRate && narrow.timestampStep == wide.timestampStep)
        var tone16 = ToneGenerator(frequency: 700, amplitude: 0.2, sampleRate: 16_000)
        var tone48 = ToneGenerator(frequency: 700, amplitude: 0.2, sampleRate: 48_000)
        let payloads16 = try (0..<50).map { _ in try narrow.encode(tone16.next(count: 320)) }
        let payloads48 = try (0..<50).map { _ in try wide.encode(tone48.next(count: 960)) }
        // Either side decodes what the other encoded: the payload format does not depend
        // on the audio rate (Opus's packets carry their own bandwidth).
        let crossedTo48 = try payloads16.flatMap { try wide.decode($0[...]) }
        let crossedTo16 = try payloads48.flatMap { try narrow.decode($0[...]) }
        #expect(crossedTo48.count == 50 * 960 && crossedTo16.count == 50 * 320)
        let sent = FrequencyAnalysis.rmsDBFS(samples: tone48.next(count: 48_000))
        let at48 = FrequencyAnalysis.toneLevelDBFS(samples: Array(crossedTo48.suffix(48 * 500)), sampleRate: 48_000, frequency: 700)
        let at16 = FrequencyAnalysis.toneLevelDBFS(samples: Array(crossedTo16.suffix(16 * 500)), sampleRate: 16_000, frequency: 700)
        #expect(abs(at48 - sent) < 2 && abs(at16 - sent) < 2, "\(at48) and \(at16) dBFS, sent at \(sent)")
        // A lost frame is concealed at the audio rate.
        #expect(narrow.conceal(samples: 320, nextPayload: nil).count == 320)
        if codecName == "opus" {
            // 30 ms and a bit at 16 kHz is no Opus frame.
            #expect(throws: CodecError.self) { _ = try narrow.encode(tone16.next(count: 500)) }
        }
    }

    @Test("an audio rate a codec cannot run is refused", arguments: [0, 11_025, 44_100, 96_000])
    func unsupportedAudioRate(rate: Int) {
        #expect(throws: CodecError.self) { _ = try AudioPayloadCodec(name: "opus", audioRate: rate) }
        #expect(throws: CodecError.self) { _ = try AudioPayloadCodec(name: "PCMU", audioRate: rate) }
        #expect(throws: CodecError.self) { _ = try AudioEncoderConfiguration(kind: .opus, audioRate: rate).makeCodec() }
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
