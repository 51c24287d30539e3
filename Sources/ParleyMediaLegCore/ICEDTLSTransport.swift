public import ParleyCrypto
public import ParleyICECore
public import ParleySDP
import ParleySRTP

/// A WebRTC leg's transport: ICE (RFC 8445, lite or full) finds and keeps a path, DTLS
/// (RFC 6347) runs over the path ICE validated and exports the SRTP keys (RFC 5764), and
/// media is taken only from addresses an ICE check with our credentials validated (RFC 8445
/// §11). Consent (RFC 7675) keeps it alive; without it, or on a DTLS failure (a certificate
/// that does not match the SDP's fingerprint included), it fails.
public struct ICEDTLSTransport: MediaLegTransport {
    private enum Agent { case lite(ICELiteAgent), full(ICEFullAgent) }

    public let iceMode: MediaLegConfiguration.ICEMode
    private var agent: Agent
    private let dtls: DTLSConnection
    private var dtlsStarted = false
    private var dtlsPeer: ICETransportAddress?
    private var dtlsLocal: ICETransportAddress?
    private var protection: MediaLegProtection?
    private let consentTimeout: Duration
    private var started = false
    private var connected = false
    private var finished = false

    /// Builds the transport for a negotiated audio section.
    /// - Parameters:
    ///   - localCredentials: the ICE credentials our SDP announced.
    ///   - localAddresses: our host candidates (a full agent pairs them).
    ///   - weOffered: we made the offer (between full agents the offerer controls).
    ///   - tieBreaker: the ICE role tie-breaker (RFC 8445 §7.3.1.1).
    ///   - random: the leg's generator; a full agent keeps its own copy (its transaction
    ///     IDs and consent jitter), so a seeded leg repeats its checks.
    public init(
        negotiated audio: NegotiatedAudio, iceMode: MediaLegConfiguration.ICEMode, certificate: DTLSCertificate,
        configuration: MediaLegConfiguration, localCredentials: ICECredentials, localAddresses: [ICETransportAddress],
        weOffered: Bool, tieBreaker: UInt64, random: any RandomNumberGenerator & Sendable
    ) throws(MediaLegError) {
        guard let remoteFingerprint = audio.remoteFingerprints.first(where: { $0.algorithm.lowercased() == "sha-256" }),
              let expected = DTLSFingerprint(bytes: remoteFingerprint.bytes)
        else {
            throw MediaLegError(.fingerprint, "the peer's SDP has no sha-256 certificate fingerprint")
        }
        let role: DTLSRole = audio.isDTLSClient ? .client : .server
        var dtlsConfiguration = DTLSConnection.Configuration(role: role, certificate: certificate, expectedPeerFingerprint: expected)
        dtlsConfiguration.srtpProfiles = configuration.srtpProfiles
        dtlsConfiguration.handshakeTimeout = configuration.dtlsHandshakeTimeout
        do { dtls = try DTLSConnection(configuration: dtlsConfiguration) } catch { throw MediaLegError(.dtls, "cannot create the DTLS connection: \(error)") }

        let remoteCredentials = ICECredentials(ufrag: audio.remoteICEUsernameFragment, password: audio.remoteICEPassword)
        switch iceMode {
        case .lite:
            agent = .lite(ICELiteAgent(
                localCredentials: localCredentials, remoteCredentials: remoteCredentials,
                configuration: .init(disconnectedAfter: configuration.consentDisconnectedAfter, consentTimeout: configuration.consentTimeout)))
        case .full:
            // RFC 8445 §6.1.1: facing a lite peer we control; between full agents the offerer does.
            let role: ICEFullAgent.Role = (audio.remoteICELite || weOffered) ? .controlling : .controlled
            var iceConfiguration = ICEFullAgent.Configuration()
            iceConfiguration.disconnectedAfter = configuration.consentDisconnectedAfter
            iceConfiguration.consentTimeout = configuration.consentTimeout
            agent = .full(ICEFullAgent(
                role: role, tieBreaker: tieBreaker,
                localCredentials: localCredentials, remoteCredentials: remoteCredentials,
                hostAddresses: localAddresses, remoteCandidates: Self.remoteCandidates(of: audio),
                random: random, configuration: iceConfiguration))
        }
        self.iceMode = iceMode
        consentTimeout = configuration.consentTimeout
    }

