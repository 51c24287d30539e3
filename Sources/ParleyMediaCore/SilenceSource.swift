/// A source of digital silence in 20 ms frames, optionally ending after a number of frames.
public struct SilenceSource: AudioSource, Sendable {
    public let sampleRate: Int
    public let channels: Int
    private var remainingFrames: Int?

    /// A silence source; `frameCount` nil means endless.
    public init(sampleRate: Int = 48000, channels: Int = 1, frameCount: Int? = nil) {
        self.sampleRate = sampleRate
        self.channels = channels
        self.remainingFrames = frameCount
    }

    public mutating func nextFrame() -> AudioFrame? {
        if let remaining = remainingFrames {
            guard remaining > 0 else { return nil }
            remainingFrames = remaining - 1
        }
        return AudioFrame.silence(sampleRate: sampleRate, channels: channels)
    }
}
