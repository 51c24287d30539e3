import ParleyMediaCore
import Testing

@Suite("Tone generator and frequency analysis")
struct FrequencyAnalysisTests {
    @Test("dominant frequency of one second of a tone is within 1 Hz", arguments: [(440.0, 48000), (1000.0, 8000), (3100.0, 16000), (997.3, 48000)])
    func dominantFrequency(frequency: Double, sampleRate: Int) throws {
        var tone = ToneGenerator(frequency: frequency, amplitude: 0.5, sampleRate: sampleRate)
        let samples = tone.next(count: sampleRate)
        let measured = try #require(FrequencyAnalysis.dominantFrequency(samples: samples, sampleRate: sampleRate))
        #expect(abs(measured - frequency) < 1, "measured \(measured) Hz")
    }

    @Test("levels: a full-scale sine is -3 dBFS, half scale -9 dBFS")
    func levels() {
        var full = ToneGenerator(frequency: 1000, amplitude: 1, sampleRate: 48000)
        let samples = full.next(count: 48000)
        #expect(abs(FrequencyAnalysis.rmsDBFS(samples: samples) + 3.01) < 0.05)
        #expect(abs(FrequencyAnalysis.toneLevelDBFS(samples: samples, sampleRate: 48000, frequency: 1000) + 3.01) < 0.05)
        var half = ToneGenerator(frequency: 1000, amplitude: 0.5, sampleRate: 48000)
        #expect(abs(FrequencyAnalysis.rmsDBFS(samples: half.next(count: 4800)) + 9.03) < 0.05)
        #expect(FrequencyAnalysis.rmsDBFS(samples: [Int16](repeating: 0, count: 100)) == -200)
        #expect(FrequencyAnalysis.rmsDBFS(samples: []) == -200)
        #expect(FrequencyAnalysis.toneLevelDBFS(samples: samples, sampleRate: 48000, frequency: 3000) < -60)
    }

    @Test("the strongest of two tones wins; range restricts the search")
    func twoTones() throws {
        var loud = ToneGenerator(frequency: 700, amplitude: 0.4, sampleRate: 16000)
        var quiet = ToneGenerator(frequency: 2500, amplitude: 0.1, sampleRate: 16000)
        let mix = zip(loud.next(count: 16000), quiet.next(count: 16000)).map { $0 + $1 }
        let strongest = try #require(FrequencyAnalysis.dominantFrequency(samples: mix, sampleRate: 16000))
        #expect(abs(strongest - 700) < 1)
        let upper = try #require(FrequencyAnalysis.dominantFrequency(samples: mix, sampleRate: 16000, range: 1500...4000))
        #expect(abs(upper - 2500) < 1)
    }

    @Test("silence and tiny inputs have no dominant frequency")
    func degenerate() {
        #expect(FrequencyAnalysis.dominantFrequency(samples: [Int16](repeating: 0, count: 1000), sampleRate: 8000) == nil)
        #expect(FrequencyAnalysis.dominantFrequency(samples: [1, 2, 3], sampleRate: 8000) == nil)
        #expect(FrequencyAnalysis.dominantFrequency(samples: [Int16](repeating: 5, count: 100), sampleRate: 0) == nil)
    }

    @Test("tone frames are phase-continuous: frame by frame equals one block")
    func phaseContinuity() {
        var framed = ToneGenerator(frequency: 440, amplitude: 0.7, sampleRate: 48000)
        var whole = ToneGenerator(frequency: 440, amplitude: 0.7, sampleRate: 48000)
        var joined: [Int16] = []
        for _ in 0..<50 { joined += framed.next(count: 960) }
        let block = whole.next(count: 48000)
        let maxDifference = zip(joined, block).map { abs(Int($0) - Int($1)) }.max() ?? 0
        #expect(maxDifference <= 1)
        #expect(block.max() == Int16((0.7 * 32767).rounded()) || block.max() == Int16((0.7 * 32767).rounded()) - 1)
        #expect(ToneGenerator(frequency: 1, sampleRate: 8000, phase: 2.25).phase == 0.25)
    }
}
