/// A block of 16-bit linear PCM: the unit that flows between sources, codecs, the jitter
/// buffer and sinks. Normally 20 ms long.
public struct AudioFrame: Sendable, Hashable {
    /// Interleaved samples (`channels` per time step).
    public var samples: [Int16]
    /// Samples per second per channel, such as 8000 or 48000.
    public var sampleRate: Int
    /// 1 (mono) or 2 (stereo).
    public var channels: Int

    /// A frame of the given samples.
    public init(samples: [Int16], sampleRate: Int, channels: Int = 1) {
        self.samples = samples
        self.sampleRate = sampleRate
        self.channels = channels
    }

    /// A silent frame lasting `milliseconds` (default 20 ms).
    public static func silence(sampleRate: Int, channels: Int = 1, milliseconds: Int = 20) -> AudioFrame {
        AudioFrame(samples: [Int16](repeating: 0, count: samplesPerChannel(sampleRate: sampleRate, milliseconds: milliseconds) * channels),
                   sampleRate: sampleRate, channels: channels)
    }

    /// Samples per channel (time steps) in the frame.
    public var samplesPerChannel: Int { channels > 0 ? samples.count / channels : 0 }

    /// The frame's length in microseconds (0 for an invalid rate).
    public var durationMicroseconds: Int {
        sampleRate > 0 ? samplesPerChannel * 1_000_000 / sampleRate : 0
    }

    /// Samples per channel in `milliseconds` of audio at `sampleRate` (160 for 20 ms at 8 kHz).
    public static func samplesPerChannel(sampleRate: Int, milliseconds: Int = 20) -> Int {
        sampleRate * milliseconds / 1000
    }
}
