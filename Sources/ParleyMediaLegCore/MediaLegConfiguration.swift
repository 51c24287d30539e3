public import ParleyCrypto
public import ParleyMediaCore
public import ParleySDP

/// How a media leg presents itself in SDP and runs its media.
public struct MediaLegConfiguration: Sendable {
    /// Which ICE agent the leg runs.
    public enum ICEMode: String, Sendable, Hashable, Encodable {
        /// RFC 8445 §2.5 lite: answers checks only; the server side of a device leg.
        case lite
        /// Full agent over the leg's host addresses: checks, nomination, consent; a device.
        case full
    }

    /// How the leg's packets reach the peer (`MediaLegTransport`), chosen here and built
    /// by the core once offer/answer is done.
    public enum Transport: Sendable {
        /// ICE (lite or full) and DTLS-SRTP with this certificate, whose SHA-256 fingerprint
        /// goes into our SDP: a WebRTC leg (`ICEDTLSTransport`).
        case iceDTLS(ICEMode, DTLSCertificate)
        /// Plain RTP to the address the peer's SDP names, with symmetric latching, SRTP
        /// when keys are given (`PlainRTPTransport`): a SIP leg.
        case plainRTP(PlainRTPTransport.Options)
    }

    public var transport: Transport
    /// The ICE agent of an ICE + DTLS-SRTP leg; nil for plain RTP.
    public var iceMode: ICEMode? {
        if case .iceDTLS(let mode, _) = transport { return mode }
        return nil
    }
    /// The DTLS certificate of an ICE + DTLS-SRTP leg; nil for plain RTP.
    public var certificate: DTLSCertificate? {
        if case .iceDTLS(_, let certificate) = transport { return certificate }
        return nil
    }
    /// Codecs in order of preference (Opus, PCMU, PCMA are the ones the leg can run).
    public var codecs: [AudioCodec] = [.opus, .pcmu, .pcma]
    /// SRTP profiles offered in the DTLS `use_srtp` extension, preferred first.
    public var srtpProfiles: [SRTPProtectionProfile] = [.aeadAES128GCM, .aes128CMHMACSHA1_80]
    /// The DTLS role we take when answering an `actpass` offer: `.active` makes us the
    /// DTLS client, `.passive` the server (RFC 8842 §5.3). Offers always say `actpass`.
    public var answerSetup: DTLSSetup = .active
    /// Opus encoder target in bit/s (libopus 1.3 only sends in-band FEC from 32 kbit/s up).
    public var opusBitrate = 32_000
    /// Whether Opus in-band FEC (LBRR) may be sent. When true, FEC starts off and follows
    /// the loss the peer reports in RTCP (`OpusLossProtection`: on from about 1 % smoothed
    /// loss, off again below 0.5 %); false keeps it off whatever the reports say.
    public var opusInbandFEC = true
    /// Offer and accept RFC 2198 redundancy for Opus (`red/48000/2`). When negotiated, each
    /// packet carries 1-2 earlier frames while the peer reports loss (`RedundancyPolicy`),
    /// and RED from the peer is unwrapped, whatever our own reports say.
    public var opusRedundancy = true
    /// Opus discontinuous transmission: near-silent frames are not sent.
    public var opusDTX = false
    /// libopus's computational complexity for this leg's encoder, 0 (cheapest) to 10 (best
    /// quality per bit); a value outside that range fails the negotiation's codec set-up.
    /// A conference room shares one encoder among the listeners of equal settings, so
    /// legs of different complexities do not share a payload.
    public var opusComplexity = 9
    /// The rate of the leg's audio side: what `playout` returns and what the codec encodes
    /// from (`AudioPayloadCodec.audioRate`; one of `AudioPayloadCodec.supportedAudioRates`,
    /// else the negotiation's codec set-up fails). 48 kHz by default; a conference room's
    /// legs run at the room's mixing rate, so a 16 kHz room's Opus is decoded straight to
    /// 16 kHz and encoded from it, with no resampling either way. What goes on the wire
    /// does not depend on it (Opus's RTP clock is 48 kHz whatever it codes).
    public var audioRate = AudioPayloadCodec.interfaceRate
    /// The highest loss rate, in percent, the Opus encoder is told to plan its FEC for.
    /// The rate itself is the peer's reported loss (smoothed); 0 disables FEC.
    public var opusExpectedLossPercent = 20
    /// Jitter buffer settings; the clock rate is set from the negotiated codec.
    public var jitterBuffer = JitterBuffer.Configuration()
    /// The leg fails if its transport (ICE and DTLS) is not up this long after `start`.
    public var connectTimeout: Duration = .seconds(30)
    /// ICE consent (RFC 7675): `disconnected` after this long without consent.
    public var consentDisconnectedAfter: Duration = .seconds(10)
    /// ICE consent: the leg fails after this long without consent.
    public var consentTimeout: Duration = .seconds(30)
    /// DTLS handshake limit.
    public var dtlsHandshakeTimeout: Duration = .seconds(30)
    /// What the leg does with media once its transport is up.
    public var mediaMode: MediaLegMode = .decode
    /// Our RTP SSRC; random when nil.
    public var ssrc: UInt32?
    /// RTCP CNAME; random when nil.
    public var cname: String?
    /// The first RTP sequence number and timestamp we send; random when nil, as RFC 3550
    /// §5.1 asks. Fixed only where a run must be reproducible byte for byte (tests, the
    /// relay benchmark, whose receiver checks each relayed packet's header).
    public var sequenceNumberStart: UInt16?
    public var timestampStart: UInt32?

    /// An ICE + DTLS-SRTP leg (WebRTC).
    public init(iceMode: ICEMode, certificate: DTLSCertificate) {
        transport = .iceDTLS(iceMode, certificate)
    }

    /// A plain RTP leg (SIP): no ICE, no DTLS; RTP/AVP in SDP.
    public init(plainRTP options: PlainRTPTransport.Options) {
        transport = .plainRTP(options)
    }
}
