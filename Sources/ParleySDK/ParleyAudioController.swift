import Foundation

/// The client's audio: mute, a sound file over the call audio, and what calls send and
/// play. Settings apply to every call; `source` and `sink` are read when a call's media
/// starts, so a change applies to the next call.
///
/// On Linux there is no audio device: `.device` fails the call's media with a clear error.
public final class ParleyAudioController: @unchecked Sendable {
    // @unchecked: all state is in `Locked` values or the Sendable `AudioMixState`.
    let mix = AudioMixState()
    private let settings = Locked<(source: ParleyAudioSource, sink: ParleyAudioSink)>((.silence, .discard))
    /// Converts sound files (mix-down, resampling) off the caller's thread, one at a time.
    let soundFileQueue = DispatchQueue(label: "parley.sdk.sound-files", qos: .userInitiated)
    let soundFileCache = SoundFileCache()
    /// Counts start and stop requests: a conversion that finishes after a newer request
    /// does not start playing.
    private let soundFileRequest = Locked(0)

    init() {}

    /// Sends silence instead of the source's audio on every call until `unmute()`.
    public func mute() { mix.muted.withLock { $0 = true } }
    /// Sends the source's audio again.
    public func unmute() { mix.muted.withLock { $0 = false } }
    /// Whether calls send silence.
    public var isMuted: Bool { mix.muted.current }

    /// Plays a WAV file (PCM 16-bit, any rate, mono or stereo) into the local output of
    /// the calls in progress, mixed over the call audio; it replaces one already playing.
    ///
    /// Returns without waiting for the conversion to 48 kHz mono: the file is read and
    /// checked here, converted on a queue of the controller's own and starts playing when
    /// that is done. A file played before (unchanged on disk) starts at once.
    /// - Throws: `ParleyClientError` `invalid_argument` if the file cannot be read or played.
    public func startPlayingSoundFile(withPath path: String, looping: Bool) throws {
        let request = soundFileRequest.withLock { $0 += 1; return $0 }
        let key = SoundFileCache.Key(path: path)
        if let key, let samples = soundFileCache.samples(for: key) {
            return play(SoundFile(samples: samples, looping: looping), request: request)
        }
        let decoding = try SoundFile.read(path: path)
        if decoding.isConverted {
            return play(SoundFile(samples: decoding.file.samples, looping: looping), request: request)
        }
        soundFileQueue.async { [self] in
            let samples = decoding.convert()
            if let key { soundFileCache.insert(samples, for: key) }
            play(SoundFile(samples: samples, looping: looping), request: request)
        }
    }

    /// Stops the sound file (also one still being converted).
    public func stopPlayingSoundFile() {
        soundFileRequest.withLock { request in
            request += 1
            mix.soundFile.withLock { $0 = nil }
        }
    }

    /// Starts `file` unless a newer start or a stop came since `request`.
    private func play(_ file: SoundFile, request: Int) {
        soundFileRequest.withLock { current in
            guard current == request else { return }
            mix.soundFile.withLock { $0 = file }
        }
    }

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
