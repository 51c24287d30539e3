import ParleyCrypto
public import ParleyICECore
public import ParleyMediaCore
public import ParleyRTP
import ParleySDP
import ParleySRTP
public import ParleySTUN
public import ParleyWireCore

/// One audio leg, sans-I/O: SDP offer/answer, a transport (`MediaLegTransport`: ICE-lite or
/// full ICE with DTLS-SRTP for a WebRTC peer, or plain RTP with symmetric latching for a SIP
/// peer), Opus or G.711, a jitter buffer and RTCP reports.
///
/// It owns no socket and reads no clock. The driver hands it datagrams with the time they
/// arrived (`receive`), calls `handleTimeout` when `nextDeadline` passes, gives it 20 ms of
/// audio to send (`sendAudio`) and asks it for 20 ms to play (`playout`); every call
/// returns what to send and what changed. `MediaLeg` is the driver over real sockets.
///
/// Life of a leg: `makeOffer`/`acceptAnswer` or `answer(offer:)` fix the codec and build
/// the transport `configuration.transport` names from the peer's SDP; `start` starts it and
/// the leg is `connected` once the transport is up: for ICE + DTLS-SRTP when ICE validated
/// the peer's address, the DTLS handshake ran over it and the exported keys created the
/// SRTP contexts (consent, RFC 7675, keeps it alive; without it, or on a DTLS failure, the
/// leg goes to `failed` with a one-line reason); for plain RTP at once. What the leg does
/// with media (`mediaMode`) is the same code on either transport: every
/// packet is admitted by the transport, then unprotected and protected through the
/// `MediaLegProtection` it reported.
public struct MediaLegCore: ~Copyable {
    public let configuration: MediaLegConfiguration
    /// The host addresses the driver's sockets are bound to: our ICE candidates (a plain
    /// RTP leg announces the first in `c=` and the `m=` port).
    public let localAddresses: [ICETransportAddress]
    public private(set) var state: MediaLegState = .new
    /// Why the leg failed or closed, once it did.
    public private(set) var failure: MediaLegError?
    /// What the leg does with received media now: `configuration.mediaMode` until
    /// `setMediaMode` changes it.
    public private(set) var mediaMode: MediaLegMode

    private let epoch: ContinuousClock.Instant
    private let wallClockAtEpoch: Int64
    private var random: any RandomNumberGenerator & Sendable
    private let localCredentials: ICECredentials
    private let ssrc: UInt32
    private let cname: String
    private let sessionID: UInt64

    // Negotiation
    private var pendingOffer: SessionDescription?
    private var negotiated: NegotiatedAudio?
    private var weOffered = false

    // Transport: built by `configure` from the negotiated SDP; the protection it reported.
    private var transport: (any MediaLegTransport)?
    private var protection: MediaLegProtection?
    private var connectDeadline: ContinuousClock.Instant?

    // Media
    private var codec: AudioPayloadCodec?
    private var payloadType: UInt8 = 0
    private var telephoneEventPayloadType: UInt8?
    private var codecLabel: String?
    private var sequenceNumber: UInt16
    private var rtpTimestamp: UInt32
    private var markNextPacket = true
    /// Forward mode: the source stream being relayed and the offsets onto our numbering.
    private var relayOffsets: (ssrc: UInt32, sequence: UInt16, timestamp: UInt32)?
    /// The telephone event last reported, so repeats of one event are reported once.
    private var lastTelephoneEvent: (ssrc: UInt32, timestamp: UInt32, ended: Bool)?
    private var jitter = JitterBuffer()
    private var reporter: RTCPReporter
    private var inputResampler: Resampler?
    /// Decodes and conceals what the jitter buffer plays; set with the codec.
    private var audioPlayout: AudioPlayout?
    /// The encoder's FEC and expected loss, driven by the peer's receiver reports.
    public private(set) var lossProtection: OpusLossProtection
    /// How many earlier frames RED packets carry, driven by the same reports; never on
    /// unless RFC 2198 RED was negotiated.
    public private(set) var redundancyPolicy = RedundancyPolicy(allowed: false)
    /// RED's payload type when negotiated, and its two halves.
    private var redPayloadType: UInt8?
    private var redEncoder: RedundantAudioEncoder?
    private var redDecoder: RedundantAudioDecoder?
    /// Packets received since the last RED packet with blocks (nil: none, or long ago);
    /// it keeps the jitter buffer's floor while the sender sends RED.
    private var packetsSinceRedundancy: Int?
    /// Losses seen on the stream, for holding the buffer before RED arrives (`noteArrival`).
    private var arrivalLoss = ArrivalLossWatch()
    private var senderReports: [UInt32: (ntpNanoseconds: Int64, rtpTimestamp: UInt32)] = [:]
    private var delays: (count: Int, sum: Double, minimum: Double, maximum: Double) = (0, 0, .infinity, 0)
    private var stats = MediaLegStatistics()

    /// - Parameters:
    ///   - localAddresses: where the driver's sockets are bound (host candidates).
    ///   - now: the creation time, monotonic and wall clock (the wall clock gives RTCP's
    ///     NTP timestamps and delay measurement).
    ///   - random: ICE credentials, SSRC, sequence start, tie-breaker, RTCP jitter, and (a
    ///     copy of it) the full ICE agent's transaction IDs and consent jitter. The shell
    ///     passes `SystemRandomNumberGenerator` (cryptographically secure); tests pass a
    ///     seeded one so a leg's every draw repeats. DTLS keys and certificates do not come
    ///     from it: they are secret and come from OpenSSL (`DTLSCertificate`).
    public init(
        configuration: MediaLegConfiguration, localAddresses: [ICETransportAddress],
        now: ClockReading,
        random: some RandomNumberGenerator & Sendable
    ) {
        var random = random
        self.configuration = configuration
        self.localAddresses = localAddresses
        mediaMode = configuration.mediaMode
        epoch = now.instant
        wallClockAtEpoch = now.unixNanoseconds
        localCredentials = ICECredentials(ufrag: Self.iceString(8, using: &random), password: Self.iceString(24, using: &random))
        ssrc = configuration.ssrc ?? UInt32.random(in: 1...UInt32.max, using: &random)
        cname = configuration.cname ?? Self.iceString(16, using: &random)
        sessionID = UInt64.random(in: 1...(UInt64(1) << 62), using: &random)
        // Drawn even when configured, so the draws after them stay the same.
        sequenceNumber = UInt16.random(in: 0...0x7fff, using: &random)
        rtpTimestamp = UInt32.random(in: 0...UInt32.max, using: &random)
        if let start = configuration.sequenceNumberStart { sequenceNumber = start }
        if let start = configuration.timestampStart { rtpTimestamp = start }
        reporter = RTCPReporter(configuration: .init(
            ssrc: ssrc, cname: cname, clockRate: 48_000, clock: MediaClock(unixNanosecondsAtZero: now.unixNanoseconds)))
        lossProtection = OpusLossProtection(
            allowed: configuration.opusInbandFEC, maximumExpectedLossPercent: configuration.opusExpectedLossPercent)
        self.random = random
        if let iceMode = configuration.iceMode { stats.iceMode = iceMode }
    }

