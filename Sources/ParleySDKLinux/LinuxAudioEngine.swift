import Foundation
@_spi(ParleyEngines) import ParleySDKCore

/// The audio every call on Linux shares: mute, whether the system lets audio run, and the
/// sound file mixed over the calls' output (`AudioMixState`, read by each leg's pacer).
final class LinuxAudioEngine: ParleyAudioEngine, Sendable {
    let state = AudioMixState()
    /// Converts sound files (mix-down, resampling) off the caller's thread, one at a time.
    let soundFileQueue = DispatchQueue(label: "parley.sdk.sound-files", qos: .userInitiated)
    let soundFileCache = SoundFileCache()
    /// Counts start and stop requests: a conversion that finishes after a newer request
    /// does not start playing.
    private let soundFileRequest = Locked(0)

    /// The speaker preference. Linux has one output per call (the sink), so it is kept
    /// and reported but routes nothing, and the system never changes it.
    private let speaker = Locked(false)

    var isSpeakerEnabled: Bool { speaker.current }
    func setSpeakerEnabled(_ enabled: Bool) { speaker.withLock { $0 = enabled } }
    func observeRouteChanges(_ observer: @escaping @Sendable (Bool) -> Void) {}

    var isMuted: Bool { state.muted.current }
    func setMuted(_ muted: Bool) { state.muted.withLock { $0 = muted } }
    var isSessionActive: Bool { state.sessionActive.current }
    func setSessionActive(_ active: Bool) { state.sessionActive.withLock { $0 = active } }

    /// Returns without waiting for the conversion to 48 kHz mono: the file is read and
    /// checked here, converted on a queue of the engine's own and starts playing when
    /// that is done. A file played before (unchanged on disk) starts at once.
    func startPlayingSoundFile(withPath path: String, looping: Bool) throws(ParleyClientError) {
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
    func stopPlayingSoundFile() {
        soundFileRequest.withLock { request in
            request += 1
            state.soundFile.withLock { $0 = nil }
        }
    }

    /// Starts `file` unless a newer start or a stop came since `request`.
    private func play(_ file: SoundFile, request: Int) {
        soundFileRequest.withLock { current in
            guard current == request else { return }
            state.soundFile.withLock { $0 = file }
        }
    }
}
