public import AVFAudio
public import ParleyMediaCore
import MirrorSupport

// Follows sdk/objc/components/audio/RTCAudioSession.h: a singleton (`+sharedInstance`)
// proxying AVAudioSession; `useManualAudio` and `isAudioEnabled` (nonatomic, assign
// BOOLs); `lockForConfiguration`/`unlockForConfiguration`; the proxies that need the
// lock and throw in Swift (`setConfiguration:error:` → `setConfiguration(_:)`,
// `overrideOutputAudioPort:error:` → `overrideOutputAudioPort(_:)`); and the
// RTCAudioSessionActivationDelegate methods `audioSessionDidActivate:` and
// `audioSessionDidDeactivate:`, which an app calls from CallKit's didActivate/didDeactivate.
//
// What the mirror models of the audio unit (the header's comments): with `useManualAudio`
// on, the VoIP audio unit runs only while `isAudioEnabled` is true, so nothing is
// captured or played before; with it off, the unit runs whenever a call has audio.
// Routes are a list of output ports the override and tests set (`addDelegate:` →
// `add(_:)`, `currentRoute`, the delegate's `audioSessionDidChangeRoute:reason:previousRoute:`).
// Not modelled: the AVAudioSession's real activation and interruptions, the routes a
// device takes (no audio is routed), Bluetooth, sample rates and buffer sizes.
// Unlike libwebrtc, a stopped unit leaves the mirror's legs sending silence rather than
// no packets at all.

/// `RTCAudioSessionActivationDelegate`: the system (re)activated the audio session
/// outside libwebrtc, which CallKit does.
public protocol RTCAudioSessionActivationDelegate: NSObjectProtocol {
    /// The system activated the audio session.
    func audioSessionDidActivate(_ session: AVAudioSession)
    /// The system deactivated the audio session.
    func audioSessionDidDeactivate(_ session: AVAudioSession)
}

/// `RTCAudioSessionDelegate` (RTCAudioSession.h): every method optional (so declared
/// with empty defaults, README's rule); the mirror calls only the route change, on a
/// queue of its own (the header: "a system notification thread").
public protocol RTCAudioSessionDelegate: NSObjectProtocol {
    /// The AVAudioSession changed its route.
    func audioSessionDidChangeRoute(_ session: RTCAudioSession, reason: AVAudioSession.RouteChangeReason,
                                    previousRoute: AVAudioSessionRouteDescription)
}

extension RTCAudioSessionDelegate {
    public func audioSessionDidChangeRoute(_ session: RTCAudioSession, reason: AVAudioSession.RouteChangeReason,
                                           previousRoute: AVAudioSessionRouteDescription) {}
}

/// The app's audio session as libwebrtc drives it.
// Not `Sendable`, as the header says nothing of it: the adapter must say how it crosses
// threads. The state is the process's (one session per app), behind a lock, as
// libwebrtc's properties are thread-safe.
public final class RTCAudioSession: NSObject, RTCAudioSessionActivationDelegate {
    struct State {
        var useManualAudio = false
        var isAudioEnabled = false
        var activations = 0
        var configurationLocks = 0
        var category = AVAudioSession.Category.playAndRecord.rawValue
        var mode = AVAudioSession.Mode.default.rawValue
        var portOverride = AVAudioSession.PortOverride.none
        var route: [AVAudioSession.Port] = [.builtInReceiver]
    }

    /// Delegates, held weakly as the header says.
    private final class WeakDelegate {
        weak var delegate: (any RTCAudioSessionDelegate)?
        init(_ delegate: any RTCAudioSessionDelegate) { self.delegate = delegate }
    }
    private static let delegates = MirrorLocked<[WeakDelegate]>([])
    private static let notificationQueue = DispatchQueue(label: "mirror.avaudiosession.notifications")

