public import ParleyICECore
public import ParleySDP
public import ParleySRTP

/// A SIP leg's transport: plain RTP and RTCP (RFC 3550) to the address the peer's SDP names
/// (`c=` and the `m=` port; RTCP on the same port with rtcp-mux, RFC 5761, else on the next
/// one), with no ICE and no DTLS.
///
/// Symmetric latching (RFC 4961's symmetric RTP, as SIP media relays do it for NAT): for a
/// short window after `start` (the answer is applied), the first genuine RTP packet decides
/// where the peer is. From the SDP's address it confirms it; from another one (the peer sits
/// behind a NAT that rewrote its source) media moves there. Either way the leg latches once
/// and never again: for the rest of the call RTP from any other source is dropped and
/// counted (`.foreignSource`), so a packet injected from elsewhere can neither be played
/// nor move the call's media. A packet must prove genuine before it latches (SRTP
/// authenticated, or valid RTP of a negotiated payload type): garbage cannot steer the leg.
/// When the window passes with no packet, the SDP's address stands.
///
/// Protection: plain RTP, or SRTP with keys the signalling carried: SDES (RFC 4568 `a=crypto`
/// in an `RTP/SAVP` section), which `MediaLegCore` turns into `Keys` (`Keys(negotiated:)`)
/// when offer/answer agreed them, or `Options.keys` given up front.
public struct PlainRTPTransport: MediaLegTransport {
    /// SRTP master keys and salts for both ways, as SDES carries them (RFC 4568 §6.1).
    public struct Keys: Sendable, Hashable {
        public var profile: SRTPProfile
        /// What we protect with: our `a=crypto` key (master key, then salt).
        public var localKeyMaterial: [UInt8]
        /// What the peer protects with: its `a=crypto` key.
        public var remoteKeyMaterial: [UInt8]

        public init(profile: SRTPProfile, localKeyMaterial: [UInt8], remoteKeyMaterial: [UInt8]) {
            self.profile = profile
            self.localKeyMaterial = localKeyMaterial
            self.remoteKeyMaterial = remoteKeyMaterial
        }

        /// The keys SDES agreed: ours protects what we send, the peer's unprotects what we
        /// receive.
        /// - Throws: `MediaLegError` `.srtp` for a suite no `SRTPProfile` runs.
        public init(negotiated sdes: NegotiatedSDES) throws(MediaLegError) {
            guard let profile = Self.profile(for: sdes.suite) else {
                throw MediaLegError(.srtp, "SDES agreed \(sdes.suite.name), which no SRTP profile here runs")
            }
            self.init(profile: profile, localKeyMaterial: sdes.localKeyMaterial, remoteKeyMaterial: sdes.remoteKeyMaterial)
        }

        /// The SRTP profile of an SDES crypto-suite (RFC 4568 §6.2, RFC 7714 §14.1), if we run it.
        public static func profile(for suite: CryptoAttribute.Suite) -> SRTPProfile? {
            switch suite {
            case .aesCM128HMACSHA1_80: .aes128CmHmacSha1_80
            case .aesCM128HMACSHA1_32: .aes128CmHmacSha1_32
            case .aeadAES128GCM: .aeadAes128Gcm
            default: nil
            }
        }
    }

    /// The SDES suites this transport runs, in the order a plain RTP leg offers them.
    public static let sdesSuites: [CryptoAttribute.Suite] = [.aesCM128HMACSHA1_80, .aesCM128HMACSHA1_32, .aeadAES128GCM]

    /// How a plain RTP leg latches and protects.
    public struct Options: Sendable, Hashable {
        /// How long after `start` the first genuine packet may latch the leg onto its source.
        public var latchingWindow: Duration = .seconds(5)
        /// SRTP keys given up front; nil for RTP in the clear. Keys SDES agrees in offer/answer
        /// take their place.
        public var keys: Keys?
        /// Offer SRTP keyed by SDES (`RTP/SAVP` with `a=crypto`, RFC 4568) rather than plain
        /// `RTP/AVP`. An `RTP/SAVP` offer is answered with SDES either way.
        public var offersSDES: Bool

        public init(latchingWindow: Duration = .seconds(5), keys: Keys? = nil, offersSDES: Bool = false) {
            self.latchingWindow = latchingWindow
            self.keys = keys
            self.offersSDES = offersSDES
        }
    }

    /// Where a plain RTP leg sends and what it latched to, for statistics.
    public struct Statistics: Sendable, Hashable, Encodable {
        /// The address the peer's SDP names (`c=`, `m=` port).
        public var signalledAddress: ICETransportAddress
        /// Where media goes now: the signalled address, or the source the leg latched to.
        public var mediaAddress: ICETransportAddress
        /// The leg latched (a first genuine packet came, from `mediaAddress`).
        public var latched: Bool
        /// RTCP shares the RTP port (RFC 5761).
        public var rtcpMux: Bool
    }

    private enum Latch: Equatable {
        /// Not started: nothing is taken yet.
        case idle
        /// The first genuine packet before `until` latches.
        case learning(until: ContinuousClock.Instant)
        /// Media comes from and goes to `address` for the rest of the call; `byPacket` says
        /// whether a packet latched it or the window passed.
        case fixed(ICETransportAddress, byPacket: Bool)
    }

    public let options: Options
    private let local: ICETransportAddress
    private let signalled: ICETransportAddress
    private let rtcpMux: Bool
    private var latch = Latch.idle
    private var finished = false

