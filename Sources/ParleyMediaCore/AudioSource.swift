/// Something that produces audio one frame at a time, for tools and tests: a tone, a WAV
/// file, silence. Sources do not pace themselves; the caller decides when to pull.
public protocol AudioSource {
    /// Sample rate of the frames this source produces.
    var sampleRate: Int { get }
    /// Channels of the frames this source produces.
    var channels: Int { get }
    /// The next frame (normally 20 ms), or nil when the source is exhausted.
    mutating func nextFrame() -> AudioFrame?
}

/// A source of a continuous sine tone in 20 ms frames, optionally ending after a duration.
public struct ToneSource: AudioSource, Sendable {
    public let sampleRate: Int
    public var channels: Int { 1 }
    private var generator: ToneGenerator
    private var remainingFrames: Int?

    /// A tone source; `frameCount` nil means endless.
    public init(frequency: Double, amplitude: Double = 0.5, sampleRate: Int = 48000, frameCount: Int? = nil) {
        self.sampleRate = sampleRate
        self.generator = ToneGenerator(frequency: frequency, amplitude: amplitude, sampleRate: sampleRate)
        self.remainingFrames = frameCount
    }

    public mutating func nextFrame() -> AudioFrame? {
        if let remaining = remainingFrames {
            guard remaining > 0 else { return nil }
            remainingFrames = remaining - 1
        }
        let samples = generator.next(count: AudioFrame.samplesPerChannel(sampleRate: sampleRate))
        return AudioFrame(samples: samples, sampleRate: sampleRate)
    }
}

/// A source that plays a WAV file in 20 ms frames; the last frame is padded with silence.
public struct WAVFileSource: AudioSource, Sendable {
    public var sampleRate: Int { file.sampleRate }
    public var channels: Int { file.channels }
    private let file: WAVFile
    private var position = 0

    /// Plays `file` from the start.
    public init(_ file: WAVFile) {
        self.file = file
    }

    /// Reads the WAV file at `path`.
    /// - Throws: `CodecError` as `WAVFile.read(path:)`.
    public init(path: String) throws(CodecError) {
        self.init(try WAVFile.read(path: path))
    }

    public mutating func nextFrame() -> AudioFrame? {
        let frameSamples = max(1, AudioFrame.samplesPerChannel(sampleRate: file.sampleRate) * file.channels)
        guard position < file.samples.count else { return nil }
        let end = min(file.samples.count, position + frameSamples)
        var samples = Array(file.samples[position..<end])
        if samples.count < frameSamples {
            samples += [Int16](repeating: 0, count: frameSamples - samples.count)
        }
        position = end
        return AudioFrame(samples: samples, sampleRate: file.sampleRate, channels: file.channels)
    }
}