    /// UDP candidates with literal addresses; mDNS names and TCP are skipped. With none,
    /// the `c=`/`m=` address stands in as a host candidate.
    private static func remoteCandidates(of audio: NegotiatedAudio) -> [ICERemoteCandidate] {
        var result: [ICERemoteCandidate] = []
        for candidate in audio.remoteCandidates where candidate.isUDP && candidate.component == 1 {
            guard let address = ICETransportAddress(ip: candidate.address, port: candidate.port) else { continue }
            let type: ICECandidateType
            switch candidate.type {
            case .host: type = .host
            case .serverReflexive: type = .serverReflexive
            case .peerReflexive: type = .peerReflexive
            case .relayed: type = .relay
            case .other: continue
            }
            result.append(ICERemoteCandidate(address: address, priority: candidate.priority, type: type, foundation: candidate.foundation))
        }
        if result.isEmpty, let host = audio.remoteAddress, audio.remotePort != 0,
           let address = ICETransportAddress(ip: host, port: audio.remotePort) {
            result.append(ICERemoteCandidate(
                address: address, priority: ICEPriority.candidate(type: .host, localPreference: 65535), type: .host, foundation: "sdp"))
        }
        return result
    }

    // MARK: MediaLegTransport

    /// Starts ICE (and the DTLS server, which then waits for the client's hello).
    public mutating func start(now: ContinuousClock.Instant) -> [MediaLegTransportEvent] {
        guard !started else { return [] }
        started = true
        var events: [MediaLegTransportEvent] = []
        if dtls.configuration.role == .server {
            handle(dtls.start(now: now), now: now, into: &events)
            dtlsStarted = true
        }
        if case .full(var full) = agent {
            let iceActions = full.start(now: now)
            agent = .full(full)
            handle(iceActions, now: now, into: &events)
        }
        return events
    }

    public var nextDeadline: ContinuousClock.Instant? {
        var deadline: ContinuousClock.Instant?
        switch agent {
        case .lite(let lite): deadline = lite.nextDeadline
        case .full(let full): deadline = full.nextDeadline
        }
        if let next = dtls.nextDeadline, deadline.map({ next < $0 }) ?? true { deadline = next }
        return deadline
    }

    /// ICE retransmissions and consent, DTLS retransmissions.
    public mutating func handleTimeout(now: ContinuousClock.Instant) -> [MediaLegTransportEvent] {
        var events: [MediaLegTransportEvent] = []
        switch agent {
        case .lite(var lite):
            let iceActions = lite.handleTimeout(now: now)
            agent = .lite(lite)
            handle(iceActions, now: now, into: &events)
        case .full(var full):
            let iceActions = full.handleTimeout(now: now)
            agent = .full(full)
            handle(iceActions, now: now, into: &events)
        }
        if dtlsStarted, let deadline = dtls.nextDeadline, deadline <= now {
            handle(dtls.handleTimeout(now: now), now: now, into: &events)
        }
        return events
    }