    // MARK: Offer / answer

    /// Our SDP offer (one audio section, `a=setup:actpass`, our host candidates).
    public mutating func makeOffer() throws(MediaLegError) -> String {
        guard state == .new, negotiated == nil else { throw MediaLegError(.state, "an offer can only be made before negotiation") }
        do {
            var negotiator = AudioOfferAnswer(local: capabilities())
            negotiator.local.sdesKeyMaterial = try Self.sdesKeyMaterial(negotiator.sdesKeyMaterialLengthForOffer)
            let offer = try negotiator.makeOffer()
            pendingOffer = offer
            weOffered = true
            return offer.serialized()
        } catch {
            throw MediaLegError(.negotiation, "cannot make an offer: \(error)")
        }
    }

    /// Takes the peer's answer to `makeOffer()`.
    public mutating func acceptAnswer(_ sdp: String) throws(MediaLegError) {
        guard let offer = pendingOffer, negotiated == nil else { throw MediaLegError(.state, "an answer without an outstanding offer") }
        let answer: SessionDescription
        do { answer = try SessionDescription(parsing: sdp) } catch { throw MediaLegError(.sdp, "answer: \(error)") }
        let audio: [NegotiatedAudio]
        do { audio = try AudioOfferAnswer(local: capabilities()).acceptAnswer(answer, to: offer) } catch {
            throw MediaLegError(.negotiation, "answer: \(error)")
        }
        guard let first = audio.first else { throw MediaLegError(.negotiation, "the answer accepted no audio section") }
        try configure(first)
        pendingOffer = nil
    }

    /// Answers the peer's offer; returns our answer SDP.
    public mutating func answer(offer sdp: String) throws(MediaLegError) -> String {
        guard state == .new, negotiated == nil, pendingOffer == nil else { throw MediaLegError(.state, "the leg is already negotiated") }
        let offer: SessionDescription
        do { offer = try SessionDescription(parsing: sdp) } catch { throw MediaLegError(.sdp, "offer: \(error)") }
        let answer: AudioAnswer
        var negotiator = AudioOfferAnswer(local: capabilities())
        negotiator.local.sdesKeyMaterial = try Self.sdesKeyMaterial(negotiator.sdesKeyMaterialLength(toAnswer: offer))
        do { answer = try negotiator.answer(to: offer) } catch {
            throw MediaLegError(.negotiation, "offer: \(error)")
        }
        guard let first = answer.audio.first else { throw MediaLegError(.negotiation, "no audio section accepted") }
        try configure(first)
        return answer.description.serialized()
    }

    private func capabilities() -> LocalAudioCapabilities {
        var candidates: [ICECandidate] = []
        var perFamily = (v4: 0, v6: 0)
        for (index, address) in localAddresses.enumerated() {
            let familyIndex: Int
            if address.isIPv6Address { familyIndex = perFamily.v6; perFamily.v6 += 1 } else { familyIndex = perFamily.v4; perFamily.v4 += 1 }
            let priority = ICEPriority.candidate(type: .host, localPreference: ICEPriority.localPreference(for: address, index: familyIndex))
            candidates.append(ICECandidate(foundation: String(index + 1), priority: priority, address: address.ip.description, port: address.port))
        }
        var local = LocalAudioCapabilities(
            iceUsernameFragment: localCredentials.ufrag, icePassword: localCredentials.password,
            fingerprint: Fingerprint(algorithm: "sha-256", bytes: configuration.certificate?.fingerprint.bytes ?? []),
            sessionID: sessionID, codecs: configuration.codecs, telephoneEvents: true, opusDTX: configuration.opusDTX,
            iceLite: configuration.iceMode == .lite, candidates: candidates, endOfCandidates: true,
            setupPreference: configuration.answerSetup,
            sendStream: .init(ssrc: ssrc, cname: cname, streamID: "parley", trackID: "audio"),
            originAddress: localAddresses.first?.ip.description ?? "127.0.0.1")
        local.rtcpFeedback = []
        local.opusRedundancy = configuration.opusRedundancy
        if case .plainRTP(let options) = configuration.transport {
            // The c=/m= address is our socket's; no candidates, no ICE, no fingerprint, and
            // none of WebRTC's header extensions (the relay strips them anyway).
            local.transport = .plainRTP(address: localAddresses.first?.ip.description ?? "", port: localAddresses.first?.port ?? 0)
            local.candidates = []
            local.headerExtensions = []
            local.sdesSuites = PlainRTPTransport.sdesSuites
            local.offersSDES = options.offersSDES
        }
        return local
    }

    /// SDES master keys are secrets: they come from OpenSSL's generator, never from the
    /// leg's seeded one (which tests fix).
    private static func sdesKeyMaterial(_ count: Int) throws(MediaLegError) -> [UInt8] {
        guard count > 0 else { return [] }
        do { return try SecureRandom.bytes(count) } catch {
            throw MediaLegError(.srtp, "cannot draw SDES keys: \(error)")
        }
    }

