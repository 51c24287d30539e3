import ParleyMediaCore
import Testing

@Suite("Resampler")
struct ResamplerTests {
    private func tone(_ frequency: Double, rate: Int, seconds: Double = 1, amplitude: Double = 0.5) -> [Int16] {
        var generator = ToneGenerator(frequency: frequency, amplitude: amplitude, sampleRate: rate)
        return generator.next(count: Int(Double(rate) * seconds))
    }

    @Test("a 1 kHz tone keeps frequency and level through 48k -> 8k -> 48k")
    func roundTrip() throws {
        var down = try Resampler(from: 48000, to: 8000)
        var up = try Resampler(from: 8000, to: 48000)
        let input = tone(1000, rate: 48000, seconds: 1.2)
        let narrow = down.process(input)
        #expect(narrow.count == input.count / 6)
        let output = up.process(narrow)
        #expect(output.count == input.count)
        // Skip the filters' delay and measure one second.
        let settled = Array(output[4800..<52800])
        let frequency = try #require(FrequencyAnalysis.dominantFrequency(samples: settled, sampleRate: 48000))
        #expect(abs(frequency - 1000) < 1, "\(frequency) Hz")
        let inputLevel = FrequencyAnalysis.rmsDBFS(samples: Array(input[4800..<52800]))
        #expect(abs(FrequencyAnalysis.rmsDBFS(samples: settled) - inputLevel) < 0.2)
        let narrowFrequency = try #require(FrequencyAnalysis.dominantFrequency(samples: Array(narrow[800...]), sampleRate: 8000))
        #expect(abs(narrowFrequency - 1000) < 1)
    }

    @Test("anti-aliasing: a 6 kHz tone 48k -> 8k is attenuated by more than 30 dB")
    func antiAliasing() throws {
        var down = try Resampler(from: 48000, to: 8000)
        let input = tone(6000, rate: 48000, seconds: 0.5)
        let output = Array(down.process(input)[400...])
        // Without filtering it would alias to 2 kHz at the input's level.
        let inputLevel = FrequencyAnalysis.rmsDBFS(samples: input)
        let aliasLevel = FrequencyAnalysis.toneLevelDBFS(samples: output, sampleRate: 8000, frequency: 2000)
        #expect(inputLevel - aliasLevel > 30, "alias at \(aliasLevel) dBFS")
        #expect(inputLevel - FrequencyAnalysis.rmsDBFS(samples: output) > 30)
        // Same for 16k: 12 kHz would alias to 4 kHz.
        var toSixteen = try Resampler(from: 48000, to: 16000)
        let high = toSixteen.process(tone(12000, rate: 48000, seconds: 0.25))
        #expect(inputLevel - FrequencyAnalysis.rmsDBFS(samples: Array(high[400...])) > 30)
    }

    @Test("pass band: tones below 0.4 of the lower rate keep their level", arguments: [(48000, 16000), (16000, 48000), (16000, 8000), (8000, 16000), (48000, 8000), (8000, 48000)])
    func passBand(from: Int, to: Int) throws {
        var resampler = try Resampler(from: from, to: to)
        let edge = 0.4 * Double(min(from, to))
        for frequency in [300.0, 1000.0, edge * 0.95] {
            resampler.reset()
            let input = tone(frequency, rate: from, seconds: 0.2)
            let output = resampler.process(input)
            #expect(output.count == input.count * to / from)
            let settled = Array(output[(to / 50)...])
            let gain = FrequencyAnalysis.rmsDBFS(samples: settled) - FrequencyAnalysis.rmsDBFS(samples: input)
            #expect(abs(gain) < 0.3, "\(from) -> \(to) at \(frequency) Hz: \(gain) dB")
        }
    }

    @Test("streaming in 20 ms frames gives the same samples as one buffer", arguments: [(48000, 8000), (8000, 48000), (16000, 48000), (48000, 16000), (48000, 48000)])
    func streamingMatchesBlock(from: Int, to: Int) throws {
        let input = tone(440, rate: from, seconds: 0.15, amplitude: 0.9)
        var whole = try Resampler(from: from, to: to)
        let expected = whole.process(input)
        var framed = try Resampler(from: from, to: to)
        var output: [Int16] = []
        for start in stride(from: 0, to: input.count, by: from / 50) {
            let frame = Array(input[start..<min(input.count, start + from / 50)])
            let predicted = framed.outputCount(forInputCount: frame.count)
            let produced = framed.process(frame)
            #expect(produced.count == predicted)
            #expect(produced.count == frame.count * to / from)
            output += produced
        }
        #expect(output == expected)
        // Odd-sized blocks too.
        var odd = try Resampler(from: from, to: to)
        var oddOutput: [Int16] = []
        var start = 0
        for size in [1, 7, 333, 0, 1000, 2000] where start < input.count {
            oddOutput += odd.process(Array(input[start..<min(input.count, start + size)]))
            start += size
        }
        oddOutput += odd.process(Array(input[min(start, input.count)...]))
        #expect(oddOutput == expected)
    }

    @Test("the filter's delay is reported and small")
    func delay() throws {
        let down = try Resampler(from: 48000, to: 8000)
        #expect(down.delaySamples > 0 && down.delaySamples < 40)  // under 5 ms
        #expect(try Resampler(from: 8000, to: 8000).delaySamples == 0)
    }

    @Test("unsupported rates throw invalidArgument")
    func badRates() {
        #expect { try Resampler(from: 0, to: 8000) } throws: { ($0 as? CodecError)?.kind == .invalidArgument }
        #expect { try Resampler(from: 48000, to: 1_000_000) } throws: { ($0 as? CodecError)?.kind == .invalidArgument }
        #expect { try Resampler(from: 48000, to: 47999) } throws: { ($0 as? CodecError)?.kind == .invalidArgument }
        #expect((try? Resampler(from: 44100, to: 48000)) != nil)
    }

    @Test("full-scale input saturates rather than wrapping")
    func saturation() throws {
        var up = try Resampler(from: 8000, to: 48000)
        // A full-scale square wave overshoots (Gibbs); samples must clamp, not wrap.
        let square = (0..<1600).map { ($0 / 4) % 2 == 0 ? Int16.max : Int16.min }
        let output = up.process(square)
        #expect(output.contains(Int16.max) || output.contains(Int16.min))
        #expect(output.count == 9600)
    }
}