    /// STUN goes to the ICE agent; DTLS to OpenSSL, from an ICE-validated address only.
    public mutating func receiveNonMedia(
        _ datagram: [UInt8], from source: ICETransportAddress, on local: ICETransportAddress, now: ContinuousClock.Instant
    ) -> [MediaLegTransportEvent] {
        var events: [MediaLegTransportEvent] = []
        guard let first = datagram.first else { return events }
        if first <= 3 {
            switch agent {
            case .lite(var lite):
                let iceActions = lite.receive(datagram, from: source, on: local, now: now)
                agent = .lite(lite)
                handle(iceActions, now: now, into: &events)
            case .full(var full):
                let iceActions = full.receive(datagram, from: source, on: local, now: now)
                agent = .full(full)
                handle(iceActions, now: now, into: &events)
            }
            return events
        }
        guard (20...63).contains(first) else {
            events.append(.dropped(.unknownKind, from: source, detail: "first byte \(first) is not STUN, DTLS or RTP (RFC 7983)"))
            return events
        }
        guard isValidated(source) else {
            events.append(.dropped(.unvalidatedSource, from: source, detail: "DTLS from an address ICE has not validated"))
            return events
        }
        guard dtlsStarted else {
            events.append(.dropped(.dtls, from: source, detail: "DTLS before our handshake started"))
            return events
        }
        dtlsPeer = source
        dtlsLocal = local
        let dropsBefore = dtls.droppedDatagrams.values.reduce(0, +)
        handle(dtls.receive(datagram: datagram, now: now), now: now, into: &events)
        if dtls.droppedDatagrams.values.reduce(0, +) > dropsBefore {
            events.append(.dropped(.dtls, from: source, detail: "not a usable DTLS record"))
        }
        return events
    }

    /// Media follows a validated pair (RFC 8445 §11): nothing is learnt from media itself.
    public mutating func admit(from source: ICETransportAddress, isRTCP: Bool, now: ContinuousClock.Instant) -> MediaSourceAdmission {
        isValidated(source) ? .accept : .refuse(.unvalidatedSource, detail: "RTP from an address ICE has not validated")
    }

    public mutating func confirm(_ source: ICETransportAddress, now: ContinuousClock.Instant) {}

    /// The nominated pair, else (a lite agent whose peer has not nominated yet) the first
    /// pair a check validated.
    public var mediaDestination: (local: ICETransportAddress, remote: ICETransportAddress)? {
        if let pair = selectedPair { return (pair.local, pair.remote) }
        if case .lite(let lite) = agent, let pair = lite.validPairs.first { return (pair.local, pair.remote) }
        return nil
    }

    /// WebRTC muxes RTCP with RTP (RFC 8834 §5.1.1).
    public var controlDestination: (local: ICETransportAddress, remote: ICETransportAddress)? { mediaDestination }

    /// A DTLS close_notify when the handshake started; ICE stops.
    public mutating func close(now: ContinuousClock.Instant) -> [MediaLegTransportEvent] {
        var events: [MediaLegTransportEvent] = []
        if dtlsStarted { handle(dtls.close(), now: now, into: &events) }
        switch agent {
        case .lite(var lite): _ = lite.close(); agent = .lite(lite)
        case .full(var full): _ = full.close(); agent = .full(full)
        }
        finished = true
        return events
    }

    public var progressDescription: String { "ICE \(iceState), DTLS \(dtlsStateText)" }

    public func record(into statistics: inout MediaLegStatistics) {
        statistics.iceMode = iceMode
        statistics.iceState = iceState
        statistics.selectedPair = selectedPair
        statistics.dtlsRole = dtls.configuration.role.rawValue
    }

    // MARK: ICE and DTLS

    /// Where ICE is.
    public var iceState: ICEConnectionState {
        switch agent {
        case .lite(let lite): lite.state
        case .full(let full): full.state
        }
    }

    /// The pair ICE selected (nominated), if any.
    public var selectedPair: ICECandidatePair? {
        switch agent {
        case .lite(let lite): lite.selectedPair
        case .full(let full): full.selectedPair
        }
    }

    private var dtlsStateText: String {
        switch dtls.state {
        case .new: "new"
        case .handshaking: "handshaking"
        case .connected: "connected"
        case .failed(let error): "failed (\(error))"
        case .closed: "closed"
        }
    }

    /// DTLS and SRTP are accepted only from addresses that passed an ICE check with our
    /// credentials (RFC 8445 §11: media follows a validated pair).
    private func isValidated(_ source: ICETransportAddress) -> Bool {
        switch agent {
        case .lite(let lite):
            return lite.validPairs.contains { $0.remote == source }
        case .full(let full):
            if full.selectedPair?.remote == source { return true }
            return full.checklist.contains { $0.remote.address == source && $0.state == .succeeded }
        }
    }

