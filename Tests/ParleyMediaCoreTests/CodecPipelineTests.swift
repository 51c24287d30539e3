import ParleyMediaCore
import ParleyOpus
import Testing

/// End to end through the pieces a PSTN-style transcoding leg uses.
@Suite("Codec pipeline")
struct CodecPipelineTests {
    @Test("tone -> Opus -> 48k -> resample 8k -> PCMU -> PCMU decode keeps the tone", arguments: [440.0, 1000.0])
    func opusToPCMU(frequency: Double) throws {
        var source = ToneSource(frequency: frequency, amplitude: 0.5, sampleRate: 48000, frameCount: 60)
        let encoder = try OpusEncoder()
        let decoder = try OpusDecoder()
        var resampler = try Resampler(from: 48000, to: 8000)
        var sink = WAVFileSink(sampleRate: 8000)
        var opusOutput: [Int16] = []
        while let frame = source.nextFrame() {
            let pcm = try decoder.decode(try encoder.encode(frame.samples))
            opusOutput += pcm
            let narrow = resampler.process(pcm)
            let wire = G711.muLaw(encoding: narrow)
            #expect(wire.count == 160)
            try sink.consume(AudioFrame(samples: G711.muLaw(decoding: wire), sampleRate: 8000))
        }
        // Skip 200 ms of codec and filter start-up; measure one second.
        let wideband = Array(opusOutput[9600..<57600])
        let opusFrequency = try #require(FrequencyAnalysis.dominantFrequency(samples: wideband, sampleRate: 48000))
        #expect(abs(opusFrequency - frequency) <= 5, "Opus output at \(opusFrequency) Hz")
        let narrowband = Array(sink.file.samples[1600..<9600])
        let pcmuFrequency = try #require(FrequencyAnalysis.dominantFrequency(samples: narrowband, sampleRate: 8000))
        #expect(abs(pcmuFrequency - frequency) <= 5, "PCMU output at \(pcmuFrequency) Hz")
        #expect(abs(FrequencyAnalysis.rmsDBFS(samples: narrowband) - FrequencyAnalysis.rmsDBFS(samples: wideband)) < 1.5)
    }
}
