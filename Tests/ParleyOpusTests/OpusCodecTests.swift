import ParleyOpus
import ParleyTestSupport
import Testing

@Suite("Opus encode and decode")
struct OpusCodecTests {
    @Test("a tone survives encode and decode at its frequency", arguments: [440.0, 1000.0])
    func toneRoundTrip(frequency: Double) throws {
        let encoder = try OpusEncoder()
        let decoder = try OpusDecoder()
        #expect(encoder.samplesPerFrame == 960)
        let input = OpusTestSignals.tone(frequency: frequency, count: 48000 + 960 * 5)
        var output: [Int16] = []
        for frame in OpusTestSignals.frames(input, size: 960) {
            let packet = try encoder.encode(frame)
            #expect(packet.count > 0 && packet.count < 400)
            let pcm = try decoder.decode(packet)
            #expect(pcm.count == 960)
            output += pcm
        }
        // Skip the codec delay and start-up (100 ms), then measure one second.
        let settled = Array(output[4800..<(4800 + 48000)])
        let measured = try #require(OpusTestSignals.zeroCrossingFrequency(settled, sampleRate: 48000))
        #expect(abs(measured - frequency) <= 5, "decoded \(measured) Hz for \(frequency) Hz")
        let inputLevel = OpusTestSignals.rmsDBFS(Array(input[4800..<(4800 + 48000)]))
        #expect(abs(OpusTestSignals.rmsDBFS(settled) - inputLevel) < 3)
    }

    @Test("settings are applied and read back")
    func settings() throws {
        let encoder = try OpusEncoder(bitrate: 24000, complexity: 5, inbandFEC: false, packetLossPercent: 0, dtx: true)
        #expect(try encoder.bitrate() == 24000)
        try encoder.setBitrate(64000)
        #expect(try encoder.bitrate() == 64000)
        #expect(try encoder.lookahead() > 0)
        try encoder.reset()
        #expect(encoder.application == .voip && encoder.sampleRate == 48000 && encoder.channels == 1)
    }

    @Test("other sample rates and stereo")
    func otherFormats() throws {
        let encoder = try OpusEncoder(sampleRate: 16000, channels: 2)
        let decoder = try OpusDecoder(sampleRate: 16000, channels: 2)
        #expect(encoder.samplesPerFrame == 320)
        let packet = try encoder.encode([Int16](repeating: 100, count: 640))
        #expect(try decoder.sampleCount(of: packet) == 320)
        #expect(try decoder.decode(packet).count == 640)
        // Any Opus packet decodes at any supported rate.
        let narrow = try OpusDecoder(sampleRate: 8000)
        #expect(try narrow.decode(packet).count == 160)
    }

    @Test("DTX sends tiny packets for silence")
    func dtx() throws {
        let encoder = try OpusEncoder(dtx: true)
        var sizes: [Int] = []
        for _ in 0..<30 { sizes.append(try encoder.encode([Int16](repeating: 0, count: 960)).count) }
        #expect(sizes.suffix(10).allSatisfy { $0 <= 2 }, "\(sizes)")
    }
}

@Suite("Opus loss handling")
struct OpusLossTests {
    @Test("packet loss concealment yields a frame of the right length")
    func concealment() throws {
        let encoder = try OpusEncoder()
        let decoder = try OpusDecoder()
        for frame in OpusTestSignals.frames(OpusTestSignals.tone(frequency: 440, count: 960 * 5), size: 960) {
            _ = try decoder.decode(try encoder.encode(frame))
        }
        let concealed = try decoder.decodeLost()
        #expect(concealed.count == 960)
        #expect(OpusTestSignals.rmsDBFS(concealed) > -40, "PLC continues the tone rather than going silent")
        #expect(try decoder.decodeLost(samplesPerChannel: 480).count == 480)
        #expect(throws: OpusError.self) { try decoder.decodeLost(samplesPerChannel: 100) }
        // Before any packet, concealment defaults to 20 ms.
        #expect(try OpusDecoder().decodeLost().count == 960)
    }

