/// One codec both sides agreed on.
public struct NegotiatedCodec: Sendable, Hashable, Encodable {
    /// The payload type on the wire (the offerer's number, RFC 3264 §6.1).
    public var payloadType: UInt8
    public var name: String
    public var clockRate: UInt32
    public var channels: UInt16
    /// fmtp we wrote: how we want to receive.
    public var localParameters: [FormatParameters.Parameter]
    /// fmtp the peer wrote: how it wants to receive (so, how we must send).
    public var remoteParameters: [FormatParameters.Parameter]

    public init(payloadType: UInt8, name: String, clockRate: UInt32, channels: UInt16,
                localParameters: [FormatParameters.Parameter] = [], remoteParameters: [FormatParameters.Parameter] = []) {
        self.payloadType = payloadType
        self.name = name
        self.clockRate = clockRate
        self.channels = channels
        self.localParameters = localParameters
        self.remoteParameters = remoteParameters
    }

    /// The peer's value of fmtp parameter `name` (case-insensitive).
    public func remoteParameter(_ name: String) -> String? {
        let lowered = name.lowercased()
        return remoteParameters.first { $0.name.lowercased() == lowered }?.value
    }
}

/// The outcome of negotiating one audio `m=` section: everything the media and
/// transport layers need to start the call leg.
public struct NegotiatedAudio: Sendable, Hashable, Encodable {
    /// Index of the `m=` section in the description.
    public var mediaIndex: Int
    /// `a=mid`, if the offer had one.
    public var mid: String?
    /// The codec to send: the first common codec in the answer.
    public var codec: NegotiatedCodec
    /// Every agreed codec, `codec` first, telephone events excluded.
    public var codecs: [NegotiatedCodec]
    /// telephone-event at `codec`'s clock rate, if agreed (RFC 4733).
    public var telephoneEvent: NegotiatedCodec?
    /// The answer's `m=` formats, in order.
    public var payloadTypes: [UInt8]
    /// Our direction (from our point of view).
    public var direction: MediaDirection
    public var remoteICEUsernameFragment: String
    public var remoteICEPassword: String
    public var remoteICELite: Bool
    public var remoteICEOptions: [String]
    public var remoteCandidates: [ICECandidate]
    public var remoteEndOfCandidates: Bool
    public var remoteFingerprints: [Fingerprint]
    /// The peer's `a=setup` (after defaults: an offer without one counts as `active`,
    /// an answer without one as `passive`, RFC 4145 §4.1).
    public var remoteSetup: DTLSSetup
    /// Ours; `.active` means we are the DTLS client.
    public var localSetup: DTLSSetup
    /// RTP and RTCP share one port (RFC 5761).
    public var rtcpMux: Bool
    /// Reduced-size RTCP agreed (RFC 5506).
    public var rtcpReducedSize: Bool
    /// Header extensions agreed, with the offerer's ids.
    public var headerExtensions: [ExtensionMap]
    /// RTCP feedback agreed for the chosen payload types.
    public var rtcpFeedback: [RTCPFeedback]
    /// The peer's `a=ptime` / `a=maxptime`, in milliseconds.
    public var remotePacketTime: Double?
    public var remoteMaxPacketTime: Double?
    /// SSRCs the peer announced with `a=ssrc`.
    public var remoteSSRCs: [UInt32]
    /// The peer's default address (`c=`) and port (`m=`), for peers without ICE.
    public var remoteAddress: String?
    public var remotePort: UInt16
    /// The BUNDLE group agreed, when there is one.
    public var bundleGroup: [String]?
    /// RFC 2198 redundant audio (`red/48000/2`) wrapping `codec`, when agreed: its payload
    /// type is the offerer's, its fmtp names `codec`'s payload type (`111/111`).
    public var redundancy: NegotiatedCodec? = nil
    /// SRTP keys agreed through SDES (RFC 4568) for an `RTP/SAVP` section of a plain RTP
    /// endpoint; nil for plain `RTP/AVP` and for DTLS-SRTP, whose keys come from DTLS.
    public var sdes: NegotiatedSDES? = nil

    /// True when we start the DTLS handshake.
    public var isDTLSClient: Bool { localSetup == .active }

    /// Every key always present (null when absent), plus `isDTLSClient`.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(mediaIndex, forKey: .mediaIndex)
        try c.encode(mid, forKey: .mid)
        try c.encode(codec, forKey: .codec)
        try c.encode(codecs, forKey: .codecs)
        try c.encode(telephoneEvent, forKey: .telephoneEvent)
        try c.encode(payloadTypes, forKey: .payloadTypes)
        try c.encode(direction, forKey: .direction)
        try c.encode(remoteICEUsernameFragment, forKey: .remoteICEUsernameFragment)
        try c.encode(remoteICEPassword, forKey: .remoteICEPassword)
        try c.encode(remoteICELite, forKey: .remoteICELite)
        try c.encode(remoteICEOptions, forKey: .remoteICEOptions)
        try c.encode(remoteCandidates, forKey: .remoteCandidates)
        try c.encode(remoteEndOfCandidates, forKey: .remoteEndOfCandidates)
        try c.encode(remoteFingerprints, forKey: .remoteFingerprints)
        try c.encode(remoteSetup, forKey: .remoteSetup)
        try c.encode(localSetup, forKey: .localSetup)
        try c.encode(isDTLSClient, forKey: .isDTLSClient)
        try c.encode(rtcpMux, forKey: .rtcpMux)
        try c.encode(rtcpReducedSize, forKey: .rtcpReducedSize)
        try c.encode(headerExtensions, forKey: .headerExtensions)
        try c.encode(rtcpFeedback, forKey: .rtcpFeedback)
        try c.encode(remotePacketTime, forKey: .remotePacketTime)
        try c.encode(remoteMaxPacketTime, forKey: .remoteMaxPacketTime)
        try c.encode(remoteSSRCs, forKey: .remoteSSRCs)
        try c.encode(remoteAddress, forKey: .remoteAddress)
        try c.encode(remotePort, forKey: .remotePort)
        try c.encode(bundleGroup, forKey: .bundleGroup)
        try c.encode(redundancy, forKey: .redundancy)
        try c.encode(sdes, forKey: .sdes)
    }

    private enum CodingKeys: String, CodingKey {
        case mediaIndex, mid, codec, codecs, telephoneEvent, payloadTypes, direction
        case remoteICEUsernameFragment, remoteICEPassword, remoteICELite, remoteICEOptions, remoteCandidates
        case remoteEndOfCandidates, remoteFingerprints, remoteSetup, localSetup, isDTLSClient, rtcpMux, rtcpReducedSize
        case headerExtensions, rtcpFeedback, remotePacketTime, remoteMaxPacketTime, remoteSSRCs, remoteAddress, remotePort, bundleGroup, redundancy, sdes
    }
}

/// An answer we built, and what it agreed to.
public struct AudioAnswer: Sendable, Hashable, Encodable {
    /// The answer to send back.
    public var description: SessionDescription
    /// One entry per accepted audio section, in `m=` order.
    public var audio: [NegotiatedAudio]
}
