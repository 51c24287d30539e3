import Foundation

/// The client's audio: mute, a sound file over the call audio, and what calls send and
/// play. Settings apply to every call; `source` and `sink` are read when a call's media
/// starts, so a change applies to the next call. Mute and sound files are carried out by
/// the platform's audio engine (`ParleyMediaEngine.audio`).
///
/// On Linux there is no audio device: `.device` fails the call's media with a clear error.
public final class ParleyAudioController: Sendable {
    /// The platform's audio shared by every call.
    let engine: any ParleyAudioEngine
    private let settings = Locked<(source: ParleyAudioSource, sink: ParleyAudioSink)>((.silence, .discard))

    init(engine: any ParleyAudioEngine) { self.engine = engine }

    /// Sends silence instead of the source's audio on every call until `unmute()`.
    public func mute() { engine.setMuted(true) }
    /// Sends the source's audio again.
    public func unmute() { engine.setMuted(false) }
    /// Whether calls send silence.
    public var isMuted: Bool { engine.isMuted }

    /// Plays a WAV file (PCM 16-bit, any rate, mono or stereo) into the local output of
    /// the calls in progress, mixed over the call audio; it replaces one already playing.
    ///
    /// Returns without waiting for the conversion to 48 kHz mono: the file is read and
    /// checked here, converted in the background and starts playing when that is done. A
    /// file played before (unchanged on disk) starts at once.
    /// - Throws: `ParleyClientError` `invalid_argument` if the file cannot be read or played.
    public func startPlayingSoundFile(withPath path: String, looping: Bool) throws {
        try engine.startPlayingSoundFile(withPath: path, looping: looping)
    }

    /// Stops the sound file (also one still being converted).
    public func stopPlayingSoundFile() { engine.stopPlayingSoundFile() }
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
