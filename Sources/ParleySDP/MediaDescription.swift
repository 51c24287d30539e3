/// One `m=` section and the lines under it (RFC 8866 §5.14):
/// `m=<media> <port>[/<number of ports>] <proto> <fmt> ...` then `i=`, `c=`, `b=`,
/// `k=` and `a=` lines.
public struct MediaDescription: Sendable, Hashable, SDPAttributeContainer {
    /// `audio`, `video`, `application`, ...
    public var media: String
    /// 0 means rejected or disabled (RFC 3264 §5.1, §6), unless `a=bundle-only`.
    public var port: UInt16
    /// The `/<number of ports>` suffix, when written.
    public var portCount: UInt16?
    /// Transport protocol, e.g. `UDP/TLS/RTP/SAVPF` or `RTP/AVP`.
    public var proto: String
    /// Media formats: RTP payload type numbers as text for RTP protocols.
    public var formats: [String]
    /// `i=`
    public var information: String?
    /// `c=` lines (more than one only for multicast).
    public var connections: [SessionDescription.Connection]
    /// `b=` lines.
    public var bandwidths: [SessionDescription.Bandwidth]
    /// `k=` (obsolete).
    public var encryptionKey: String?
    /// `a=` lines, in order.
    public var attributes: [SDPAttribute]
    /// The 1-based line of the `m=` line this section was parsed from, for error
    /// messages. Not part of equality, hashing or JSON.
    public var line: Int?

    public init(
        media: String,
        port: UInt16,
        portCount: UInt16? = nil,
        proto: String,
        formats: [String],
        information: String? = nil,
        connections: [SessionDescription.Connection] = [],
        bandwidths: [SessionDescription.Bandwidth] = [],
        encryptionKey: String? = nil,
        attributes: [SDPAttribute] = []
    ) {
        self.media = media
        self.port = port
        self.portCount = portCount
        self.proto = proto
        self.formats = formats
        self.information = information
        self.connections = connections
        self.bandwidths = bandwidths
        self.encryptionKey = encryptionKey
        self.attributes = attributes
        self.line = nil
    }

    public static func == (lhs: MediaDescription, rhs: MediaDescription) -> Bool {
        lhs.media == rhs.media && lhs.port == rhs.port && lhs.portCount == rhs.portCount && lhs.proto == rhs.proto
            && lhs.formats == rhs.formats && lhs.information == rhs.information && lhs.connections == rhs.connections
            && lhs.bandwidths == rhs.bandwidths && lhs.encryptionKey == rhs.encryptionKey && lhs.attributes == rhs.attributes
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(media)
        hasher.combine(port)
        hasher.combine(portCount)
        hasher.combine(proto)
        hasher.combine(formats)
        hasher.combine(information)
        hasher.combine(connections)
        hasher.combine(bandwidths)
        hasher.combine(encryptionKey)
        hasher.combine(attributes)
    }

    var lineValue: String {
        var out = media + " " + String(port)
        if let portCount { out += "/" + String(portCount) }
        out += " " + proto
        for format in formats { out += " " + format }
        return out
    }

    /// The formats that are RTP payload type numbers (0-127).
    public var payloadTypes: [UInt8] {
        formats.compactMap { SDPText.decimal(Substring($0), as: UInt8.self) }.filter { $0 <= 127 }
    }

    /// `a=mid` (RFC 5888 §4).
    public var mid: String? { attribute(named: "mid")?.value }
    /// `a=rtcp-mux` (RFC 5761 §5.1.1).
    public var isRTCPMuxed: Bool { hasAttribute("rtcp-mux") }
    /// `a=rtcp-rsize` (RFC 5506 §5).
    public var isRTCPReducedSize: Bool { hasAttribute("rtcp-rsize") }
    /// `a=end-of-candidates` (RFC 8840 §8.2).
    public var hasEndOfCandidates: Bool { hasAttribute("end-of-candidates") }
    /// `a=bundle-only` (RFC 8843 §6).
    public var isBundleOnly: Bool { hasAttribute("bundle-only") }

    /// `a=rtpmap` lines (RFC 8866 §6.6).
    public func rtpMaps() throws(SDPError) -> [RTPMap] { try values(RTPMap.self) }
    /// `a=fmtp` lines (RFC 8866 §6.15).
    public func formatParameters() throws(SDPError) -> [FormatParameters] { try values(FormatParameters.self) }
    /// `a=rtcp-fb` lines (RFC 4585 §4.2).
    public func rtcpFeedback() throws(SDPError) -> [RTCPFeedback] { try values(RTCPFeedback.self) }
    /// `a=ptime` in milliseconds (RFC 8866 §6.4).
    public func packetTime() throws(SDPError) -> PacketTime? { try value(PacketTime.self) }
    /// `a=maxptime` in milliseconds (RFC 8866 §6.5).
    public func maxPacketTime() throws(SDPError) -> MaxPacketTime? { try value(MaxPacketTime.self) }
    /// `a=candidate` lines (RFC 8839 §5.1).
    public func iceCandidates() throws(SDPError) -> [ICECandidate] { try values(ICECandidate.self) }
    /// `a=extmap` lines (RFC 8285 §5).
    public func extensionMaps() throws(SDPError) -> [ExtensionMap] { try values(ExtensionMap.self) }
    /// `a=msid` lines (RFC 8830 §2).
    public func msids() throws(SDPError) -> [MSID] { try values(MSID.self) }
    /// `a=ssrc` lines (RFC 5576 §4.1).
    public func ssrcAttributes() throws(SDPError) -> [SSRCAttribute] { try values(SSRCAttribute.self) }
    /// `a=ssrc-group` lines (RFC 5576 §4.2).
    public func ssrcGroups() throws(SDPError) -> [SSRCGroup] { try values(SSRCGroup.self) }
    /// `a=rtcp` (RFC 3605 §2.1).
    public func rtcp() throws(SDPError) -> RTCPAttribute? { try value(RTCPAttribute.self) }

    /// The direction in force: this section's own direction attribute, else the
    /// session's, else `sendrecv` (RFC 8866 §6.7, RFC 3264 §5.1).
    public func direction(in session: SessionDescription) -> MediaDirection {
        explicitDirection ?? session.explicitDirection ?? .sendrecv
    }
}
