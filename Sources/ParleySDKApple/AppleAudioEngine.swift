#if canImport(WebRTC)
import AVFAudio
import Foundation
@_spi(ParleyEngines) import ParleySDKCore
import WebRTC

/// The audio every call shares on Apple platforms, carried out by libwebrtc: mute as the
/// calls' local tracks disabled (libwebrtc sends silence), the loudspeaker through
/// `RTCAudioSession.overrideOutputAudioPort`, and CallKit's gating of the audio session.
/// Sound files (a ringback or busy tone) play through `AVAudioPlayer` into the same
/// audio session, beside libwebrtc's audio unit: the system mixes both into the output.
///
/// With CallKit (`usesCallKitAudioSession`), libwebrtc runs in manual audio: its VoIP
/// audio unit starts only once `isAudioEnabled` is set, which happens only when the system
/// activated the audio session (`setSessionActive(true)`, from CallKit's `didActivate`),
/// and stops at the deactivation. Starting the unit earlier would take the session from
/// CallKit and, on a locked phone, be refused.
///
/// iOS only for the audio session: macOS has no AVAudioSession, there libwebrtc's audio
/// device runs on its own and the session calls do nothing.
final class AppleAudioEngine: ParleyAudioEngine, @unchecked Sendable {
    // @unchecked: all mutable state is in `state`; libwebrtc's audio session is a
    // process-wide singleton whose properties libwebrtc itself guards.
    private struct State {
        var muted = false
        var sessionActive: Bool
        var speaker = false
        var calls: [ObjectIdentifier: WeakCall] = [:]
        var routeObservers: [@Sendable (Bool) -> Void] = []
        /// The sound file playing (`startPlayingSoundFile`), kept alive until stopped or replaced.
        var soundFile: AVAudioPlayer?
        #if !os(macOS)
        /// Hears libwebrtc's route changes (libwebrtc holds its delegates weakly).
        var routeListener: RouteListener?
        #endif
    }

    /// A call media the engine tells of mute changes, without keeping it alive.
    private struct WeakCall {
        weak var call: AppleCallMedia?
    }

    private let state: Locked<State>
    let usesCallKitAudioSession: Bool

    init(usesCallKitAudioSession: Bool) {
        self.usesCallKitAudioSession = usesCallKitAudioSession
        state = Locked(State(sessionActive: !usesCallKitAudioSession))
        #if !os(macOS)
        // What libwebrtc applies when it starts its audio unit: a call's category and mode.
        RTCAudioSessionConfiguration.setWebRTC(Self.callConfiguration())
        let session = RTCAudioSession.sharedInstance()
        session.useManualAudio = usesCallKitAudioSession
        session.isAudioEnabled = false
        #endif
    }

    #if !os(macOS)
    /// libwebrtc's configuration with a call's category and mode: play and record, voice chat.
    private static func callConfiguration() -> RTCAudioSessionConfiguration {
        let configuration = RTCAudioSessionConfiguration.webRTC()
        configuration.category = AVAudioSession.Category.playAndRecord.rawValue
        configuration.mode = AVAudioSession.Mode.voiceChat.rawValue
        return configuration
    }
    #endif

    /// Sets libwebrtc's audio session up as a call wants it: play and record, voice chat.
    /// Apps with their own CallKit provider call it (through
    /// `ParleyAudioController.configureAudioSessionForCallKitCall()`) before fulfilling a
    /// start or answer action, as CallKit then activates the session with that category.
    static func configureAudioSession() {
        #if !os(macOS)
        let session = RTCAudioSession.sharedInstance()
        session.lockForConfiguration()
        defer { session.unlockForConfiguration() }
        try? session.setConfiguration(callConfiguration())
        #endif
    }

    func register(_ call: AppleCallMedia) {
        state.withLock { $0.calls[ObjectIdentifier(call)] = WeakCall(call: call) }
    }

    func unregister(_ call: AppleCallMedia) {
        state.withLock { _ = $0.calls.removeValue(forKey: ObjectIdentifier(call)) }
    }

    var isMuted: Bool { state.current.muted }

    func setMuted(_ muted: Bool) {
        let calls = state.withLock { state in
            state.muted = muted
            return state.calls.values.compactMap(\.call)
        }
        for call in calls { call.applyTrackStates() }
    }

    var isSessionActive: Bool { state.current.sessionActive }

