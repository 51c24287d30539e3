/// What a call sends as this side's audio.
public enum ParleyAudioSource: Sendable, Hashable {
    /// A sine tone at this frequency in Hz.
    case tone(frequency: Double)
    /// A WAV file (PCM 16-bit, any rate, mono or stereo), optionally looping; silence after its end.
    case wavFile(path: String, looping: Bool)
    /// Silence.
    case silence
    /// The device's microphone. Not available on Linux: the call fails with `media_failed`.
    case device
}

/// Where a call's received audio goes.
public enum ParleyAudioSink: Sendable, Hashable {
    /// Recorded into a WAV file (48 kHz mono 16-bit), written when the call's media closes.
    case wavFile(path: String)
    /// Dropped.
    case discard
    /// The device's speaker. Not available on Linux: the call fails with `media_failed`.
    case device
}
