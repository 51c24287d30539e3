import ParleyMediaCore

/// Where in a recording a tone is heard, 20 ms frame by frame: for checks of when audio
/// arrived (early media before the answer), which `RecordingAnalysis` sums over the file.
/// Cheap enough for long recordings in a debug build: one Goertzel filter per frame, and
/// the spectrum of one second only.
struct ToneTimeline {
    static let frameMilliseconds = 20.0

    let frequency: Double
    /// Per frame, whether the tone is present: its level within 20 dB of its loudest
    /// frame and above -45 dBFS (digital silence and comfort noise are far below).
    let present: [Bool]
    private let samples: [Int16]
    private let sampleRate: Int

    init(path: String, frequency: Double) throws {
        let wav = try WAVFile.read(path: path)
        samples = wav.channels == 1 ? wav.samples : stride(from: 0, to: wav.samples.count, by: wav.channels).map { wav.samples[$0] }
        sampleRate = wav.sampleRate
        self.frequency = frequency
        let frame = wav.sampleRate / 50
        let levels = stride(from: 0, to: samples.count - frame + 1, by: frame).map { [samples] start in
            FrequencyAnalysis.toneLevelDBFS(samples: Array(samples[start..<start + frame]), sampleRate: wav.sampleRate,
                                            frequency: frequency)
        }
        let threshold = max(-45, (levels.max() ?? -200) - 20)
        present = levels.map { $0 > threshold }
    }

    /// The first frame carrying the tone.
    var firstFrame: Int? { present.firstIndex(of: true) }

    /// Seconds of tone in frames `range` (clamped to the recording).
    func seconds(in range: Range<Int>) -> Double {
        let clamped = range.clamped(to: 0..<present.count)
        return Double(present[clamped].filter { $0 }.count) * Self.frameMilliseconds / 1000
    }

    /// Share of frames with the tone, from the first that has it to the end.
    var arrivalRatio: Double {
        guard let firstFrame else { return 0 }
        return Double(present[firstFrame...].filter { $0 }.count) / Double(present.count - firstFrame)
    }

    /// Seconds from the first frame with the tone to the end.
    var audibleSeconds: Double {
        guard let firstFrame else { return 0 }
        return Double(present.count - firstFrame) * Self.frameMilliseconds / 1000
    }

    /// The strongest frequency (50-8000 Hz) of one second in the middle of the audible
    /// part; nil when the tone never came.
    var dominantFrequency: Double? {
        guard let firstFrame else { return nil }
        let frame = sampleRate / 50
        let middle = (firstFrame + present.count) / 2 * frame
        let start = max(firstFrame * frame, middle - sampleRate / 2)
        let window = Array(samples[start..<min(samples.count, start + sampleRate)])
        return FrequencyAnalysis.dominantFrequency(samples: window, sampleRate: sampleRate, range: 50...8000)
    }
}