    /// The process's session state; the mirror's peer connections read it off any thread.
    static let sharedState = MirrorLocked(State())
    /// The process's device (MIRROR-ONLY, see `mirrorDevice`).
    static let device = RTCMirrorAudioDevice()
    nonisolated(unsafe) private static let shared = RTCAudioSession()
    private var state: MirrorLocked<State> { Self.sharedState }

    private override init() { super.init() }

    /// The shared session.
    public class func sharedInstance() -> RTCAudioSession { shared }

    /// When true, the audio unit starts only once `isAudioEnabled` is set (CallKit's way).
    public var useManualAudio: Bool {
        get { state.current.useManualAudio }
        set { state.withLock { $0.useManualAudio = newValue } }
    }

    /// With manual audio: whether libwebrtc may run the audio unit.
    public var isAudioEnabled: Bool {
        get { state.current.isAudioEnabled }
        set { state.withLock { $0.isAudioEnabled = newValue } }
    }

    /// Whether the session is active, as far as libwebrtc knows (activations minus deactivations).
    public var isActive: Bool { state.current.activations > 0 }
    /// The category in use.
    public var category: String { state.current.category }
    /// The mode in use.
    public var mode: String { state.current.mode }

    /// Takes the configuration lock (the mirror counts; libwebrtc's is a recursive lock).
    public func lockForConfiguration() { state.withLock { $0.configurationLocks += 1 } }
    /// Gives the configuration lock back.
    public func unlockForConfiguration() { state.withLock { $0.configurationLocks = max(0, $0.configurationLocks - 1) } }

    /// Applies a configuration's category and mode.
    /// - Throws: an NSError in `kRTCAudioSessionErrorDomain` without the configuration lock.
    public func setConfiguration(_ configuration: RTCAudioSessionConfiguration) throws {
        try state.withLock { state in
            guard state.configurationLocks > 0 else { throw Self.lockRequired() }
            state.category = configuration.category
            state.mode = configuration.mode
        }
    }

    /// Overrides the output route (the loudspeaker, or back to the category's route).
    /// - Throws: an NSError in `kRTCAudioSessionErrorDomain` without the configuration lock.
    public func overrideOutputAudioPort(_ portOverride: AVAudioSession.PortOverride) throws {
        try state.withLock { state in
            guard state.configurationLocks > 0 else { throw Self.lockRequired() }
            state.portOverride = portOverride
        }
        // As on a device: the override is a route change of its own (reason `override`).
        routeChanged(to: [portOverride == .speaker ? .builtInSpeaker : .builtInReceiver], reason: .override)
    }

    /// Adds a delegate (held weakly).
    public func add(_ delegate: any RTCAudioSessionDelegate) {
        Self.delegates.withLock { $0 = $0.filter { $0.delegate != nil } + [WeakDelegate(delegate)] }
    }

    /// Removes a delegate.
    public func remove(_ delegate: any RTCAudioSessionDelegate) {
        Self.delegates.withLock { $0 = $0.filter { $0.delegate != nil && $0.delegate !== delegate } }
    }

    /// The route in use now.
    public var currentRoute: AVAudioSessionRouteDescription {
        AVAudioSessionRouteDescription(mirrorOutputs: state.current.route)
    }

    /// The route changed: tell the delegates, on the notification queue.
    private func routeChanged(to outputs: [AVAudioSession.Port], reason: AVAudioSession.RouteChangeReason) {
        let previous = state.withLock { state in
            defer { state.route = outputs }
            return state.route
        }
        let delegates = MirrorUnchecked(Self.delegates.current.compactMap(\.delegate))
        let session = MirrorUnchecked(self)
        Self.notificationQueue.async {
            let previousRoute = AVAudioSessionRouteDescription(mirrorOutputs: previous)
            for delegate in delegates.value {
                delegate.audioSessionDidChangeRoute(session.value, reason: reason, previousRoute: previousRoute)
            }
        }
    }

    public func audioSessionDidActivate(_ session: AVAudioSession) { state.withLock { $0.activations += 1 } }
    public func audioSessionDidDeactivate(_ session: AVAudioSession) { state.withLock { $0.activations = max(0, $0.activations - 1) } }

