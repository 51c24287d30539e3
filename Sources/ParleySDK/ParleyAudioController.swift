/// The client's audio: mute, a sound file over the call audio, and what calls send and
/// play. Settings apply to every call; `source` and `sink` are read when a call's media
/// starts, so a change applies to the next call.
///
/// On Linux there is no audio device: `.device` fails the call's media with a clear error.
public final class ParleyAudioController: @unchecked Sendable {
    // @unchecked: all state is in `Locked` values or the Sendable `AudioMixState`.
    let mix = AudioMixState()
    private let settings = Locked<(source: ParleyAudioSource, sink: ParleyAudioSink)>((.silence, .discard))

    init() {}

    /// Sends silence instead of the source's audio on every call until `unmute()`.
    public func mute() { mix.muted.withLock { $0 = true } }
    /// Sends the source's audio again.
    public func unmute() { mix.muted.withLock { $0 = false } }
    /// Whether calls send silence.
    public var isMuted: Bool { mix.muted.current }

    /// Plays a WAV file (PCM 16-bit, any rate, mono or stereo) into the local output of
    /// the calls in progress, mixed over the call audio; it replaces one already playing.
    /// - Throws: `ParleyClientError` `invalid_argument` if the file cannot be read.
    public func startPlayingSoundFile(withPath path: String, looping: Bool) throws {
        let file = try SoundFile(path: path, looping: looping)
        mix.soundFile.withLock { $0 = file }
    }

    /// Stops the sound file.
    public func stopPlayingSoundFile() { mix.soundFile.withLock { $0 = nil } }

    /// What calls send: `.tone`, `.wavFile`, `.silence` (the default) or `.device`.
    public var source: ParleyAudioSource {
        get { settings.current.source }
        set { settings.withLock { $0.source = newValue } }
    }

    /// Where calls play what they receive: `.wavFile`, `.discard` (the default) or `.device`.
    public var sink: ParleyAudioSink {
        get { settings.current.sink }
        set { settings.withLock { $0.sink = newValue } }
    }
}
