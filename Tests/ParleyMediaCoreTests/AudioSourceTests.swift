import ParleyMediaCore
import Testing

@Suite("Audio sources and sinks")
struct AudioSourceTests {
    @Test("tone source yields 20 ms frames that join into a clean tone")
    func toneSource() throws {
        var source = ToneSource(frequency: 1000, sampleRate: 8000, frameCount: 50)
        var sink = WAVFileSink(sampleRate: 8000)
        var frames = 0
        while let frame = source.nextFrame() {
            #expect(frame.samples.count == 160 && frame.sampleRate == 8000 && frame.channels == 1)
            #expect(frame.durationMicroseconds == 20000)
            try sink.consume(frame)
            frames += 1
        }
        #expect(frames == 50)
        let frequency = try #require(FrequencyAnalysis.dominantFrequency(samples: sink.file.samples, sampleRate: 8000))
        #expect(abs(frequency - 1000) < 1)
    }

    @Test("silence source and AudioFrame.silence")
    func silence() {
        var source = SilenceSource(sampleRate: 16000, channels: 2, frameCount: 2)
        #expect(source.nextFrame() == AudioFrame.silence(sampleRate: 16000, channels: 2))
        #expect(source.nextFrame()?.samples.count == 640)
        #expect(source.nextFrame() == nil)
        #expect(AudioFrame.silence(sampleRate: 48000).samplesPerChannel == 960)
    }

    @Test("WAV source pads the last frame; WAV sink refuses other formats")
    func wavSourceAndSink() throws {
        let file = WAVFile(sampleRate: 8000, channels: 1, samples: [Int16](repeating: 9, count: 200))
        var source = WAVFileSource(file)
        let firstFrame = source.nextFrame()
        let secondFrame = source.nextFrame()
        let first = try #require(firstFrame)
        let second = try #require(secondFrame)
        #expect(source.nextFrame() == nil)
        #expect(first.samples == [Int16](repeating: 9, count: 160))
        #expect(second.samples == [Int16](repeating: 9, count: 40) + [Int16](repeating: 0, count: 120))

        var sink = WAVFileSink(sampleRate: 8000)
        #expect { try sink.consume(AudioFrame.silence(sampleRate: 16000)) } throws: { ($0 as? CodecError)?.kind == .invalidArgument }
        try sink.consume(first)
        #expect(sink.file.samples.count == 160)
    }
}