    private static func lockRequired() -> NSError {
        NSError(domain: kRTCAudioSessionErrorDomain, code: kRTCAudioSessionErrorLockRequired)
    }

    // MARK: MIRROR-ONLY (no such API in libwebrtc; adapters must never use it)

    /// MIRROR-ONLY: the device's microphone and speaker, which tests set (a tone, a
    /// recorder). Every call's audio unit reads and writes them.
    public var mirrorDevice: RTCMirrorAudioDevice { Self.device }

    /// MIRROR-ONLY: whether the VoIP audio unit runs now (capture and playout).
    public var mirrorIsAudioUnitRunning: Bool { Self.isAudioUnitRunning }

    /// As the header describes `useManualAudio` and `isAudioEnabled`.
    static var isAudioUnitRunning: Bool {
        let state = sharedState.current
        return !state.useManualAudio || state.isAudioEnabled
    }

    /// MIRROR-ONLY: the output override last set.
    public var mirrorPortOverride: AVAudioSession.PortOverride { state.current.portOverride }

    /// MIRROR-ONLY: the system moves the output (headphones plugged in, a Bluetooth
    /// device, another app), as AVAudioSession's route change notification does.
    public func mirrorSystemChangesRoute(to outputs: [AVAudioSession.Port], reason: AVAudioSession.RouteChangeReason) {
        routeChanged(to: outputs, reason: reason)
    }

    /// MIRROR-ONLY: back to a fresh process's session (between tests).
    public func mirrorReset() {
        state.withLock { $0 = State() }
        Self.device.mirrorReset()
    }
}

/// `kRTCAudioSessionErrorDomain` (RTCAudioSession.h).
public let kRTCAudioSessionErrorDomain = "org.webrtc.RTC_OBJC_TYPE(RTCAudioSession)"
/// `kRTCAudioSessionErrorLockRequired` (RTCAudioSession.h).
public let kRTCAudioSessionErrorLockRequired = -1
/// `kRTCAudioSessionErrorConfiguration` (RTCAudioSession.h).
public let kRTCAudioSessionErrorConfiguration = -2

/// MIRROR-ONLY: the phone's microphone and speaker as tests see them. The audio unit of
/// every peer connection takes 20 ms frames (48 kHz mono) from `source` and gives what it
/// plays to `sink`, and counts both, only while the unit runs.
public final class RTCMirrorAudioDevice: @unchecked Sendable {
    // @unchecked: every field is behind `state`.
    private struct State {
        var source: (any AudioSource & Sendable)?
        var sink: (any AudioSink & Sendable)?
        var framesCaptured = 0
        var framesPlayed = 0
    }

    private let state = MirrorLocked(State())

    /// The microphone (nil: silence).
    public var source: (any AudioSource & Sendable)? {
        get { state.current.source }
        set { state.withLock { $0.source = newValue } }
    }

    /// The speaker (nil: dropped).
    public var sink: (any AudioSink & Sendable)? {
        get { state.current.sink }
        set { state.withLock { $0.sink = newValue } }
    }

    /// Frames taken from the microphone so far.
    public var framesCaptured: Int { state.current.framesCaptured }
    /// Frames given to the speaker so far.
    public var framesPlayed: Int { state.current.framesPlayed }

    /// No microphone, no speaker, counters at zero.
    public func mirrorReset() { state.withLock { $0 = State() } }

    /// The next microphone frame (silence when there is no source or it ended).
    func capture() -> AudioFrame {
        state.withLock { state in
            state.framesCaptured += 1
            if var source = state.source, let frame = source.nextFrame() {
                state.source = source
                return frame
            }
            return .silence(sampleRate: 48_000)
        }
    }

    /// Plays a frame on the speaker.
    func play(_ frame: AudioFrame) {
        state.withLock { state in
            state.framesPlayed += 1
            if var sink = state.sink {
                try? sink.consume(frame)
                state.sink = sink
            }
        }
    }
}
