/// What our side can do and who it is on the wire: the input to building offers and
/// answers. Sans-I/O: the caller brings its ICE credentials, gathered candidates and
/// certificate fingerprint.
public struct LocalAudioCapabilities: Sendable, Hashable {
    /// The stream we send, announced with `a=msid` and `a=ssrc` (RFC 8830, RFC 5576).
    public struct SendStream: Sendable, Hashable {
        public var ssrc: UInt32
        /// RTCP CNAME (RFC 7022).
        public var cname: String
        public var streamID: String
        public var trackID: String

        public init(ssrc: UInt32, cname: String, streamID: String, trackID: String) {
            self.ssrc = ssrc
            self.cname = cname
            self.streamID = streamID
            self.trackID = trackID
        }
    }

    /// How the media is carried, which decides the `m=` protocol and the transport lines.
    public enum Transport: Sendable, Hashable {
        /// WebRTC: ICE (RFC 8839) and DTLS-SRTP (RFC 8842) over UDP, `UDP/TLS/RTP/SAVPF`;
        /// our candidates give the `c=` and `m=` address.
        case iceDTLS
        /// Plain RTP (RFC 3551, `RTP/AVP`) to and from the `c=`/`m=` address, with no ICE
        /// and no DTLS lines: what SIP endpoints and trunks speak. SRTP keyed by SDES
        /// (`RTP/SAVP` with RFC 4568 `a=crypto` lines) is this transport's second profile:
        /// answered whenever offered, offered when `offersSDES` is on.
        case plainRTP(address: String, port: UInt16)
    }

    /// Codecs in order of preference. Answers list every common one in this order.
    public var codecs: [AudioCodec]
    /// Accept RFC 4733 telephone-event at the clock rate of each chosen codec.
    public var telephoneEvents: Bool
    /// Offer RFC 2198 redundancy for Opus (`red/48000/2`, fmtp `111/111`) and accept it
    /// when an offer has it for the Opus payload type we choose.
    public var opusRedundancy: Bool = false
    /// Opus `usedtx` (RFC 7587 §6.1): whether we want the peer to use DTX.
    public var opusDTX: Bool
    /// `a=ice-ufrag` (RFC 8839 §5.4: 4-256 ice-chars).
    public var iceUsernameFragment: String
    /// `a=ice-pwd` (RFC 8839 §5.4: 22-256 ice-chars).
    public var icePassword: String
    /// We are an ICE-lite agent (RFC 8445 §2.5): written as session-level `a=ice-lite`.
    public var iceLite: Bool
    /// `a=ice-options` tokens we write, e.g. `trickle` (none by default).
    public var iceOptions: [String]
    /// Our candidates; the first UDP component-1 one is the default address (c= and
    /// m= port). With none, `0.0.0.0` port 9 is written (RFC 8839 §4.2.1.3 style).
    public var candidates: [ICECandidate]
    /// Write `a=end-of-candidates` (RFC 8840 §8.2): gathering is complete.
    public var endOfCandidates: Bool
    /// Hash of our DTLS certificate.
    public var fingerprint: Fingerprint
    /// Our role when the offer says `actpass`: `.active` (default) or `.passive`.
    public var setupPreference: DTLSSetup
    /// What we want to do with audio; the answer narrows it per RFC 3264 §6.1.
    public var direction: MediaDirection
    /// RTP header extension URIs we understand; answers keep only offered ones.
    public var headerExtensions: [String]
    /// RTCP feedback types we support (`a=rtcp-fb` type names); none by default.
    public var rtcpFeedback: [String]
    /// Accept `a=rtcp-rsize` (RFC 5506) when offered, and offer it.
    public var rtcpReducedSize: Bool
    /// Announce our stream, if set.
    public var sendStream: SendStream?
    /// `o=` session id (RFC 8866 §5.2: a number, random per session).
    public var sessionID: UInt64
    /// `o=` session version; increment for every new offer or answer in a session.
    public var sessionVersion: UInt64
    /// `o=` address.
    public var originAddress: String
    /// ICE + DTLS-SRTP (the default), or plain RTP: the ICE credentials, candidates and
    /// fingerprint are neither written nor checked for a plain RTP endpoint.
    public var transport: Transport = .iceDTLS
    /// A plain RTP endpoint's offers are `RTP/SAVP` with one `a=crypto` line per
    /// `sdesSuites` entry (SDES, RFC 4568), instead of `RTP/AVP`. Off by default: a peer
    /// without SRTP must refuse such an offer. Ignored by a WebRTC endpoint.
    public var offersSDES = false
    /// The SDES suites we run: offered in this order, and accepted in an `RTP/SAVP` offer
    /// (the offer's order decides which). Each must be one `CryptoAttribute.Suite` knows.
    public var sdesSuites: [CryptoAttribute.Suite] = [.aesCM128HMACSHA1_80, .aesCM128HMACSHA1_32, .aeadAES128GCM]
    /// Secret random bytes our `a=crypto` keys are cut from, in order: an offer gives each
    /// line its own key, an answer each accepted SDES section its own. This module draws
    /// nothing itself (sans-I/O): the caller takes them from a cryptographically secure
    /// source, as many as `AudioOfferAnswer.sdesKeyMaterialLengthForOffer` or
    /// `sdesKeyMaterialLength(toAnswer:)` says, fresh for every offer and answer.
    public var sdesKeyMaterial: [UInt8] = []