    @Test("in-band FEC recovers a lost frame better than concealment")
    func forwardErrorCorrection() throws {
        let encoder = try OpusEncoder(bitrate: 32000, inbandFEC: true, packetLossPercent: 10)
        let input = OpusTestSignals.speechLike(count: 960 * 60)
        let packets = try OpusTestSignals.frames(input, size: 960).map { try encoder.encode($0) }
        // Reference: every packet arrives.
        let reference = try OpusDecoder()
        let clean = try packets.map { try reference.decode($0) }

        // SILK skips LBRR for some quiet frames (the envelope's troughs); there decodeFEC
        // falls back to concealment and gives exactly the PLC output.
        var recoveredScores: [Double] = []
        var concealedScores: [Double] = []
        for lost in stride(from: 10, to: 58, by: 4) {
            let withFEC = try OpusDecoder()
            let withPLC = try OpusDecoder()
            for packet in packets[0..<lost] {
                _ = try withFEC.decode(packet)
                _ = try withPLC.decode(packet)
            }
            let recovered = try withFEC.decodeFEC(nextPacket: packets[lost + 1])
            let concealed = try withPLC.decodeLost()
            #expect(recovered.count == 960 && concealed.count == 960)
            let fecScore = OpusTestSignals.correlation(recovered, clean[lost])
            let plcScore = OpusTestSignals.correlation(concealed, clean[lost])
            #expect(fecScore >= plcScore - 0.01, "frame \(lost): FEC \(fecScore), PLC \(plcScore)")
            if recovered != concealed {
                recoveredScores.append(fecScore)
                concealedScores.append(plcScore)
            }
            // The next packet still decodes normally after FEC.
            #expect(try withFEC.decode(packets[lost + 1]).count == 960)
        }
        #expect(recoveredScores.count >= 6, "FEC data found for \(recoveredScores.count) of 12 losses")
        let fecMean = recoveredScores.reduce(0, +) / Double(max(recoveredScores.count, 1))
        let plcMean = concealedScores.reduce(0, +) / Double(max(concealedScores.count, 1))
        #expect(fecMean > 0.95, "mean FEC correlation \(fecMean), PLC \(plcMean)")
        #expect(fecMean > plcMean + 0.05, "mean FEC correlation \(fecMean), PLC \(plcMean)")
    }
}

@Suite("Opus errors")
struct OpusErrorTests {
    @Test("unsupported formats and settings are refused with badArgument")
    func badArguments() throws {
        #expect { try OpusEncoder(sampleRate: 44100) } throws: { ($0 as? OpusError)?.kind == .badArgument }
        #expect { try OpusEncoder(channels: 3) } throws: { ($0 as? OpusError)?.kind == .badArgument }
        #expect { try OpusDecoder(sampleRate: 22050) } throws: { ($0 as? OpusError)?.kind == .badArgument }
        #expect { try OpusEncoder(complexity: 11) } throws: { ($0 as? OpusError)?.kind == .badArgument }
        #expect { try OpusEncoder(packetLossPercent: 101) } throws: { ($0 as? OpusError)?.kind == .badArgument }
        let encoder = try OpusEncoder()
        #expect { try encoder.encode([Int16](repeating: 0, count: 100)) } throws: { ($0 as? OpusError)?.kind == .badArgument }
        #expect { try encoder.encode([]) } throws: { ($0 as? OpusError)?.kind == .badArgument }
        #expect { try encoder.encode([Int16](repeating: 0, count: 960 * 4)) } throws: { ($0 as? OpusError)?.kind == .badArgument }
        #expect { try encoder.setBitrate(0) } throws: { ($0 as? OpusError)?.kind == .badArgument }
    }

    @Test("malformed packets throw invalidPacket")
    func garbage() throws {
        let decoder = try OpusDecoder()
        // RFC 6716 section 3.2.5: code 3 with a frame count of 0 is invalid; so is a code 3
        // packet missing its frame count byte, and a code 1 packet with an odd payload.
        for packet: [UInt8] in [[0x03, 0x00], [0x03], [0x01, 0x00, 0x00, 0x00], []] {
            #expect(performing: { try decoder.decode(packet) }, throws: { error in
                let opusError = error as? OpusError
                return opusError?.kind == .invalidPacket
            })
        }
        let error = try #require(throws: OpusError.self) { try decoder.decode([0x03, 0x00]) }
        #expect(error.description == "opus_decode failed: corrupted stream (OPUS_INVALID_PACKET, -4)")
        #expect(error.operation == "opus_decode" && error.libopusCode == -4)
        #expect(throws: OpusError.self) { try decoder.decodeFEC(nextPacket: [0x03, 0x00]) }
        #expect(throws: OpusError.self) { try decoder.sampleCount(of: [0x03, 0x00]) }
    }

    @Test("random bytes decode or throw, never trap")
    func randomBytes() throws {
        var random = SeededGenerator(seed: 0x0905)
        let decoder = try OpusDecoder()
        var errors = 0
        for _ in 0..<2000 {
            let packet = random.bytes(1 + random.below(300))
            do {
                let pcm = try decoder.decode(packet)
                #expect(pcm.count % 120 == 0 && pcm.count <= 5760)
                _ = try decoder.decodeFEC(nextPacket: packet)
            } catch {
                errors += 1
            }
        }
        #expect(errors > 0)
    }
}
