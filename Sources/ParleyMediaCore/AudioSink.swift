/// Something that consumes audio one frame at a time, for tools and tests.
public protocol AudioSink {
    /// Takes the next frame.
    /// - Throws: `CodecError` `.invalidArgument` if the frame's format does not match the sink.
    mutating func consume(_ frame: AudioFrame) throws(CodecError)
}

extension AudioFrame {
    /// Checks that the frame has the format a sink takes; sinks outside this module use it
    /// to refuse a frame with the same error as the sinks here.
    /// - Parameter context: names the sink in the error, such as `WAV sink`.
    /// - Throws: `CodecError` `.invalidArgument` naming both formats if they differ.
    public func requireFormat(sampleRate: Int, channels: Int, for context: String) throws(CodecError) {
        guard self.sampleRate == sampleRate, self.channels == channels else {
            throw CodecError(.invalidArgument, context,
                             "frame is \(self.sampleRate) Hz x \(self.channels), sink is \(sampleRate) Hz x \(channels)")
        }
    }
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
        try frame.requireFormat(sampleRate: file.sampleRate, channels: file.channels, for: "WAV sink")
        file.samples += frame.samples
    }

    /// Writes what was collected to `path`.
    /// - Throws: `CodecError` `.fileError` if the file cannot be written.
    public func write(path: String) throws(CodecError) {
        try file.write(path: path)
    }
}
