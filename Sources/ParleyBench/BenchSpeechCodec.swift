import ParleyMediaCore
import ParleyMediaLegCore

/// The speech bench's reference row: the sentences through the media leg's own codec and
/// concealment path (`AudioPayloadCodec`) in process, with no network, jitter buffer or
/// playout, so the softphone rows can be read against what the codec alone gives.
enum CodecAlone {
    /// Encodes `reference` (any rate, resampled to 48 kHz) in 20 ms frames at the leg's
    /// default settings (`MediaLegConfiguration`: bitrate, DTX, FEC allowed, expected-loss
    /// cap), drops each packet with `lossPercent` chance from a seeded generator, decodes
    /// what is left and conceals each loss as the leg does (in-band FEC from the next
    /// packet when it arrived, else Opus PLC), and writes the 48 kHz result to `output`.
    ///
    /// FEC and expected loss are what `OpusLossProtection` settles on after a few seconds
    /// of receiver reports at this loss rate, the state a leg reaches early in a call.
    static func run(reference: String, output: String, lossPercent: Double, seed: UInt64) throws {
        // Only its codec defaults are read; the transport is none of this row's business.
        let settings = MediaLegConfiguration(plainRTP: .init())
        var protection = OpusLossProtection(allowed: settings.opusInbandFEC, maximumExpectedLossPercent: settings.opusExpectedLossPercent)
        for _ in 0..<10 { _ = protection.report(fractionLost: lossPercent / 100) }
        let options = AudioPayloadCodec.OpusOptions(bitrate: settings.opusBitrate, inbandFEC: protection.inbandFEC,
                                                    dtx: settings.opusDTX, expectedLossPercent: protection.expectedLossPercent)
        guard let encoder = try AudioPayloadCodec(name: "opus", opus: options),
              let decoder = try AudioPayloadCodec(name: "opus", opus: options) else {
            throw ChildProcess.Failure(description: "no opus codec")
        }
        let file = try WAVFile.read(path: reference)
        var mono = file.samples
        if file.channels > 1 {
            mono = stride(from: 0, to: file.samples.count, by: file.channels).map { file.samples[$0] }
        }
        var wide = mono
        if file.sampleRate != AudioPayloadCodec.interfaceRate {
            var resampler = try Resampler(from: file.sampleRate, to: AudioPayloadCodec.interfaceRate)
            // Flush the resampler's delay with silence so the end of the speech comes out.
            wide = resampler.process(mono + [Int16](repeating: 0, count: file.sampleRate / 10))
        }
        let frame = AudioPayloadCodec.frameSamples
        wide += [Int16](repeating: 0, count: (frame - wide.count % frame) % frame)
        var random = BenchRandom(seed: seed)
        var packets: [[UInt8]?] = []
        for start in stride(from: 0, to: wide.count, by: frame) {
            let payload = try encoder.encode(Array(wide[start..<(start + frame)]))
            packets.append(random.unit() * 100 < lossPercent ? nil : payload)
        }
        var decoded: [Int16] = []
        decoded.reserveCapacity(wide.count)
        for (index, packet) in packets.enumerated() {
            if let packet {
                decoded += try decoder.decode(packet[...])
            } else {
                let next = index + 1 < packets.count ? packets[index + 1] : nil
                decoded += decoder.conceal(samples: frame, nextPayload: next?[...])
            }
        }
        try WAVFile(sampleRate: AudioPayloadCodec.interfaceRate, channels: 1, samples: decoded).write(path: output)
    }
}
