#if canImport(WebRTC)
import Foundation
@_spi(ParleyEngines) import ParleySDKCore
import WebRTC

/// One call's media on Apple platforms: a libwebrtc `RTCPeerConnection` to the server
/// with one audio track from the device's microphone.
///
/// The server is ICE-lite with a public address and takes the whole SDP at once: no ICE
/// servers, unified plan, bundle and RTCP multiplexing required, and the local
/// description is read only once ICE gathering has completed (no trickle).
final class AppleCallMedia: NSObject, ParleyCallMedia, RTCPeerConnectionDelegate, @unchecked Sendable {
    // @unchecked: libwebrtc's peer connection, tracks and senders are thread-safe (their
    // methods hop to libwebrtc's signaling thread), and this object's own state is behind
    // `state`. libwebrtc's headers declare no Sendable, so that is said here.
    private struct State {
        var connection: RTCPeerConnection?
        var sender: RTCRtpSender?
        var track: RTCAudioTrack?
        /// Whether the call's audio runs (false while a callee's leg connects during the ring).
        var attached = false
        var gatheringComplete = false
        var gatheringWaiters: [CheckedContinuation<Void, Never>] = []
        var failure: String?
        var closed = false
    }

    let callID: String
    private let factory: RTCPeerConnectionFactory
    private let audio: AppleAudioEngine
    private let source: ParleyAudioSource
    private let sink: ParleyAudioSink
    private let state = Locked(State())

    /// How long ICE gathering may take before the SDP goes out with what was gathered.
    static let gatheringTimeout: TimeInterval = 5
    /// libwebrtc's and the softphone's DTMF timing: 100 ms tones, 70 ms apart.
    static let dtmfDuration: TimeInterval = 0.1
    static let dtmfGap: TimeInterval = 0.07

    init(callID: String, factory: RTCPeerConnectionFactory, audio: AppleAudioEngine, source: ParleyAudioSource, sink: ParleyAudioSink) {
        self.callID = callID
        self.factory = factory
        self.audio = audio
        self.source = source
        self.sink = sink
        super.init()
        audio.register(self)
    }

    deinit { audio.unregister(self) }

    // MARK: ParleyCallMedia

    func makeOffer() async throws -> String {
        let connection = try makeConnection()
        let offer = try await Self.describe { connection.offer(for: Self.constraints, completionHandler: $0) }
        try await Self.apply { connection.setLocalDescription(RTCSessionDescription(type: .offer, sdp: offer), completionHandler: $0) }
        return try await gatheredLocalDescription(of: connection)
    }

    func acceptAnswer(_ sdp: String) async throws {
        guard let connection = state.current.connection else { throw Self.failure("no offer was made") }
        try await Self.apply { connection.setRemoteDescription(RTCSessionDescription(type: .answer, sdp: sdp), completionHandler: $0) }
        applyTrackStates()
    }

    func answer(offer: String) async throws -> String {
        let connection = try makeConnection()
        try await Self.apply { connection.setRemoteDescription(RTCSessionDescription(type: .offer, sdp: offer), completionHandler: $0) }
        let answer = try await Self.describe { connection.answer(for: Self.constraints, completionHandler: $0) }
        try await Self.apply { connection.setLocalDescription(RTCSessionDescription(type: .answer, sdp: answer), completionHandler: $0) }
        applyTrackStates()
        return try await gatheredLocalDescription(of: connection)
    }

    /// libwebrtc starts ICE and DTLS once both descriptions are set; what is left here is
    /// whether the call's audio runs.
    func start(withAudio: Bool) async throws {
        state.withLock { $0.attached = withAudio }
        applyTrackStates()
    }

    func attachAudio() async throws {
        state.withLock { $0.attached = true }
        applyTrackStates()
    }

    func poll() async -> (statistics: ParleyCallStatistics, failure: String?)? {
        let (connection, failure) = state.withLock { ($0.closed ? nil : $0.connection, $0.failure) }
        guard let connection else { return nil }
        return (await Self.statistics(of: connection), failure)
    }

    func close() async -> ParleyCallStatistics? {
        let connection: RTCPeerConnection? = state.withLock { state in
            state.closed = true
            return state.connection
        }
        releaseGatheringWaiters()
        guard let connection else { return nil }
        let statistics = await Self.statistics(of: connection)
        connection.close()
        audio.unregister(self)
        return statistics
    }

