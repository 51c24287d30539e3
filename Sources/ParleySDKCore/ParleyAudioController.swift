import Foundation

/// The client's audio: mute, a sound file over the call audio, and what calls send and
/// play. Settings apply to every call; `source` and `sink` are read when a call's media
/// starts, so a change applies to the next call. Mute and sound files are carried out by
/// the platform's audio engine (`ParleyMediaEngine.audio`).
///
/// On Linux there is one output: the speaker setting is kept and reported but changes
/// nothing audible.
public final class ParleyAudioController: Sendable {
    /// The platform's audio shared by every call.
    let engine: any ParleyAudioEngine
    private let settings = Locked<(source: ParleyAudioSource, sink: ParleyAudioSink)>((.silence, .discard))
    private let delegateSlot = Locked(WeakReference())
    /// Hands a delegate call to the client's callback queue, in order with its other calls.
    private let deliver: @Sendable (@escaping @Sendable () -> Void) -> Void

    init(engine: any ParleyAudioEngine, deliver: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void) {
        self.engine = engine
        self.deliver = deliver
        engine.observeRouteChanges { [weak self] speakerEnabled in
            self?.notify { speakerEnabled ? $1.audioControllerSpeakerEnabled($0) : $1.audioControllerSpeakerDisabled($0) }
        }
    }

    /// Hears mute and speaker changes, on the client's `callbackQueue`.
    public weak var delegate: (any ParleyAudioControllerDelegate)? {
        get { delegateSlot.current.object as? any ParleyAudioControllerDelegate }
        set { delegateSlot.withLock { $0.object = newValue } }
    }

    /// Sends silence instead of the source's audio on every call until `unmute()`.
    public func mute() {
        guard !engine.isMuted else { return }
        engine.setMuted(true)
        notify { $1.audioControllerMuted($0) }
    }
    /// Sends the source's audio again.
    public func unmute() {
        guard engine.isMuted else { return }
        engine.setMuted(false)
        notify { $1.audioControllerUnmuted($0) }
    }
    /// Whether calls send silence.
    public var isMuted: Bool { engine.isMuted }

    /// Plays call audio through the loudspeaker.
    public func enableSpeaker() {
        guard !engine.isSpeakerEnabled else { return }
        engine.setSpeakerEnabled(true)
        notify { $1.audioControllerSpeakerEnabled($0) }
    }
    /// Plays call audio through the default route again (the receiver on a phone).
    public func disableSpeaker() {
        guard engine.isSpeakerEnabled else { return }
        engine.setSpeakerEnabled(false)
        notify { $1.audioControllerSpeakerDisabled($0) }
    }
    /// Whether call audio plays through the loudspeaker.
    public var isSpeakerEnabled: Bool { engine.isSpeakerEnabled }

    private func notify(_ body: @escaping @Sendable (ParleyAudioController, any ParleyAudioControllerDelegate) -> Void) {
        deliver { [weak self] in
            guard let self, let delegate else { return }
            body(self, delegate)
        }
    }

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