    public init(
        iceUsernameFragment: String,
        icePassword: String,
        fingerprint: Fingerprint,
        sessionID: UInt64,
        sessionVersion: UInt64 = 2,
        codecs: [AudioCodec] = [.opus, .pcmu, .pcma],
        telephoneEvents: Bool = true,
        opusDTX: Bool = false,
        iceLite: Bool = false,
        iceOptions: [String] = [],
        candidates: [ICECandidate] = [],
        endOfCandidates: Bool = true,
        setupPreference: DTLSSetup = .active,
        direction: MediaDirection = .sendrecv,
        headerExtensions: [String] = [ExtensionMap.audioLevelURI],
        rtcpFeedback: [String] = [],
        rtcpReducedSize: Bool = true,
        sendStream: SendStream? = nil,
        originAddress: String = "127.0.0.1"
    ) {
        self.iceUsernameFragment = iceUsernameFragment
        self.icePassword = icePassword
        self.fingerprint = fingerprint
        self.sessionID = sessionID
        self.sessionVersion = sessionVersion
        self.codecs = codecs
        self.telephoneEvents = telephoneEvents
        self.opusDTX = opusDTX
        self.iceLite = iceLite
        self.iceOptions = iceOptions
        self.candidates = candidates
        self.endOfCandidates = endOfCandidates
        self.setupPreference = setupPreference
        self.direction = direction
        self.headerExtensions = headerExtensions
        self.rtcpFeedback = rtcpFeedback
        self.rtcpReducedSize = rtcpReducedSize
        self.sendStream = sendStream
        self.originAddress = originAddress
    }

    /// The fmtp parameters we ask for when receiving `codec` (RFC 7587 §7 for Opus:
    /// 10 ms minimum packets, in-band FEC, DTX as configured, mono).
    func formatParameters(for codec: AudioCodec) -> [FormatParameters.Parameter] {
        if codec.name.lowercased() == "opus" {
            return [
                .init(name: "minptime", value: "10"),
                .init(name: "useinbandfec", value: "1"),
                .init(name: "usedtx", value: opusDTX ? "1" : "0"),
                .init(name: "stereo", value: "0"),
            ]
        }
        if codec.name.lowercased() == "telephone-event" {
            return [.init(name: "0-15")]  // RFC 4733 §7.1.1: the DTMF events
        }
        return []
    }

    /// The default candidate: first UDP component-1 candidate, else any component-1.
    var defaultCandidate: ICECandidate? {
        candidates.first { $0.component == 1 && $0.isUDP } ?? candidates.first { $0.component == 1 }
    }

    /// Throws when these capabilities cannot describe a valid endpoint.
    func validate() throws(SDPError) {
        if case .plainRTP(let address, let port) = transport {
            guard !codecs.isEmpty else {
                throw SDPError(.invalidCapabilities, line: nil, "no local codecs")
            }
            guard !address.isEmpty, port != 0 else {
                throw SDPError(.invalidCapabilities, line: nil, "a plain RTP endpoint needs an address and a port, not \(address):\(port)")
            }
            if let unknown = sdesSuites.first(where: { !$0.isKnown }) {
                throw SDPError(.invalidCapabilities, line: nil, "SDES suite \(unknown.name) is not one whose key length is known")
            }
            guard !offersSDES || !sdesSuites.isEmpty else {
                throw SDPError(.invalidCapabilities, line: nil, "offering SDES needs at least one suite")
            }
            return
        }
        let ufrag = iceUsernameFragment.utf8
        guard (4...256).contains(ufrag.count), ufrag.allSatisfy(ICECandidate.isICEChar) else {
            throw SDPError(.invalidCapabilities, line: nil, "local ICE username fragment must be 4-256 ice-chars (RFC 8839 §5.4)")
        }
        let pwd = icePassword.utf8
        guard (22...256).contains(pwd.count), pwd.allSatisfy(ICECandidate.isICEChar) else {
            throw SDPError(.invalidCapabilities, line: nil, "local ICE password must be 22-256 ice-chars (RFC 8839 §5.4)")
        }
        guard !fingerprint.bytes.isEmpty, SDPText.isToken(Substring(fingerprint.algorithm)) else {
            throw SDPError(.invalidCapabilities, line: nil, "local fingerprint is empty")
        }
        guard !codecs.isEmpty else {
            throw SDPError(.invalidCapabilities, line: nil, "no local codecs")
        }
        guard setupPreference == .active || setupPreference == .passive else {
            throw SDPError(.invalidCapabilities, line: nil, "setup preference must be active or passive, not \(setupPreference.rawValue)")
        }
    }
}
