import ParleyCrypto
import ParleyMediaCore
import ParleyMediaLegCore
import ParleyMediaLegIO
import ParleyNetCore
import ParleyNetLinux
import MirrorSupport

/// What stands behind a mirror `RTCPeerConnection`: one `MediaLeg` (full ICE, controlling,
/// Opus; as Parley's Linux engine makes), its negotiation state, and the audio unit that
/// feeds it from `RTCAudioSession`'s device. Not libwebrtc API.
///
/// libwebrtc runs a peer connection's operations one after another on its signaling
/// thread and calls completion handlers and the delegate there; the mirror chains the
/// operations (`enqueue`) and calls back on the factory's serial `signalingQueue`.
final class MirrorPeer: @unchecked Sendable {
    // @unchecked: immutable references to Sendable objects, and `state` behind its lock.
    struct State {
        var leg: MediaLeg?
        /// The leg's full SDP (with its candidates), set as the local description once gathered.
        var gatheredSDP: String?
        var remoteOffer: String?
        var started = false
        var closed = false
        var telephoneEvents = false
        var connection = RTCPeerConnectionState.new
        var ice = RTCIceConnectionState.new
        var gathering = RTCIceGatheringState.new
        var signaling = RTCSignalingState.stable
        var localSwitch: MirrorTrackSwitch?
        let remoteSwitch = MirrorTrackSwitch()
        var chain: Task<Void, Never>?
    }

    let state = MirrorLocked(State())
    let loop: EventLoop
    let signalingQueue: DispatchQueue
    let bindAddresses: [SocketAddress]
    /// Calls the owning peer connection's delegate (set by it; weak inside).
    let notify = MirrorLocked<(@Sendable (MirrorEvent) -> Void)?>(nil)

    enum MirrorEvent: Sendable {
        case connection(RTCPeerConnectionState)
        case ice(RTCIceConnectionState)
        case gathering(RTCIceGatheringState)
        case signaling(RTCSignalingState)
    }

    init(loop: EventLoop, signalingQueue: DispatchQueue, bindAddresses: [SocketAddress]) {
        self.loop = loop
        self.signalingQueue = signalingQueue
        self.bindAddresses = bindAddresses
    }

    /// Runs `operation` after every operation enqueued before it.
    func enqueue(_ operation: @escaping @Sendable () async -> Void) {
        state.withLock { state in
            let previous = state.chain
            state.chain = Task {
                await previous?.value
                await operation()
            }
        }
    }

    /// Calls back on the signaling queue, unless the connection closed.
    func emit(_ event: MirrorEvent) {
        let changed: Bool = state.withLock { state in
            guard !state.closed else { return false }
            switch event {
            case .connection(let value): defer { state.connection = value }; return state.connection != value
            case .ice(let value): defer { state.ice = value }; return state.ice != value
            case .gathering(let value): defer { state.gathering = value }; return state.gathering != value
            case .signaling(let value): defer { state.signaling = value }; return state.signaling != value
            }
        }
        guard changed, let notify = notify.current else { return }
        signalingQueue.async { notify(event) }
    }

    // MARK: The leg

    func legForNegotiation() throws -> MediaLeg {
        if let leg = state.current.leg { return leg }
        var configuration = MediaLegConfiguration(iceMode: .full, certificate: try DTLSCertificate.generate())
        configuration.codecs = [.opus]
        let consent = RTCPeerConnectionFactory.mirrorConsentTimeout
        configuration.consentTimeout = consent
        configuration.consentDisconnectedAfter = min(configuration.consentDisconnectedAfter, consent / 2)
        let leg = try MediaLeg(configuration: configuration, bindingTo: bindAddresses, on: loop)
        state.withLock { $0.leg = leg }
        return leg
    }

    /// Starts ICE, DTLS and the audio unit once both descriptions are in, as libwebrtc does.
    func startIfNegotiated(_ leg: MediaLeg) async throws {
        let start = state.withLock { state -> Bool in
            guard !state.started, !state.closed else { return false }
            state.started = true
            return true
        }
        guard start else { return }
        try await leg.start(source: MirrorCapture(peer: self), sink: MirrorPlayout(peer: self))
        emit(.ice(.checking))
        emit(.connection(.connecting))
        Task { await self.follow(leg) }
    }

    /// Reports the leg's state changes as the connection's, until it fails or closes.
    private func follow(_ leg: MediaLeg) async {
        var last = MediaLegState.checking
        while !state.current.closed {
            let now = await leg.waitUntil(timeout: .seconds(600)) { [last] in $0 != last }
            guard now != last else { continue }
            last = now
            switch now {
            case .new, .checking: emit(.ice(.checking)); emit(.connection(.connecting))
            case .connected: emit(.ice(.connected)); emit(.connection(.connected))
            case .failed: emit(.ice(.failed)); emit(.connection(.failed)); return
            case .closed: return
            }
        }
    }

    /// libwebrtc's offer and answer carry no candidates until gathering has run; the
    /// mirror's leg has its host candidates from the start, so they are held back until
    /// `setLocalDescription` has "gathered" them.
    static func withoutCandidates(_ sdp: String) -> String {
        sdp.split(separator: "\r\n", omittingEmptySubsequences: false)
            .filter { !$0.hasPrefix("a=candidate:") && !$0.hasPrefix("a=end-of-candidates") }
            .joined(separator: "\r\n")
    }

    func close() {
        let leg: MediaLeg? = state.withLock { state in
            state.closed = true
            state.connection = .closed
            state.ice = .closed
            state.signaling = .closed
            return state.leg
        }
        if let leg { Task { await leg.close() } }
    }

    // MARK: DTMF

    var canSendTelephoneEvents: Bool {
        let state = state.current
        return state.telephoneEvents && state.connection == .connected && !state.closed
    }

    func sendDTMF(_ tones: String, duration: Duration, gap: Duration) async -> Bool {
        guard let leg = state.current.leg else { return false }
        return await leg.sendDTMF(tones, duration: duration, gap: gap)
    }

    // MARK: The audio unit

    /// The microphone's next frame for this call: silence while the unit is stopped (no
    /// capture) or the local track is disabled (captured, not sent).
    func captureFrame() -> AudioFrame {
        guard RTCAudioSession.isAudioUnitRunning else { return .silence(sampleRate: 48_000) }
        let frame = RTCAudioSession.device.capture()
        guard state.current.localSwitch?.enabled.current == true else { return .silence(sampleRate: 48_000) }
        return frame
    }

    /// Plays a received frame, unless the unit is stopped or the remote track disabled.
    func play(_ frame: AudioFrame) {
        guard RTCAudioSession.isAudioUnitRunning, state.current.remoteSwitch.enabled.current else { return }
        RTCAudioSession.device.play(frame)
    }
}

/// The leg's source: the audio unit's capture for one call.
struct MirrorCapture: AudioSource, Sendable {
    let peer: MirrorPeer
    var sampleRate: Int { 48_000 }
    var channels: Int { 1 }
    mutating func nextFrame() -> AudioFrame? { peer.captureFrame() }
}

/// The leg's sink: the audio unit's playout for one call.
struct MirrorPlayout: AudioSink, Sendable {
    let peer: MirrorPeer
    mutating func consume(_ frame: AudioFrame) throws(CodecError) { peer.play(frame) }
}
