import ParleyMediaCore

/// What a `--record` WAV file shows: whose tone it carries and how much of it arrived.
struct RecordingAnalysis {
    /// Dominant frequency of the part after the first audio arrived (Hz).
    let dominantFrequency: Double?
    /// Share of 20 ms frames, from the first one carrying the tone to the end, in which
    /// the tone is present (within 20 dB of its level over the whole span).
    let arrivalRatio: Double
    /// Seconds of audio from the first tone frame to the end.
    let audibleSeconds: Double

    init(path: String, expectedFrequency: Double) throws {
        let wav = try WAVFile.read(path: path)
        let mono = wav.channels == 1 ? wav.samples : stride(from: 0, to: wav.samples.count, by: wav.channels).map { wav.samples[$0] }
        let frame = wav.sampleRate / 50
        let frames = stride(from: 0, to: mono.count - frame + 1, by: frame).map { Array(mono[$0..<$0 + frame]) }
        // A frame carries the tone when it is well above digital silence at that frequency.
        let levels = frames.map { FrequencyAnalysis.toneLevelDBFS(samples: $0, sampleRate: wav.sampleRate, frequency: expectedFrequency) }
        guard let first = levels.firstIndex(where: { $0 > -45 }) else {
            dominantFrequency = FrequencyAnalysis.dominantFrequency(samples: mono, sampleRate: wav.sampleRate, range: 50...8000)
            arrivalRatio = 0
            audibleSeconds = 0
            return
        }
        let span = levels[first...]
        let peak = span.max() ?? -200
        let present = span.filter { $0 > max(-45, peak - 20) }.count
        arrivalRatio = Double(present) / Double(span.count)
        audibleSeconds = Double(span.count) / 50
        let audible = Array(mono[(first * frame)...])
        dominantFrequency = FrequencyAnalysis.dominantFrequency(samples: audible, sampleRate: wav.sampleRate, range: 50...8000)
    }
}
