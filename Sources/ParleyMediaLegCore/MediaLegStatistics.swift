public import ParleyICECore
public import ParleyMediaCore
public import ParleySRTP

/// What a leg has done so far, for logs, call records and tests.
public struct MediaLegStatistics: Sendable, Hashable, Encodable {
    public var state: MediaLegState = .new
    /// Set once the leg failed or was closed by the peer.
    public var failure: String?
    public var iceMode: MediaLegConfiguration.ICEMode = .lite
    public var iceState: ICEConnectionState = .new
    public var selectedPair: ICECandidatePair?
    /// `client` or `server`.
    public var dtlsRole: String?
    /// The negotiated SRTP profile (RFC 5764 name).
    public var srtpProfile: String?
    /// The codec in use, e.g. `opus/48000/2`.
    public var codec: String?
    /// Sent and received RTP figures and what the peer's RTCP reports said.
    public var rtp = LegStatistics()
    /// Inbound SRTP: packets that authenticated, and those dropped for a bad tag or replay.
    public var srtpInbound = SRTPCounters()
    public var srtcpInbound = SRTPCounters()
    public var jitterBuffer = JitterBufferStatistics()
    /// Frames handed to `sendAudio` and sent / skipped (not connected, or DTX silence).
    public var framesSent: UInt64 = 0
    public var framesNotSent: UInt64 = 0
    /// 20 ms ticks played: from packets, concealed (loss, stretch, an underrun inside a talk
    /// spurt; comfort noise once concealment fades), or silence (nothing due between spurts).
    public var framesPlayedFromPackets: UInt64 = 0
    public var framesConcealed: UInt64 = 0
    public var framesSilent: UInt64 = 0
    /// RFC 2198: packets rebuilt from redundant blocks because the packet itself had not
    /// arrived (each counted once; blocks for packets that did arrive are ignored).
    public var redRecovered: UInt64 = 0
    /// Packets sent wrapped in RED (with at least one earlier frame's slot).
    public var redPacketsSent: UInt64 = 0
    /// What concealment played (FEC-recovered frames, underrun concealment, comfort noise).
    public var playout = AudioPlayout.Statistics()
    /// Capture-to-playout delay of received audio, measured from the peer's RTCP sender
    /// reports (its wall clock for an RTP timestamp) against ours at playout. Meaningful
    /// when both clocks agree (same host, or NTP-synchronised).
    public var endToEndDelayMilliseconds: DelaySummary?
    /// Datagrams dropped, by reason.
    public var dropped: [MediaLegDropReason: UInt64] = [:]
    public var rtcpReportsSent: UInt64 = 0
    public var rtcpReportsReceived: UInt64 = 0
    /// A plain RTP leg's addresses and latching; nil on an ICE + DTLS-SRTP leg (whose
    /// figures are `iceMode` to `srtpProfile`).
    public var plainRTP: PlainRTPTransport.Statistics?

    /// Statistics of a leg that has done nothing yet (what a leg starts from; tests).
    public init() {}

    /// Minimum, mean and maximum of a delay series, in milliseconds.
    public struct DelaySummary: Sendable, Hashable, Encodable {
        public var count: Int
        public var minimum: Double
        public var mean: Double
        public var maximum: Double
    }

    private enum CodingKeys: String, CodingKey {
        case state, failure, iceMode, iceState, selectedPair, dtlsRole, srtpProfile, codec, rtp, srtpInbound, srtcpInbound
        case jitterBuffer, framesSent, framesNotSent, framesPlayedFromPackets, framesConcealed, framesSilent, redRecovered, redPacketsSent, playout
        case endToEndDelayMilliseconds, dropped, rtcpReportsSent, rtcpReportsReceived, plainRTP
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(state, forKey: .state)
        try container.encodeIfPresent(failure, forKey: .failure)
        try container.encode(iceMode, forKey: .iceMode)
        try container.encode(iceState, forKey: .iceState)
        try container.encodeIfPresent(selectedPair, forKey: .selectedPair)
        try container.encodeIfPresent(dtlsRole, forKey: .dtlsRole)
        try container.encodeIfPresent(srtpProfile, forKey: .srtpProfile)
        try container.encodeIfPresent(codec, forKey: .codec)
        try container.encode(rtp, forKey: .rtp)
        try container.encode(srtpInbound, forKey: .srtpInbound)
        try container.encode(srtcpInbound, forKey: .srtcpInbound)
        try container.encode(jitterBuffer, forKey: .jitterBuffer)
        try container.encode(framesSent, forKey: .framesSent)
        try container.encode(framesNotSent, forKey: .framesNotSent)
        try container.encode(framesPlayedFromPackets, forKey: .framesPlayedFromPackets)
        try container.encode(framesConcealed, forKey: .framesConcealed)
        try container.encode(framesSilent, forKey: .framesSilent)
        try container.encode(redRecovered, forKey: .redRecovered)
        try container.encode(redPacketsSent, forKey: .redPacketsSent)
        try container.encode(playout, forKey: .playout)
        try container.encodeIfPresent(endToEndDelayMilliseconds, forKey: .endToEndDelayMilliseconds)
        try container.encode(Dictionary(uniqueKeysWithValues: dropped.map { ($0.key.rawValue, $0.value) }), forKey: .dropped)
        try container.encode(rtcpReportsSent, forKey: .rtcpReportsSent)
        try container.encode(rtcpReportsReceived, forKey: .rtcpReportsReceived)
        try container.encodeIfPresent(plainRTP, forKey: .plainRTP)
    }
}