    private mutating func configure(_ audio: NegotiatedAudio) throws(MediaLegError) {
        // FEC starts off and follows the loss the peer reports (`lossProtection`).
        let options = AudioPayloadCodec.OpusOptions(
            bitrate: configuration.opusBitrate, inbandFEC: lossProtection.inbandFEC,
            dtx: configuration.opusDTX, expectedLossPercent: lossProtection.expectedLossPercent,
            complexity: configuration.opusComplexity)
        let made: AudioPayloadCodec?
        do { made = try AudioPayloadCodec(name: audio.codec.name, opus: options, audioRate: configuration.audioRate) } catch {
            throw MediaLegError(.codec, "\(error)")
        }
        guard let codec = made else {
            throw MediaLegError(.negotiation, "negotiated codec \(audio.codec.name) is not one the leg can run")
        }
        switch configuration.transport {
        case .iceDTLS(let iceMode, let certificate):
            let tieBreaker = iceMode == .full ? UInt64.random(in: 0...UInt64.max, using: &random) : 0
            transport = try ICEDTLSTransport(
                negotiated: audio, iceMode: iceMode, certificate: certificate, configuration: configuration,
                localCredentials: localCredentials, localAddresses: localAddresses, weOffered: weOffered, tieBreaker: tieBreaker,
                random: random)
        case .plainRTP(var options):
            guard let local = localAddresses.first else { throw MediaLegError(.negotiation, "a plain RTP leg needs a local address") }
            if let sdes = audio.sdes { options.keys = try PlainRTPTransport.Keys(negotiated: sdes) }
            transport = try PlainRTPTransport(negotiated: audio, local: local, options: options)
        }
        self.codec = codec
        // The comfort noise needs no secrecy, only a seed of its own; taking it from values
        // already drawn leaves the leg's later draws (RTCP schedule, ICE) as they were.
        audioPlayout = AudioPlayout(codec: codec, noiseSeed: UInt64(ssrc) << 32 ^ sessionID)
        payloadType = audio.codec.payloadType
        telephoneEventPayloadType = audio.telephoneEvent?.payloadType
        codecLabel = "\(audio.codec.name)/\(audio.codec.clockRate)" + (audio.codec.channels > 1 ? "/\(audio.codec.channels)" : "")
        var jitterConfiguration = configuration.jitterBuffer
        jitterConfiguration.clockRate = UInt32(codec.clockRate)
        jitter = JitterBuffer(configuration: jitterConfiguration)
        var reporting = RTCPReporter.Configuration(
            ssrc: ssrc, cname: cname, clockRate: UInt32(codec.clockRate), clock: MediaClock(unixNanosecondsAtZero: wallClockAtEpoch))
        // A WebRTC leg is SAVPF, where RFC 4585 §3.4 lifts RFC 3550's 5 s minimum: reports a
        // second apart let the sender's FEC and RED follow loss within the call's first
        // seconds. A plain RTP leg (AVP or SAVP) keeps the 5 s.
        if case .iceDTLS = configuration.transport { reporting.nominalInterval = RTCPReporter.Configuration.feedbackProfileInterval }
        reporter = RTCPReporter(configuration: reporting)
        if let red = audio.redundancy, codec.kind == .opus {
            redPayloadType = red.payloadType
            redEncoder = RedundantAudioEncoder(redPayloadType: red.payloadType, primaryPayloadType: audio.codec.payloadType)
            redDecoder = RedundantAudioDecoder(primaryPayloadType: audio.codec.payloadType, frameDuration: UInt32(codec.timestampStep))
            redundancyPolicy = RedundancyPolicy(allowed: true)
        }
        negotiated = audio
        stats.codec = codecLabel
    }

    // MARK: Driving

    /// Starts the transport: ICE (and the DTLS server, which then waits for the client's
    /// hello), or a plain RTP leg's latching window (connected at once).
    public mutating func start(now: ContinuousClock.Instant) throws(MediaLegError) -> [MediaLegAction] {
        guard state == .new else { return [] }
        guard negotiated != nil, transport != nil else { throw MediaLegError(.state, "start before offer/answer completed") }
        var actions: [MediaLegAction] = []
        setState(.checking, into: &actions)
        connectDeadline = now + configuration.connectTimeout
        apply(transport!.start(now: now), into: &actions)
        return actions
    }

    /// When to call `handleTimeout(now:)` next.
    public var nextDeadline: ContinuousClock.Instant? {
        guard state == .checking || state == .connected else { return nil }
        var deadline: ContinuousClock.Instant?
        func consider(_ instant: ContinuousClock.Instant?) {
            guard let instant else { return }
            if deadline.map({ instant < $0 }) ?? true { deadline = instant }
        }
        consider(transport?.nextDeadline)
        if state == .checking { consider(connectDeadline) }
        if state == .connected {
            if let next = reporter.nextReportTime {
                consider(instant(nanoseconds: next))
            } else {
                consider(epoch)  // schedules the first report
            }
        }
        return deadline
    }

    /// Runs the transport's timers (ICE retransmissions and consent, DTLS retransmissions,
    /// a latching window), RTCP reports and the connect timeout.
    public mutating func handleTimeout(now: ContinuousClock.Instant) -> [MediaLegAction] {
        guard state == .checking || state == .connected else { return [] }
        var actions: [MediaLegAction] = []
        if transport != nil { apply(transport!.handleTimeout(now: now), into: &actions) }
        if state == .checking, let connectDeadline, now >= connectDeadline {
            let progress = transport?.progressDescription ?? "no transport"
            fail(MediaLegError(.timeout, "not connected \(configuration.connectTimeout) after start (\(progress))"), into: &actions)
        }
        if state == .connected {
            let ns = nanoseconds(now)
            if let report = reporter.poll(now: ns, using: &random) {
                sendRTCP(report, into: &actions)
            }
        }
        return actions
    }

    /// Handles one datagram that arrived from `source` on the socket bound to `local`.
    public mutating func receive(
        _ datagram: [UInt8], from source: ICETransportAddress, on local: ICETransportAddress, now: ContinuousClock.Instant
    ) -> [MediaLegAction] {
        var actions: [MediaLegAction] = []
        guard let first = datagram.first else {
            drop(.empty, from: source, "empty datagram", into: &actions)
            return actions
        }
        switch first {
        case 0...3:
            guard state == .checking || state == .connected || state == .new, transport != nil else {
                drop(.stun, from: source, "STUN while \(state)", into: &actions)
                return actions
            }
            apply(transport!.receiveNonMedia(datagram, from: source, on: local, now: now), into: &actions)
        case 20...63:
            guard transport != nil else {
                drop(.unvalidatedSource, from: source, "DTLS from an address ICE has not validated", into: &actions)
                return actions
            }
            apply(transport!.receiveNonMedia(datagram, from: source, on: local, now: now), into: &actions)
        case 128...191:
            // RFC 5761 §4: with rtcp-mux, RTCP packet types 192-223 sit where RTP has
            // marker+payload type.
            let isRTCP = datagram.count >= 2 && (192...223).contains(datagram[1])
            let admission = transport == nil
                ? .refuse(.unvalidatedSource, detail: "RTP from an address ICE has not validated")
                : transport!.admit(from: source, isRTCP: isRTCP, now: now)
            if case .refuse(let reason, let detail) = admission {
                drop(reason, from: source, detail, into: &actions)
                return actions
            }
            guard let protection else {
                drop(.beforeKeys, from: source, "SRTP before the DTLS handshake finished", into: &actions)
                return actions
            }
            let learning = admission == .learn
            if isRTCP {
                receiveRTCP(datagram, protection: protection, from: source, learning: learning, now: now, into: &actions)
            } else {
                receiveRTP(datagram, protection: protection, from: source, learning: learning, now: now, into: &actions)
            }
        default:
            drop(.unknownKind, from: source, "first byte \(first) is not STUN, DTLS or RTP (RFC 7983)", into: &actions)
        }
        return actions
    }

    /// Encodes and sends one 20 ms frame (any rate, resampled to `configuration.audioRate`
    /// when it differs; mono or stereo, downmixed). Frames
    /// given before the leg is connected are counted and dropped.
    public mutating func sendAudio(_ frame: AudioFrame, now: ContinuousClock.Instant) throws(MediaLegError) -> [MediaLegAction] {
        guard state == .connected, let codec, protection != nil, transport?.mediaDestination != nil else {
            stats.framesNotSent &+= 1
            return []
        }
        let samples = try encoderInput(frame)
        let payload: [UInt8]
        do { payload = try codec.encode(samples) } catch { throw MediaLegError(.codec, "\(error)") }
        return try packetize(payload, codec: codec, now: now)
    }