    /// Builds the transport for a negotiated audio section.
    /// - Parameter local: our address as our SDP announced it (the socket's port).
    /// - Throws: `MediaLegError` `.negotiation` when the SDP names no usable address (a
    ///   host name, `0.0.0.0` or port 0).
    public init(negotiated audio: NegotiatedAudio, local: ICETransportAddress, options: Options) throws(MediaLegError) {
        guard let host = audio.remoteAddress, audio.remotePort != 0,
              let remote = ICETransportAddress(ip: host, port: audio.remotePort), !Self.isUnspecified(remote) else {
            throw MediaLegError(.negotiation, "the peer's SDP names no address to send RTP to (c=\(audio.remoteAddress ?? "none"), port \(audio.remotePort))")
        }
        self.local = local
        self.options = options
        signalled = remote
        rtcpMux = audio.rtcpMux
    }

    private static func isUnspecified(_ address: ICETransportAddress) -> Bool {
        address.ip.bytes.allSatisfy { $0 == 0 }
    }

    // MARK: MediaLegTransport

    /// Up at once: there is no handshake. The latching window opens.
    public mutating func start(now: ContinuousClock.Instant) -> [MediaLegTransportEvent] {
        guard latch == .idle, !finished else { return [] }
        let protection: MediaLegProtection
        if let keys = options.keys {
            do {
                protection = try .srtp(profile: keys.profile, localKeyMaterial: keys.localKeyMaterial, remoteKeyMaterial: keys.remoteKeyMaterial)
            } catch {
                finished = true
                return [.failed(MediaLegError(.srtp, "cannot create SRTP contexts from the signalled keys: \(error)"))]
            }
        } else {
            protection = .none
        }
        latch = .learning(until: now + options.latchingWindow)
        return [.protected(protection), .connected]
    }

    public var nextDeadline: ContinuousClock.Instant? {
        if case .learning(let until) = latch { return until }
        return nil
    }

    /// Closes the latching window when it passes: the signalled address stands.
    public mutating func handleTimeout(now: ContinuousClock.Instant) -> [MediaLegTransportEvent] {
        if case .learning(let until) = latch, now >= until { latch = .fixed(signalled, byPacket: false) }
        return []
    }

    /// No ICE and no DTLS here: STUN and DTLS are dropped.
    public mutating func receiveNonMedia(
        _ datagram: [UInt8], from source: ICETransportAddress, on local: ICETransportAddress, now: ContinuousClock.Instant
    ) -> [MediaLegTransportEvent] {
        switch datagram.first {
        case (0...3)?: [.dropped(.stun, from: source, detail: "STUN on a plain RTP leg (no ICE)")]
        case (20...63)?: [.dropped(.dtls, from: source, detail: "DTLS on a plain RTP leg (no DTLS)")]
        default: [.dropped(.unknownKind, from: source, detail: "first byte \(datagram.first ?? 0) is not RTP or RTCP")]
        }
    }

    public mutating func admit(from source: ICETransportAddress, isRTCP: Bool, now: ContinuousClock.Instant) -> MediaSourceAdmission {
        if case .learning(let until) = latch, now >= until { latch = .fixed(signalled, byPacket: false) }
        switch latch {
        case .idle:
            return .refuse(.beforeKeys, detail: "RTP before the plain RTP leg started")
        case .learning:
            if isRTCP {
                // RTCP never latches: without rtcp-mux it comes from another port than RTP.
                return source == signalled || source == controlAddress(for: signalled) ? .accept
                    : .refuse(.foreignSource, detail: "RTCP from \(source) before the leg latched (the SDP names \(signalled))")
            }
            return .learn
        case .fixed(let address, _):
            if source == address || (isRTCP && source == controlAddress(for: address)) { return .accept }
            return .refuse(.foreignSource, detail: "\(isRTCP ? "RTCP" : "RTP") from \(source); the leg takes media from \(address) only")
        }
    }

    /// Latches onto `source`, once: later calls change nothing.
    public mutating func confirm(_ source: ICETransportAddress, now: ContinuousClock.Instant) {
        guard case .learning(let until) = latch, now < until else { return }
        latch = .fixed(source, byPacket: true)
    }

    public var mediaDestination: (local: ICETransportAddress, remote: ICETransportAddress)? {
        guard !finished else { return nil }
        return (local, remoteAddress)
    }

    public var controlDestination: (local: ICETransportAddress, remote: ICETransportAddress)? {
        guard !finished else { return nil }
        return (local, controlAddress(for: remoteAddress))
    }

    public mutating func close(now: ContinuousClock.Instant) -> [MediaLegTransportEvent] {
        finished = true
        return []
    }

    public var progressDescription: String { "plain RTP to \(remoteAddress)" }

    public func record(into statistics: inout MediaLegStatistics) {
        var latched = false
        if case .fixed(_, let byPacket) = latch { latched = byPacket }
        statistics.plainRTP = Statistics(signalledAddress: signalled, mediaAddress: remoteAddress, latched: latched, rtcpMux: rtcpMux)
    }

    // MARK: Addresses

    /// Where RTP goes: the latched source, else the signalled address.
    public var remoteAddress: ICETransportAddress {
        if case .fixed(let address, _) = latch { return address }
        return signalled
    }

    /// RTCP's address for an RTP address: the same with rtcp-mux, else the next port
    /// (RFC 3550 §11; an `a=rtcp` line, RFC 3605, is not read yet).
    private func controlAddress(for address: ICETransportAddress) -> ICETransportAddress {
        rtcpMux ? address : ICETransportAddress(ip: address.ip, port: address.port &+ 1)
    }
}
