/// Something that consumes audio one frame at a time, for tools and tests.
public protocol AudioSink {
    /// Takes the next frame.
    /// - Throws: `CodecError` `.invalidArgument` if the frame's format does not match the sink.
    mutating func consume(_ frame: AudioFrame) throws(CodecError)
}

/// A sink that collects frames into a WAV file, to save or to analyse afterwards.
public struct WAVFileSink: AudioSink, Sendable {
    /// Everything consumed so far.
    public private(set) var file: WAVFile

    /// A sink accepting frames of this format only.
    public init(sampleRate: Int, channels: Int = 1) {
        file = WAVFile(sampleRate: sampleRate, channels: channels, samples: [])
    }

    public mutating func consume(_ frame: AudioFrame) throws(CodecError) {
        guard frame.sampleRate == file.sampleRate, frame.channels == file.channels else {
            throw CodecError(.invalidArgument, "WAV sink",
                             "frame is \(frame.sampleRate) Hz x \(frame.channels), sink is \(file.sampleRate) Hz x \(file.channels)")
        }
        file.samples += frame.samples
    }

    /// Writes what was collected to `path`.
    /// - Throws: `CodecError` `.fileError` if the file cannot be written.
    public func write(path: String) throws(CodecError) {
        try file.write(path: path)
    }
}