    /// The most bytes `sendEncodedAudio` takes as one frame (RFC 6716 §3.4's largest Opus
    /// frame, 1275 bytes, with room for G.711 at any ptime we send).
    public static let maximumEncodedPayload = 1500

    /// Sends one 20 ms frame someone else already encoded, through this leg's own
    /// packetizer: its SSRC, sequence numbers, timestamps and marker, RED wrapping when on,
    /// DTX as `sendAudio` does it, SRTP. The payload must come from an encoder of this
    /// leg's `encoderConfiguration` (a conference mixer encodes the mix its listeners share
    /// once per configuration). Frames given before the leg is connected are counted and
    /// dropped; an empty payload or one over `maximumEncodedPayload` bytes is refused.
    public mutating func sendEncodedAudio(payload: [UInt8], now: ContinuousClock.Instant) throws(MediaLegError) -> [MediaLegAction] {
        guard !payload.isEmpty, payload.count <= Self.maximumEncodedPayload else {
            throw MediaLegError(.codec, "an encoded frame of \(payload.count) bytes (1...\(Self.maximumEncodedPayload))")
        }
        guard state == .connected, let codec, protection != nil, transport?.mediaDestination != nil else {
            stats.framesNotSent &+= 1
            return []
        }
        return try packetize(payload, codec: codec, now: now)
    }

    /// What the leg's encoder is set to now (codec, and for Opus its bitrate, complexity,
    /// DTX and the FEC the peer's loss reports chose), nil before negotiation. It changes when the
    /// loss protection does, so a sharer reads it again each frame.
    public var encoderConfiguration: AudioEncoderConfiguration? {
        guard let codec else { return nil }
        guard codec.kind == .opus else { return AudioEncoderConfiguration(kind: codec.kind, audioRate: codec.audioRate) }
        return AudioEncoderConfiguration(kind: .opus, opus: AudioPayloadCodec.OpusOptions(
            bitrate: configuration.opusBitrate, inbandFEC: lossProtection.inbandFEC, dtx: configuration.opusDTX,
            expectedLossPercent: lossProtection.expectedLossPercent, complexity: configuration.opusComplexity),
            audioRate: codec.audioRate)
    }

    /// One encoded frame onto the wire as the next packet of our stream.
    private mutating func packetize(_ payload: [UInt8], codec: AudioPayloadCodec, now: ContinuousClock.Instant) throws(MediaLegError) -> [MediaLegAction] {
        guard let protection, let destination = transport?.mediaDestination else {
            stats.framesNotSent &+= 1
            return []
        }
        defer { rtpTimestamp &+= codec.timestampStep }
        // Opus DTX: a 1-2 byte result means "nothing worth sending" (RFC 7587 §3.1.3).
        if configuration.opusDTX, codec.kind == .opus, payload.count <= 2 {
            stats.framesNotSent &+= 1
            markNextPacket = true
            return []
        }
        var packet = RTPPacket(
            marker: markNextPacket, payloadType: payloadType, sequenceNumber: sequenceNumber,
            timestamp: rtpTimestamp, ssrc: ssrc, payload: payload[...])
        if let redPayloadType, let wrapped = redEncoder?.wrap(payload[...], timestamp: rtpTimestamp, stream: ssrc) {
            packet.payloadType = redPayloadType
            packet.payload = wrapped[...]
            stats.redPacketsSent &+= 1
        }
        markNextPacket = false
        sequenceNumber &+= 1
        var actions: [MediaLegAction] = []
        do {
            let bytes = try protection.protect(rtp: try packet.serialized())
            actions.append(.send(bytes: bytes, from: destination.local, to: destination.remote))
        } catch {
            throw MediaLegError(.srtp, "cannot protect RTP: \(error)")
        }
        reporter.recordSent(timestamp: rtpTimestamp, payloadBytes: payload.count, now: nanoseconds(now))
        stats.framesSent &+= 1
        return actions
    }

    /// Sends one RFC 4733 telephone-event packet (§2.5) with the negotiated
    /// `telephone-event` payload type. An event is a run of such packets sharing
    /// `eventTimestamp` (the RTP time it began), its duration growing, the last with the E
    /// bit, usually sent three times; `marker` goes on the first. The caller paces the run.
    /// Nothing is sent before the leg is connected or when the peer did not negotiate
    /// telephone events.
    public mutating func sendTelephoneEvent(
        _ event: TelephoneEvent, eventTimestamp: UInt32, marker: Bool, now: ContinuousClock.Instant
    ) -> [MediaLegAction] {
        guard state == .connected, let telephoneEventPayloadType, let protection, let destination = transport?.mediaDestination else {
            stats.framesNotSent &+= 1
            return []
        }
        let packet = RTPPacket(
            marker: marker, payloadType: telephoneEventPayloadType, sequenceNumber: sequenceNumber,
            timestamp: eventTimestamp, ssrc: ssrc, payload: ((try? event.serialized()) ?? [])[...])
        guard packet.payload.count == TelephoneEvent.size, let plain = try? packet.serialized(),
              let bytes = try? protection.protect(rtp: plain) else {
            stats.framesNotSent &+= 1
            return []
        }
        sequenceNumber &+= 1
        // A relayed stream goes on numbering after the event's packet, never on it.
        relayOffsets?.sequence &+= 1
        return [.send(bytes: bytes, from: destination.local, to: destination.remote)]
    }

    /// The RTP timestamp the next audio frame will carry (where a telephone event that
    /// begins now starts).
    public var nextRTPTimestamp: UInt32 { rtpTimestamp }

    /// Leaves one 20 ms frame out of the stream: the RTP timestamp moves on as if it had
    /// been sent, and the next packet `sendAudio` makes carries the marker bit (RFC 3551
    /// §4.1, the first packet after a silence). For a sender that fills that slot with
    /// something else (RFC 4733 events, which stand for the tone) or with nothing, so the
    /// audio after it keeps its place in time and the next event gets a timestamp of its own.
    public mutating func skipAudioFrame() {
        guard let codec else { return }
        rtpTimestamp &+= codec.timestampStep
        markNextPacket = true
    }

    /// Changes what the leg does with the media it receives from now on: a gateway whose
    /// two legs turn out to have negotiated the same codec relays (`.forward`) rather than
    /// transcodes (`.decode`). Packets already in the jitter buffer stay there.
    public mutating func setMediaMode(_ mode: MediaLegMode) {
        mediaMode = mode
    }

    /// The clock rate of the negotiated `telephone-event` (the unit of an event's
    /// duration), nil when the peer did not agree to telephone events or before the leg
    /// is configured: a sender checks it before a run of `sendTelephoneEvent`.
    public var telephoneEventClockRate: UInt32? {
        guard telephoneEventPayloadType != nil, let codec else { return nil }
        return UInt32(codec.clockRate)
    }