    /// Through the audio sender's `RTCDtmfSender` (RFC 4733 on the negotiated
    /// telephone-event); returns once the tones have had their time.
    func sendDTMF(_ tones: String) async -> Bool {
        // libwebrtc skips characters it does not know; the port says the whole call fails.
        guard !tones.isEmpty, tones.allSatisfy({ "0123456789*#ABCD".contains($0) }),
              let dtmf = state.current.sender?.dtmfSender, dtmf.canInsertDtmf,
              dtmf.insertDtmf(tones, duration: Self.dtmfDuration, interToneGap: Self.dtmfGap) else { return false }
        let tonesTime = Double(tones.count) * Self.dtmfDuration + Double(tones.count - 1) * Self.dtmfGap
        try? await Task.sleep(for: .seconds(tonesTime))
        // libwebrtc's queue empties as the last tone starts; a bounded wait for the rest.
        for _ in 0..<50 where !dtmf.remainingTones().isEmpty {
            try? await Task.sleep(for: .milliseconds(20))
        }
        return true
    }

    // MARK: Tracks

    /// The local track sends only while the call's audio runs, unmuted, from a source
    /// that is the microphone; the remote track plays only while the audio runs to the
    /// device. A disabled track is silence in libwebrtc, on the wire or on the speaker.
    func applyTrackStates() {
        let (track, connection, attached) = state.withLock { ($0.track, $0.connection, $0.attached) }
        track?.isEnabled = attached && !audio.isMuted && source == .device
        for receiver in connection?.receivers ?? [] {
            receiver.track?.isEnabled = attached && sink == .device
        }
    }

    // MARK: Negotiation helpers

    private static var constraints: RTCMediaConstraints {
        RTCMediaConstraints(mandatoryConstraints: [kRTCMediaConstraintsOfferToReceiveAudio: kRTCMediaConstraintsValueTrue],
                            optionalConstraints: nil)
    }

    /// A peer connection to the ICE-lite server, with the microphone's track added.
    private func makeConnection() throws -> RTCPeerConnection {
        switch (source, sink) {
        case (.tone, _), (.wavFile, _), (_, .wavFile):
            throw Self.failure("the Apple media engine captures and plays the device only: set audioController.source to .device or .silence and sink to .device or .discard")
        default: break
        }
        let configuration = RTCConfiguration()
        configuration.sdpSemantics = .unifiedPlan
        configuration.iceServers = []
        configuration.bundlePolicy = .maxBundle
        configuration.rtcpMuxPolicy = .require
        configuration.continualGatheringPolicy = .gatherOnce
        guard let connection = factory.peerConnection(with: configuration, constraints: RTCMediaConstraints(mandatoryConstraints: nil, optionalConstraints: nil),
                                                      delegate: self) else {
            throw Self.failure("libwebrtc refused the peer connection")
        }
        let track = factory.audioTrack(with: factory.audioSource(with: nil), trackId: "parley-audio-\(callID)")
        track.isEnabled = false  // until the call's audio runs
        guard let sender = connection.add(track, streamIds: ["parley-\(callID)"]) else {
            connection.close()
            throw Self.failure("libwebrtc refused the audio track")
        }
        state.withLock { state in
            state.connection = connection
            state.track = track
            state.sender = sender
        }
        return connection
    }