    private mutating func handle(_ iceActions: [ICEAction], now: ContinuousClock.Instant, into events: inout [MediaLegTransportEvent]) {
        for action in iceActions {
            switch action {
            case .send(let bytes, let from, let to):
                events.append(.send(bytes: bytes, from: from, to: to))
            case .stateChanged(let iceState):
                switch iceState {
                case .failed:
                    let reason = connected || selectedPair != nil
                        ? "ICE consent expired: no answer from the peer for \(consentTimeout) (RFC 7675)"
                        : "ICE failed: no candidate pair worked"
                    fail(MediaLegError(.ice, reason), into: &events)
                case .connected:
                    startDTLSClientIfReady(now: now, into: &events)
                    updateConnected(into: &events)
                default:
                    break
                }
            case .selectedPairChanged:
                startDTLSClientIfReady(now: now, into: &events)
                updateConnected(into: &events)
            case .dropped(let reason, let from):
                events.append(.dropped(.stun, from: from, detail: "STUN \(reason)"))
            }
        }
        // A lite agent validates pairs before the peer nominates: the DTLS client may start.
        if case .lite = agent { startDTLSClientIfReady(now: now, into: &events) }
    }

    private mutating func startDTLSClientIfReady(now: ContinuousClock.Instant, into events: inout [MediaLegTransportEvent]) {
        guard !dtlsStarted, started, !connected, !finished, dtls.configuration.role == .client, let destination = mediaDestination else { return }
        dtlsStarted = true
        dtlsPeer = destination.remote
        dtlsLocal = destination.local
        handle(dtls.start(now: now), now: now, into: &events)
    }

    private mutating func handle(_ dtlsActions: [DTLSAction], now: ContinuousClock.Instant, into events: inout [MediaLegTransportEvent]) {
        for action in dtlsActions {
            switch action {
            case .send(let bytes):
                guard let to = dtlsPeer ?? mediaDestination?.remote, let from = dtlsLocal ?? mediaDestination?.local else { continue }
                events.append(.send(bytes: bytes, from: from, to: to))
            case .connected(let keys):
                guard let profile = SRTPProfile(dtlsProfileID: keys.profile.profileID) else {
                    fail(MediaLegError(.srtp, "DTLS negotiated SRTP profile \(keys.profile.rawValue), which libsrtp cannot run"), into: &events)
                    continue
                }
                do {
                    let made = try MediaLegProtection.srtp(
                        profile: profile, localKeyMaterial: keys.localKeyAndSalt, remoteKeyMaterial: keys.remoteKeyAndSalt)
                    protection = made
                    events.append(.protected(made))
                    updateConnected(into: &events)
                } catch {
                    fail(MediaLegError(.srtp, "cannot create SRTP contexts: \(error)"), into: &events)
                }
            case .received:
                break  // WebRTC sends no application data over the DTLS association.
            case .closed:
                if started && !finished {
                    finished = true
                    events.append(.closedByPeer(MediaLegError(.dtls, "the peer closed the DTLS association")))
                }
            case .failed(let error):
                let kind: MediaLegError.Kind = error.kind == .fingerprintMismatch ? .fingerprint : .dtls
                fail(MediaLegError(kind, "DTLS \(error)"), into: &events)
            }
        }
    }

    private mutating func updateConnected(into events: inout [MediaLegTransportEvent]) {
        guard started, !connected, !finished, protection != nil, mediaDestination != nil else { return }
        let iceUp = iceState == .connected || iceState == .checking && mediaDestination != nil
        guard iceUp else { return }
        connected = true
        events.append(.connected)
    }

    private mutating func fail(_ error: MediaLegError, into events: inout [MediaLegTransportEvent]) {
        guard !finished else { return }
        finished = true
        events.append(.failed(error))
    }
}
