import ParleyMediaCore
import ParleySDKCore

/// A WAV file as 48 kHz mono samples, played out in 20 ms frames.
struct SoundFile: Sendable {
    static let sampleRate = 48_000
    static let frameSamples = 960

    let samples: [Int16]
    let looping: Bool
    private(set) var position = 0

    /// Plays `samples` (48 kHz mono).
    init(samples: [Int16], looping: Bool) {
        self.samples = samples
        self.looping = looping
    }

    /// Reads and converts the file at once (for a call's source, set up off the caller's
    /// thread); throws `ParleyClientError` `invalid_argument` for a missing, unreadable
    /// or unplayable file.
    init(path: String, looping: Bool) throws(ParleyClientError) {
        self.init(samples: try Self.read(path: path).convert(), looping: looping)
    }

    /// A parsed file and the converter it still needs: the checks done, the heavy part
    /// (mixing down to mono and resampling to 48 kHz) left for `convert()`.
    struct Decoding: Sendable {
        let file: WAVFile
        let resampler: Resampler?

        /// Whether `convert()` has nothing to do (already 48 kHz mono).
        var isConverted: Bool { resampler == nil && file.channels == 1 }

        /// The file as 48 kHz mono.
        func convert() -> [Int16] {
            var mono = file.samples
            if file.channels > 1 {
                let channels = file.channels
                mono = stride(from: 0, to: file.samples.count - channels + 1, by: channels).map { start in
                    var sum = 0
                    for c in 0..<channels { sum += Int(file.samples[start + c]) }
                    return Int16(sum / channels)
                }
            }
            guard var resampler else { return mono }
            return resampler.process(mono)
        }
    }

    /// Reads and parses the file and sets up its converter: every check that can fail.
    static func read(path: String) throws(ParleyClientError) -> Decoding {
        let file: WAVFile
        do { file = try WAVFile.read(path: path) } catch {
            throw ParleyClientError(code: "invalid_argument", message: "cannot read WAV file \(path): \(error)")
        }
        guard file.sampleRate != sampleRate else { return Decoding(file: file, resampler: nil) }
        do {
            return Decoding(file: file, resampler: try Resampler(from: file.sampleRate, to: sampleRate))
        } catch {
            throw ParleyClientError(code: "invalid_argument", message: "cannot play WAV file \(path) at \(file.sampleRate) Hz: \(error)")
        }
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