    /// The system activated or deactivated the audio session: libwebrtc hears of it
    /// (`audioSessionDidActivate`), then its audio unit may start (or must stop).
    func setSessionActive(_ active: Bool) {
        state.withLock { $0.sessionActive = active || !usesCallKitAudioSession }
        #if !os(macOS)
        guard usesCallKitAudioSession else { return }
        let session = RTCAudioSession.sharedInstance()
        let system = AVAudioSession.sharedInstance()
        if active {
            session.audioSessionDidActivate(system)
            session.isAudioEnabled = true
        } else {
            session.isAudioEnabled = false
            session.audioSessionDidDeactivate(system)
        }
        #endif
    }

    /// Plays the file at `path` (any format `AVAudioPlayer` decodes: WAV, CAF, AIFF, MP3,
    /// AAC...) until it ends, or until `stopPlayingSoundFile()` when `looping`; a new file
    /// replaces the one playing. Locally only: the other party does not hear it. It plays
    /// whenever the app's audio session is active: with CallKit, from the system's
    /// activation (so an outgoing call's ringback starts once the start action is fulfilled).
    func startPlayingSoundFile(withPath path: String, looping: Bool) throws(ParleyClientError) {
        let player: AVAudioPlayer
        do {
            player = try AVAudioPlayer(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw ParleyClientError(code: "invalid_argument", message: "cannot play sound file \(path): \(error)")
        }
        player.numberOfLoops = looping ? -1 : 0
        player.prepareToPlay()
        let previous = state.withLock { state in
            defer { state.soundFile = player }
            return state.soundFile
        }
        previous?.stop()
        guard player.play() else {
            state.withLock { state in if state.soundFile === player { state.soundFile = nil } }
            throw ParleyClientError(code: "invalid_argument", message: "the system would not play sound file \(path)")
        }
    }

    func stopPlayingSoundFile() {
        let player = state.withLock { state in
            defer { state.soundFile = nil }
            return state.soundFile
        }
        player?.stop()
    }

    /// Whether a sound file is playing (for tests and diagnostics).
    var isPlayingSoundFile: Bool { state.current.soundFile?.isPlaying ?? false }

    var isSpeakerEnabled: Bool { state.current.speaker }

    func setSpeakerEnabled(_ enabled: Bool) {
        state.withLock { $0.speaker = enabled }
        #if !os(macOS)
        let session = RTCAudioSession.sharedInstance()
        session.lockForConfiguration()
        defer { session.unlockForConfiguration() }
        try? session.overrideOutputAudioPort(enabled ? .speaker : .none)
        #endif
    }

    /// The system's route changes, as libwebrtc relays AVAudioSession's: whether the
    /// loudspeaker is among the outputs afterwards. Changes the engine made itself (the
    /// speaker override, a category change) are not reported: the controller already did.
    func observeRouteChanges(_ observer: @escaping @Sendable (_ speakerEnabled: Bool) -> Void) {
        #if !os(macOS)
        let listener: RouteListener? = state.withLock { state in
            state.routeObservers.append(observer)
            guard state.routeListener == nil else { return nil }
            let listener = RouteListener(engine: self)
            state.routeListener = listener
            return listener
        }
        if let listener { RTCAudioSession.sharedInstance().add(listener) }
        #else
        state.withLock { $0.routeObservers.append(observer) }
        #endif
    }

    #if !os(macOS)
    fileprivate func routeChanged(reason: AVAudioSession.RouteChangeReason) {
        guard reason != .override, reason != .categoryChange else { return }
        let speaker = RTCAudioSession.sharedInstance().currentRoute.outputs.contains { $0.portType == .builtInSpeaker }
        let observers: [@Sendable (Bool) -> Void] = state.withLock { state in
            guard state.speaker != speaker else { return [] }
            state.speaker = speaker
            return state.routeObservers
        }
        for observer in observers { observer(speaker) }
    }
    #endif
}

#if !os(macOS)
/// libwebrtc's audio session delegate for `AppleAudioEngine`, called on a system
/// notification thread.
private final class RouteListener: NSObject, RTCAudioSessionDelegate, @unchecked Sendable {
    // @unchecked: `engine` is a weak reference, set once.
    private weak var engine: AppleAudioEngine?

    init(engine: AppleAudioEngine) { self.engine = engine }

    func audioSessionDidChangeRoute(_ session: RTCAudioSession, reason: AVAudioSession.RouteChangeReason,
                                    previousRoute: AVAudioSessionRouteDescription) {
        engine?.routeChanged(reason: reason)
    }
}
#endif
#endif