    /// The local description once gathering completed (or timed out: what was gathered).
    private func gatheredLocalDescription(of connection: RTCPeerConnection) async throws -> String {
        if connection.iceGatheringState == .complete { state.withLock { $0.gatheringComplete = true } }
        // Bounded: a device with many interfaces may gather long; the server needs one pair.
        DispatchQueue.global().asyncAfter(deadline: .now() + Self.gatheringTimeout) { [weak self] in
            self?.releaseGatheringWaiters()
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state -> Bool in
                if state.gatheringComplete || state.closed { return true }
                state.gatheringWaiters.append(continuation)
                return false
            }
            if ready { continuation.resume() }
        }
        guard let sdp = connection.localDescription?.sdp else { throw Self.failure("libwebrtc has no local description") }
        return sdp
    }

    private func releaseGatheringWaiters() {
        let waiters = state.withLock { state in
            defer { state.gatheringWaiters = [] }
            return state.gatheringWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Runs a create-offer/answer call and returns the SDP its completion handler gives.
    /// Only Sendable values cross from libwebrtc's signaling thread (the SDP text).
    private static func describe(_ body: (@escaping RTCCreateSessionDescriptionCompletionHandler) -> Void) async throws -> String {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<String, any Error>) in
            body { description, error in
                if let description { continuation.resume(returning: description.sdp) } else {
                    continuation.resume(throwing: error ?? failure("libwebrtc gave no description"))
                }
            }
        }
    }

    /// Runs a set-description call and waits for its completion handler.
    private static func apply(_ body: (@escaping RTCSetSessionDescriptionCompletionHandler) -> Void) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            body { error in
                if let error { continuation.resume(throwing: failure("\(error.localizedDescription)")) } else { continuation.resume() }
            }
        }
    }

    private static func failure(_ message: String) -> ParleyClientError {
        ParleyClientError(code: "media_failed", message: message)
    }

    // MARK: Statistics

    /// libwebrtc's standard statistics as the SDK's figures: packets and jitter from the
    /// audio inbound-rtp, packets sent from outbound-rtp, round-trip time from the RTCP
    /// receiver reports (remote-inbound-rtp) or else the ICE pair's STUN checks.
    private static func statistics(of connection: RTCPeerConnection) async -> ParleyCallStatistics {
        await withCheckedContinuation { (continuation: CheckedContinuation<ParleyCallStatistics, Never>) in
            connection.statistics { report in continuation.resume(returning: figures(of: report)) }
        }
    }

    static func figures(of report: RTCStatisticsReport) -> ParleyCallStatistics {
        var figures = ParleyCallStatistics()
        var pairRoundTrip: Double?
        func number(_ values: [String: NSObject], _ key: String) -> NSNumber? { values[key] as? NSNumber }
        for statistic in report.statistics.values {
            let values = statistic.values
            let kind = (values["kind"] as? NSString)?.description
            guard kind == nil || kind == "audio" else { continue }
            switch statistic.type {
            case "outbound-rtp":
                figures.packetsSent = number(values, "packetsSent")?.uint64Value ?? 0
            case "inbound-rtp":
                figures.packetsReceived = number(values, "packetsReceived")?.uint64Value ?? 0
                figures.packetsLost = number(values, "packetsLost")?.int64Value ?? 0
                figures.jitterMilliseconds = (number(values, "jitter")?.doubleValue ?? 0) * 1000
                // Samples at 48 kHz; the SDK counts 20 ms frames.
                let concealed = number(values, "concealedSamples")?.doubleValue ?? 0
                let total = number(values, "totalSamplesReceived")?.doubleValue ?? 0
                figures.framesConcealed = UInt64(max(0, concealed / 960))
                figures.framesPlayed = UInt64(max(0, (total - concealed) / 960))
            case "remote-inbound-rtp":
                if let seconds = number(values, "roundTripTime")?.doubleValue { figures.roundTripTimeMilliseconds = seconds * 1000 }
            case "candidate-pair":
                if (values["nominated"] as? NSNumber)?.boolValue == true, let seconds = number(values, "currentRoundTripTime")?.doubleValue {
                    pairRoundTrip = seconds * 1000
                }
            default:
                break
            }
        }
        if figures.roundTripTimeMilliseconds == nil { figures.roundTripTimeMilliseconds = pairRoundTrip }
        return figures
    }

    // MARK: RTCPeerConnectionDelegate (on libwebrtc's signaling thread)

    func peerConnection(_ peerConnection: RTCPeerConnection, didChange newState: RTCIceGatheringState) {
        guard newState == .complete else { return }
        state.withLock { $0.gatheringComplete = true }
        releaseGatheringWaiters()
    }

    func peerConnection(_ peerConnection: RTCPeerConnection, didChange newState: RTCPeerConnectionState) {
        // `.disconnected` may recover (consent checks resume); `.failed` does not.
        guard newState == .failed else { return }
        state.withLock { $0.failure = $0.failure ?? "the media connection failed (ICE or DTLS)" }
    }

    func peerConnection(_ peerConnection: RTCPeerConnection, didChange stateChanged: RTCSignalingState) {}
    func peerConnection(_ peerConnection: RTCPeerConnection, didAdd stream: RTCMediaStream) {}
    func peerConnection(_ peerConnection: RTCPeerConnection, didRemove stream: RTCMediaStream) {}
    func peerConnectionShouldNegotiate(_ peerConnection: RTCPeerConnection) {}
    func peerConnection(_ peerConnection: RTCPeerConnection, didChange newState: RTCIceConnectionState) {}
    func peerConnection(_ peerConnection: RTCPeerConnection, didGenerate candidate: RTCIceCandidate) {}
    func peerConnection(_ peerConnection: RTCPeerConnection, didRemove candidates: [RTCIceCandidate]) {}
    func peerConnection(_ peerConnection: RTCPeerConnection, didOpen dataChannel: RTCDataChannel) {}
}
#endif