    /// Forward mode: sends a packet received on another leg of the call, unchanged but for
    /// what must be ours: payload type, SSRC, and sequence numbers and timestamps moved by
    /// a fixed offset (so the receiver still sees the sender's gaps and timing). The same
    /// rewrite as `relay(buffer:length:now:)`, for a packet that is not in a buffer.
    /// With RED negotiated and on (`sendsRedundancy`), the packet goes out wrapped with the
    /// frames relayed before it.
    public mutating func relay(_ packet: RTPPacket, now: ContinuousClock.Instant) -> [MediaLegAction] {
        var packet = packet
        var outgoingPayloadType = payloadType
        if state == .connected, let redPayloadType,
           let wrapped = redEncoder?.wrap(packet.payload, timestamp: packet.timestamp, stream: packet.ssrc) {
            packet.payload = wrapped[...]
            outgoingPayloadType = redPayloadType
        }
        guard let plain = try? packet.serialized() else {
            stats.framesNotSent &+= 1
            return []
        }
        let room = plain.count + (protection?.rtpTrailerLength ?? 0)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: room, alignment: 16)
        defer { buffer.deallocate() }
        plain.withUnsafeBytes { buffer.copyMemory(from: $0) }
        let wrapped = outgoingPayloadType != payloadType
        guard let sent = relay(buffer: buffer, length: plain.count, payloadType: outgoingPayloadType, remember: !wrapped, now: now)
        else { return [] }
        if wrapped { stats.redPacketsSent &+= 1 }
        return [.send(bytes: [UInt8](UnsafeRawBufferPointer(rebasing: buffer[..<sent.length])), from: sent.from, to: sent.to)]
    }

    /// Forward mode, in place: the plain RTP packet in the first `length` bytes of `buffer`
    /// (decrypted there by another leg's `receive(buffer:length:from:on:now:)`) is rewritten
    /// onto this leg's stream (payload type, SSRC, sequence and timestamp offsets; CSRCs and
    /// header extensions removed) and protected with this leg's SRTP session, still in place.
    /// Returns the length to send and where; nil (counted as not sent) before the leg is
    /// connected, or when the buffer has no room for the tag.
    ///
    /// This is the relay's per-packet path in parleyd, and what `ParleyBench relay` measures.
    public mutating func relay(
        buffer: UnsafeMutableRawBufferPointer, length: Int, now: ContinuousClock.Instant
    ) -> (length: Int, from: ICETransportAddress, to: ICETransportAddress)? {
        relay(buffer: buffer, length: length, payloadType: payloadType, remember: true, now: now)
    }

    /// Whether packets this leg relays go out wrapped in RED (negotiated, and the peer's
    /// reports asked for it), so they need `relay(_:now:)` rather than the in-place path.
    public var sendsRedundancy: Bool { (redEncoder?.depth ?? 0) > 0 }

    /// `remember`: keep the frame for later RED packets (false when it is already wrapped).
    private mutating func relay(
        buffer: UnsafeMutableRawBufferPointer, length: Int, payloadType outgoingPayloadType: UInt8, remember: Bool,
        now: ContinuousClock.Instant
    ) -> (length: Int, from: ICETransportAddress, to: ICETransportAddress)? {
        guard state == .connected, let protection, let destination = transport?.mediaDestination,
              let header = Self.rtpHeader(buffer, length) else {
            stats.framesNotSent &+= 1
            return nil
        }
        if relayOffsets == nil || relayOffsets?.ssrc != header.ssrc {
            relayOffsets = (header.ssrc, sequenceNumber &- header.sequenceNumber, rtpTimestamp &- header.timestamp)
        }
        guard let offsets = relayOffsets else { return nil }
        // Drop CSRCs and header extensions: they describe the other leg's stream.
        var plain = length
        if header.headerLength > 12 {
            let moved = length - header.headerLength
            if moved > 0, let base = buffer.baseAddress {
                (base + 12).copyMemory(from: base + header.headerLength, byteCount: moved)
            }
            plain = 12 + max(0, moved)
        }
        guard plain + protection.rtpTrailerLength <= buffer.count else {
            stats.framesNotSent &+= 1
            return nil
        }
        let sequence = header.sequenceNumber &+ offsets.sequence
        let timestamp = header.timestamp &+ offsets.timestamp
        if remember, redEncoder != nil, plain - header.paddingLength >= 12 {
            let payload = [UInt8](UnsafeRawBufferPointer(rebasing: buffer[12..<(plain - header.paddingLength)]))
            redEncoder?.remember(payload[...], timestamp: header.timestamp, stream: header.ssrc)
        }
        buffer[0] = 0x80 | (buffer[0] & 0x20)  // version 2, padding kept, no extension, no CSRC
        buffer[1] = (buffer[1] & 0x80) | (outgoingPayloadType & 0x7f)
        Self.store(UInt32(sequence), into: buffer, at: 2, bytes: 2)
        Self.store(timestamp, into: buffer, at: 4, bytes: 4)
        Self.store(ssrc, into: buffer, at: 8, bytes: 4)
        // Continue from here if the other side's stream restarts (new SSRC).
        sequenceNumber = sequence &+ 1
        rtpTimestamp = timestamp &+ (codec?.timestampStep ?? 960)
        let protected: Int
        do throws(SRTPError) { protected = try protection.protect(buffer: buffer, length: plain) } catch {
            stats.framesNotSent &+= 1
            return nil
        }
        reporter.recordSent(timestamp: timestamp, payloadBytes: plain - 12 - header.paddingLength, now: nanoseconds(now))
        stats.framesSent &+= 1
        return (protected, destination.local, destination.remote)
    }

    /// What `receive(buffer:length:from:on:now:)` did with a datagram.
    public enum InPlaceReceipt: Sendable, Hashable {
        /// Forward mode: an authenticated RTP packet of the negotiated codec; the first
        /// `length` bytes of the buffer now hold it decrypted. Hand it to the other leg's
        /// `relay(buffer:length:now:)` before the buffer is used again.
        case media(length: Int)
        /// Anything else (STUN, DTLS, RTCP, telephone events, a drop, or a leg in `.decode`
        /// mode): the datagram went through `receive(_:from:on:now:)`; these are its actions.
        case handled([MediaLegAction])
    }

    /// Handles one datagram in the first `length` bytes of `buffer`, as
    /// `receive(_:from:on:now:)` does, but a forward-mode leg decrypts RTP of the negotiated
    /// codec in place instead of copying it out (`.media`). `buffer` should have room past
    /// the datagram for the largest SRTP tag (16 bytes), for the other leg's `relay`.
    public mutating func receive(
        buffer: UnsafeMutableRawBufferPointer, length: Int, from source: ICETransportAddress, on local: ICETransportAddress,
        now: ContinuousClock.Instant
    ) -> InPlaceReceipt {
        guard mediaMode == .forward, length >= 12, length <= buffer.count,
              (128...191).contains(buffer[0]), !(192...223).contains(buffer[1]),
              buffer[1] & 0x7f == payloadType, negotiated != nil,
              let protection, transport != nil else {
            return .handled(receive([UInt8](UnsafeRawBufferPointer(rebasing: buffer[..<min(length, buffer.count)])),
                                    from: source, on: local, now: now))
        }
        var actions: [MediaLegAction] = []
        let admission = transport!.admit(from: source, isRTCP: false, now: now)
        if case .refuse(let reason, let detail) = admission {
            drop(reason, from: source, detail, into: &actions)
            return .handled(actions)
        }
        let plain: Int
        do throws(SRTPError) { plain = try protection.unprotect(buffer: buffer, length: length) } catch {
            drop(Self.reason(for: error), from: source, "SRTP \(error)", into: &actions)
            return .handled(actions)
        }
        guard let header = Self.rtpHeader(buffer, plain) else {
            drop(.malformedRTP, from: source, "RTP header does not fit the packet", into: &actions)
            return .handled(actions)
        }
        if admission == .learn { transport!.confirm(source, now: now) }
        redDecoder?.note(header.sequenceNumber, ssrc: header.ssrc)
        reporter.recordReceived(
            ssrc: header.ssrc, sequenceNumber: header.sequenceNumber, timestamp: header.timestamp,
            payloadBytes: plain - header.headerLength - header.paddingLength, now: nanoseconds(now))
        return .media(length: plain)
    }

    /// The fields of a plain RTP header in place, validated as `RTPPacket(parsing:)` does
    /// (version 2, CSRCs, extension and padding within the packet); nil when it is not one.
    private static func rtpHeader(_ buffer: UnsafeMutableRawBufferPointer, _ length: Int)
        -> (ssrc: UInt32, sequenceNumber: UInt16, timestamp: UInt32, headerLength: Int, paddingLength: Int)? {
        guard length >= 12, length <= buffer.count, buffer[0] >> 6 == 2 else { return nil }
        var headerLength = 12 + 4 * Int(buffer[0] & 0x0f)
        if buffer[0] & 0x10 != 0 {
            guard headerLength + 4 <= length else { return nil }
            headerLength += 4 + 4 * (Int(buffer[headerLength + 2]) << 8 | Int(buffer[headerLength + 3]))
        }
        var paddingLength = 0
        if buffer[0] & 0x20 != 0 {
            paddingLength = Int(buffer[length - 1])
            guard paddingLength >= 1 else { return nil }
        }
        guard headerLength + paddingLength <= length else { return nil }
        func load(_ offset: Int, _ count: Int) -> UInt32 {
            var value: UInt32 = 0
            for index in offset..<(offset + count) { value = value << 8 | UInt32(buffer[index]) }
            return value
        }
        return (load(8, 4), UInt16(load(2, 2)), load(4, 4), headerLength, paddingLength)
    }

    private static func store(_ value: UInt32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int, bytes: Int) {
        for index in 0..<bytes { buffer[offset + index] = UInt8(truncatingIfNeeded: value >> (8 * UInt32(bytes - 1 - index))) }
    }

    /// The next 20 ms of received audio, mono at `configuration.audioRate` (960 samples at
    /// 48 kHz): decoded packets, concealment for losses, silence when nothing is due. Call
    /// once per 20 ms tick.
    public mutating func playout(now: ContinuousClock.Instant) -> [Int16] {
        let tick = configuration.audioRate / 50
        guard let codec, state == .connected || state == .checking else {
            stats.framesSilent &+= 1
            return [Int16](repeating: 0, count: tick)
        }
        let ns = nanoseconds(now)
        // In place: a copy would make its pending audio copy on every tick.
        guard let played = audioPlayout?.tick(from: &jitter, now: ns) else {
            stats.framesSilent &+= 1
            return [Int16](repeating: 0, count: tick)
        }
        for timestamp in played.decodedTimestamps { measureDelay(timestamp: timestamp, clockRate: codec.clockRate, now: ns) }
        if played.undecodable > 0 { stats.dropped[.undecodable, default: 0] &+= UInt64(played.undecodable) }
        switch played.kind {
        case .packet: stats.framesPlayedFromPackets &+= 1
        case .concealed: stats.framesConcealed &+= 1
        case .silent: stats.framesSilent &+= 1
        }
        return played.samples
    }

    /// Ends the leg: an RTCP BYE and a DTLS close_notify when connected, then `closed`.
    public mutating func close(now: ContinuousClock.Instant) -> [MediaLegAction] {
        guard state != .closed else { return [] }
        var actions: [MediaLegAction] = []
        if state == .connected {
            var report = reporter.makeReport(now: nanoseconds(now))
            report.packets.append(.goodbye(RTCPGoodbye(ssrcs: [ssrc])))
            sendRTCP(report, into: &actions)
        }
        if transport != nil { apply(transport!.close(now: now), into: &actions) }
        setState(.closed, into: &actions)
        return actions
    }

    /// Everything the leg counted, as of now.
    public var statistics: MediaLegStatistics {
        var result = stats
        result.state = state
        result.failure = failure?.description
        transport?.record(into: &result)
        result.srtpProfile = protection?.profileName
        result.rtp = reporter.statistics
        result.srtpInbound = protection?.inboundCounters ?? SRTPCounters()
        result.jitterBuffer = jitter.statistics
        result.playout = audioPlayout?.statistics ?? AudioPlayout.Statistics()
        result.rtcpReportsSent = reporter.reportsSent
        if delays.count > 0 {
            result.endToEndDelayMilliseconds = .init(
                count: delays.count, minimum: delays.minimum, mean: delays.sum / Double(delays.count), maximum: delays.maximum)
        }
        return result
    }

    // MARK: Internals

    /// Where ICE is (`.new` on a plain RTP leg, which has none).
    public var iceState: ICEConnectionState {
        (transport as? ICEDTLSTransport)?.iceState ?? .new
    }

    /// The pair ICE selected; nil on a plain RTP leg.
    public var selectedPair: ICECandidatePair? {
        (transport as? ICEDTLSTransport)?.selectedPair
    }

    /// Carries out what the transport reported.
    private mutating func apply(_ events: [MediaLegTransportEvent], into actions: inout [MediaLegAction]) {
        for event in events {
            switch event {
            case .send(let bytes, let from, let to):
                actions.append(.send(bytes: bytes, from: from, to: to))
            case .protected(let made):
                protection = made
            case .connected:
                if state == .checking { setState(.connected, into: &actions) }
            case .failed(let error):
                fail(error, into: &actions)
            case .closedByPeer(let error):
                if state == .checking || state == .connected {
                    failure = error
                    setState(.closed, into: &actions)
                }
            case .dropped(let reason, let from, let detail):
                drop(reason, from: from, detail, into: &actions)
            }
        }
    }

    /// `learning`: the transport may latch onto `source` once the packet proved genuine.
    private mutating func receiveRTP(
        _ datagram: [UInt8], protection: MediaLegProtection, from source: ICETransportAddress, learning: Bool,
        now: ContinuousClock.Instant, into actions: inout [MediaLegAction]
    ) {
        let plain: [UInt8]
        do { plain = try protection.unprotect(rtp: datagram) } catch {
            drop(Self.reason(for: error), from: source, "SRTP \(error)", into: &actions)
            return
        }
        let packet: RTPPacket
        do { packet = try RTPPacket(parsing: plain) } catch {
            drop(.malformedRTP, from: source, "RTP \(error)", into: &actions)
            return
        }
        if packet.payloadType == telephoneEventPayloadType {
            if learning { transport?.confirm(source, now: now) }
            // Events share the stream's sequence numbers: uncounted, each would read as a
            // lost packet in our statistics and RTCP (and drive the peer's FEC and RED).
            reporter.recordReceived(ssrc: packet.ssrc, sequenceNumber: packet.sequenceNumber, timestamp: packet.timestamp,
                                    payloadBytes: packet.payload.count, now: nanoseconds(now), updatesJitter: false)
            receiveTelephoneEvent(packet, from: source, into: &actions)
            return
        }
        if packet.payloadType == redPayloadType, redDecoder != nil {
            receiveRedundant(packet, from: source, learning: learning, now: now, into: &actions)
            return
        }
        guard packet.payloadType == payloadType else {
            drop(.unknownPayloadType, from: source, "RTP payload type \(packet.payloadType) was not negotiated", into: &actions)
            return
        }
        if learning { transport?.confirm(source, now: now) }
        let ns = nanoseconds(now)
        reporter.recordReceived(packet, now: ns)
        redDecoder?.note(packet.sequenceNumber, ssrc: packet.ssrc)
        switch mediaMode {
        case .forward: actions.append(.receivedRTP(packet))
        case .decode:
            if redDecoder != nil {
                if arrivalLoss.note(packet.sequenceNumber) { holdDelayForRedundancy(depth: 1) }
                else if packetsSinceRedundancy != nil { holdDelayForRedundancy(depth: 0) }
            }
            _ = jitter.push(packet, now: ns)
        }
    }

    /// RFC 2198: the primary goes on as the packet, and each earlier frame that had not
    /// arrived goes on before it as that packet (into the jitter buffer, or to the other
    /// leg). RTCP counts only the packet that arrived, so the peer still sees the real
    /// loss and keeps redundancy on.
    private mutating func receiveRedundant(
        _ packet: RTPPacket, from source: ICETransportAddress, learning: Bool, now: ContinuousClock.Instant,
        into actions: inout [MediaLegAction]
    ) {
        let unwrapped: RedundantAudioDecoder.Unwrapped
        do throws(RTPError) {
            guard let decoded = try redDecoder?.unwrap(packet) else { return }
            unwrapped = decoded
        } catch {
            drop(.malformedRTP, from: source, "RED \(error)", into: &actions)
            return
        }
        if learning { transport?.confirm(source, now: now) }
        let ns = nanoseconds(now)
        reporter.recordReceived(unwrapped.primary, now: ns)
        switch mediaMode {
        case .forward:
            for recovered in unwrapped.recovered { actions.append(.receivedRTP(recovered)) }
            stats.redRecovered &+= UInt64(unwrapped.recovered.count)
            actions.append(.receivedRTP(unwrapped.primary))
        case .decode:
            let lossy = arrivalLoss.note(unwrapped.primary.sequenceNumber)
            holdDelayForRedundancy(depth: lossy ? max(unwrapped.depth, 1) : unwrapped.depth)
            for recovered in unwrapped.recovered {
                switch jitter.push(recovered, now: ns) {
                case .buffered, .bufferedAfterReset: stats.redRecovered &+= 1
                default: break  // too late to play: not recovered
                }
            }
            _ = jitter.push(unwrapped.primary, now: ns)
        }
    }

    /// A frame carried k packets back arrives (k - 1) frames after its slot at the least
    /// delay, so while the sender sends RED at all the buffer holds two frames and a margin
    /// (`redundancyDelayFloor`): the sender may go from one block to two at any report,
    /// and a floor that followed each change would stretch and shrink mid-speech. With it
    /// two lost packets in a row are rebuilt rather than concealed and then played late.
    /// The floor goes once no RED blocks came for `redundancyFloorHold` packets. It is also
    /// set as soon as our own stream shows loss worth RED (`ArrivalLossWatch`): the sender
    /// hears of it only at the next report, and the stretch that raises the delay is
    /// better heard at the call's start than in the middle of a sentence.
    private mutating func holdDelayForRedundancy(depth: Int) {
        if depth >= 1 {
            if packetsSinceRedundancy == nil { jitter.delayFloor = Self.redundancyDelayFloor(frame: configuration.jitterBuffer.frameDuration) }
            packetsSinceRedundancy = 0
        } else if let since = packetsSinceRedundancy {
            packetsSinceRedundancy = since + 1
            if since + 1 >= Self.redundancyFloorHold {
                jitter.delayFloor = .zero
                packetsSinceRedundancy = nil
            }
        }
    }

    /// The jitter buffer's least delay while RED comes: the deepest blocks we ask for
    /// (`RedundancyPolicy.maximumDepth` frames) plus 5 ms for the network's own spread.
    static func redundancyDelayFloor(frame: Duration) -> Duration {
        frame * RedundancyPolicy.maximumDepth + .milliseconds(5)
    }
    /// Packets without RED blocks (15 s at 20 ms) before the buffer's floor goes: long
    /// enough that a sender whose loss estimate hovers near its threshold does not move it.
    static let redundancyFloorHold = 750

    /// RFC 4733 §2.5: an event is sent as a run of packets sharing one RTP timestamp, its
    /// duration growing, the last (E bit set) usually three times. Each event comes out
    /// twice at most: once when it begins and once when it ends (an event whose first
    /// packets were lost comes out once, ended).
    private mutating func receiveTelephoneEvent(_ packet: RTPPacket, from source: ICETransportAddress, into actions: inout [MediaLegAction]) {
        let blocks: [TelephoneEvent]
        do { blocks = try TelephoneEvent.parseBlocks(packet.payload) } catch {
            drop(.malformedRTP, from: source, "telephone-event \(error)", into: &actions)
            return
        }
        // RFC 4733 §2.5.1.5: with several blocks (redundancy), the last one is this packet's.
        guard let event = blocks.last else { return }
        let isNew = lastTelephoneEvent.map { $0.ssrc != packet.ssrc || $0.timestamp != packet.timestamp } ?? true
        if isNew {
            lastTelephoneEvent = (packet.ssrc, packet.timestamp, event.isEnd)
            actions.append(.receivedTelephoneEvent(event, timestamp: packet.timestamp))
        } else if event.isEnd, lastTelephoneEvent?.ended == false {
            lastTelephoneEvent?.ended = true
            actions.append(.receivedTelephoneEvent(event, timestamp: packet.timestamp))
        }
    }

    private mutating func receiveRTCP(
        _ datagram: [UInt8], protection: MediaLegProtection, from source: ICETransportAddress, learning: Bool,
        now: ContinuousClock.Instant, into actions: inout [MediaLegAction]
    ) {
        let plain: [UInt8]
        do { plain = try protection.unprotect(rtcp: datagram) } catch {
            stats.srtcpInbound.authFailures &+= error.kind == .authFailure ? 1 : 0
            stats.srtcpInbound.replays &+= (error.kind == .replayOld || error.kind == .replayFail) ? 1 : 0
            drop(Self.reason(for: error), from: source, "SRTCP \(error)", into: &actions)
            return
        }
        if case .srtp = protection { stats.srtcpInbound.unprotected &+= 1 }
        let compound: RTCPCompoundPacket
        do { compound = try RTCPCompoundPacket(parsing: plain) } catch {
            drop(.malformedRTP, from: source, "RTCP \(error)", into: &actions)
            return
        }
        if learning { transport?.confirm(source, now: now) }
        let ns = nanoseconds(now)
        stats.rtcpReportsReceived &+= 1
        for packet in compound.packets {
            if case .senderReport(let report) = packet {
                senderReports[report.ssrc] = (report.ntpTimestamp.unixNanoseconds, report.rtpTimestamp)
            }
        }
        reporter.receive(compound, now: ns)
        adaptLossProtection(to: compound)
    }

    /// Feeds the peer's view of our stream's loss to the encoder's FEC settings.
    private mutating func adaptLossProtection(to compound: RTCPCompoundPacket) {
        for packet in compound.packets {
            let blocks: [RTCPReportBlock]
            switch packet {
            case .senderReport(let report): blocks = report.reportBlocks
            case .receiverReport(let report): blocks = report.reportBlocks
            default: continue
            }
            for block in blocks where block.ssrc == ssrc {
                if redundancyPolicy.report(fractionLost: Double(block.fractionLost) / 256) {
                    redEncoder?.depth = redundancyPolicy.depth
                }
                guard lossProtection.report(fractionLost: Double(block.fractionLost) / 256) else { continue }
                try? codec?.setLossProtection(
                    inbandFEC: lossProtection.inbandFEC, expectedLossPercent: lossProtection.expectedLossPercent)
            }
        }
    }

    private mutating func sendRTCP(_ report: RTCPCompoundPacket, into actions: inout [MediaLegAction]) {
        guard let protection, let destination = transport?.controlDestination, let bytes = try? report.serialized(),
              let protected = try? protection.protect(rtcp: bytes) else { return }
        actions.append(.send(bytes: protected, from: destination.local, to: destination.remote))
    }

    /// One-way delay of a played frame: our wall clock now minus the peer's wall clock
    /// when it captured the frame, from the RTP/NTP pair of its last sender report.
    private mutating func measureDelay(timestamp: UInt32, clockRate: Int, now: UInt64) {
        guard let ssrc = reporter.receiveStatistics.keys.first, let report = senderReports[ssrc] else { return }
        let offsetUnits = Int64(Int32(bitPattern: timestamp &- report.rtpTimestamp))
        let captured = report.ntpNanoseconds + offsetUnits * 1_000_000_000 / Int64(clockRate)
        let played = wallClockAtEpoch + Int64(clamping: now)
        let delay = Double(played - captured) / 1_000_000
        guard delay > -1000, delay < 60_000 else { return }  // clocks not comparable
        delays.count += 1
        delays.sum += delay
        delays.minimum = min(delays.minimum, delay)
        delays.maximum = max(delays.maximum, delay)
    }

    private mutating func encoderInput(_ frame: AudioFrame) throws(MediaLegError) -> [Int16] {
        var mono = frame.samples
        if frame.channels > 1 {
            mono = stride(from: 0, to: frame.samples.count - frame.channels + 1, by: frame.channels).map { index in
                var sum = 0
                for channel in 0..<frame.channels { sum += Int(frame.samples[index + channel]) }
                return Int16(clamping: sum / frame.channels)
            }
        }
        let rate = codec?.audioRate ?? configuration.audioRate
        if frame.sampleRate != rate {
            if inputResampler?.inputRate != frame.sampleRate {
                do { inputResampler = try Resampler(from: frame.sampleRate, to: rate) } catch {
                    throw MediaLegError(.codec, "cannot resample \(frame.sampleRate) Hz audio: \(error)")
                }
            }
            mono = inputResampler!.process(mono)
        }
        let tick = rate / 50
        if mono.count < tick { mono += [Int16](repeating: 0, count: tick - mono.count) }
        return Array(mono.prefix(tick))
    }

    private static func reason(for error: SRTPError) -> MediaLegDropReason {
        switch error.kind {
        case .authFailure: return .srtpAuthentication
        case .replayOld, .replayFail: return .srtpReplay
        default: return .srtpMalformed
        }
    }

    private mutating func drop(_ reason: MediaLegDropReason, from source: ICETransportAddress, _ detail: String, into actions: inout [MediaLegAction]) {
        stats.dropped[reason, default: 0] &+= 1
        actions.append(.dropped(reason, from: source, detail: detail))
    }

    private mutating func fail(_ error: MediaLegError, into actions: inout [MediaLegAction]) {
        guard state != .failed, state != .closed else { return }
        failure = error
        setState(.failed, into: &actions)
    }

    private mutating func setState(_ new: MediaLegState, into actions: inout [MediaLegAction]) {
        guard new != state else { return }
        state = new
        actions.append(.stateChanged(new))
    }

    private func nanoseconds(_ instant: ContinuousClock.Instant) -> UInt64 {
        let elapsed = epoch.duration(to: instant)
        guard elapsed > .zero else { return 0 }
        return UInt64(elapsed.wholeNanoseconds)
    }

    private func instant(nanoseconds value: UInt64) -> ContinuousClock.Instant {
        epoch + .nanoseconds(Int64(clamping: value))
    }

    private static func iceString(_ count: Int, using random: inout some RandomNumberGenerator) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
        return String((0..<count).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &random)] })
    }
}

extension MediaLegCore {
    /// Does ahead of time the once-per-process set-up that a leg's first connection would
    /// otherwise pay for on its critical path: libsrtp's initialisation and self-tests
    /// (60-180 ms), which ran between the first DTLS handshake and its final flight. Call
    /// it at start-up, off the thread that handles calls; calling it again costs nothing.
    public static func prepareProcess() { SRTPSession.initializeLibrary() }
}

extension ICETransportAddress {
    var isIPv6Address: Bool {
        if case .ipv6 = ip { return true }
        return false
    }
}
