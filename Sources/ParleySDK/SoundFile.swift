import ParleyMedia

/// A WAV file decoded to 48 kHz mono once, played out in 20 ms frames.
struct SoundFile: Sendable {
    static let sampleRate = 48_000
    static let frameSamples = 960

    let samples: [Int16]
    let looping: Bool
    private(set) var position = 0

    /// Reads and converts the file; throws `ParleyClientError` `invalid_argument` for a
    /// missing or unreadable file.
    init(path: String, looping: Bool) throws(ParleyClientError) {
        let file: WAVFile
        do { file = try WAVFile.read(path: path) } catch {
            throw ParleyClientError(code: "invalid_argument", message: "cannot read WAV file \(path): \(error)")
        }
        var mono = file.samples
        if file.channels > 1 {
            let channels = file.channels
            mono = stride(from: 0, to: file.samples.count - channels + 1, by: channels).map { start in
                var sum = 0
                for c in 0..<channels { sum += Int(file.samples[start + c]) }
                return Int16(sum / channels)
            }
        }
        if file.sampleRate != Self.sampleRate {
            do {
                var resampler = try Resampler(from: file.sampleRate, to: Self.sampleRate)
                mono = resampler.process(mono)
            } catch {
                throw ParleyClientError(code: "invalid_argument", message: "cannot play WAV file \(path) at \(file.sampleRate) Hz: \(error)")
            }
        }
        samples = mono
        self.looping = looping
    }

    var isFinished: Bool { !looping && position >= samples.count }

    /// The next 20 ms (padded with silence at the end); nil once a non-looping file is over.
    mutating func nextFrame() -> [Int16]? {
        guard !samples.isEmpty, !isFinished else { return nil }
        var frame: [Int16] = []
        frame.reserveCapacity(Self.frameSamples)
        while frame.count < Self.frameSamples {
            if position >= samples.count {
                guard looping else { break }
                position = 0
            }
            let take = min(Self.frameSamples - frame.count, samples.count - position)
            frame += samples[position..<(position + take)]
            position += take
        }
        if frame.count < Self.frameSamples { frame += repeatElement(0, count: Self.frameSamples - frame.count) }
        return frame
    }
}
