internal import ParleyWireCore

/// RTCP sender report, packet type 200 (RFC 3550 §6.4.1).
///
/// ```
/// |V=2|P|    RC   |   PT=SR=200   |             length            |
/// |                         SSRC of sender                        |
/// |              NTP timestamp, most significant word             |
/// |             NTP timestamp, least significant word             |
/// |                         RTP timestamp                         |
/// |                     sender's packet count                     |
/// |                      sender's octet count                     |
/// |                 report blocks (RC x 24 bytes)                 |
/// |                  profile-specific extensions                  |
/// ```
public struct RTCPSenderReport: Sendable, Hashable, Encodable {
    public static let packetType: UInt8 = 200

    public var ssrc: UInt32
    public var ntpTimestamp: NTPTimestamp
    /// The RTP timestamp corresponding to `ntpTimestamp`.
    public var rtpTimestamp: UInt32
    public var packetCount: UInt32
    public var octetCount: UInt32
    /// At most 31.
    public var reportBlocks: [RTCPReportBlock]
    /// Profile-specific extension words after the report blocks, kept raw.
    public var profileExtension: [UInt8]

    public init(ssrc: UInt32, ntpTimestamp: NTPTimestamp, rtpTimestamp: UInt32, packetCount: UInt32, octetCount: UInt32,
                reportBlocks: [RTCPReportBlock] = [], profileExtension: [UInt8] = []) {
        self.ssrc = ssrc
        self.ntpTimestamp = ntpTimestamp
        self.rtpTimestamp = rtpTimestamp
        self.packetCount = packetCount
        self.octetCount = octetCount
        self.reportBlocks = reportBlocks
        self.profileExtension = profileExtension
    }

    static func parse(count: UInt8, _ reader: inout SliceReader) throws(RTPError) -> RTCPSenderReport {
        guard reader.remaining >= 24 else {
            throw RTPError(.invalidLength, offset: reader.offset, "SR", "sender info needs 24 bytes, length leaves \(reader.remaining)")
        }
        let ssrc = try reader.uint32("SR")
        let ntp = NTPTimestamp(seconds: try reader.uint32("SR"), fraction: try reader.uint32("SR"))
        let rtp = try reader.uint32("SR")
        let packets = try reader.uint32("SR")
        let octets = try reader.uint32("SR")
        let (blocks, rest) = try parseReportBlocks(count: Int(count), &reader, packet: "SR")
        return RTCPSenderReport(ssrc: ssrc, ntpTimestamp: ntp, rtpTimestamp: rtp, packetCount: packets, octetCount: octets,
                                reportBlocks: blocks, profileExtension: rest)
    }

    func serializeBody(into output: inout [UInt8]) throws(RTPError) -> UInt8 {
        try checkReportCount(reportBlocks, extensionBytes: profileExtension.count, offset: output.count, packet: "SR")
        output.appendUInt32(ssrc)
        output.appendUInt64(ntpTimestamp.rawValue)
        output.appendUInt32(rtpTimestamp)
        output.appendUInt32(packetCount)
        output.appendUInt32(octetCount)
        for block in reportBlocks { try block.serialize(into: &output) }
        output.append(contentsOf: profileExtension)
        return UInt8(reportBlocks.count)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: RTCPCodingKeys.self)
        try c.encode("senderReport", forKey: .type)
        try c.encode(Self.packetType, forKey: .packetType)
        try c.encode(ssrc, forKey: .ssrc)
        try c.encode(ntpTimestamp, forKey: .ntpTimestamp)
        try c.encode(rtpTimestamp, forKey: .rtpTimestamp)
        try c.encode(packetCount, forKey: .packetCount)
        try c.encode(octetCount, forKey: .octetCount)
        try c.encode(reportBlocks, forKey: .reportBlocks)
        try c.encode(Hex.encode(profileExtension), forKey: .profileExtension)
    }
}

/// RTCP receiver report, packet type 201 (RFC 3550 §6.4.2): the SR without sender info.
public struct RTCPReceiverReport: Sendable, Hashable, Encodable {
    public static let packetType: UInt8 = 201

    /// SSRC of the packet's sender.
    public var ssrc: UInt32
    /// At most 31.
    public var reportBlocks: [RTCPReportBlock]
    /// Profile-specific extension words after the report blocks, kept raw.
    public var profileExtension: [UInt8]

    public init(ssrc: UInt32, reportBlocks: [RTCPReportBlock] = [], profileExtension: [UInt8] = []) {
        self.ssrc = ssrc
        self.reportBlocks = reportBlocks
        self.profileExtension = profileExtension
    }

    static func parse(count: UInt8, _ reader: inout SliceReader) throws(RTPError) -> RTCPReceiverReport {
        guard reader.remaining >= 4 else {
            throw RTPError(.invalidLength, offset: reader.offset, "RR", "sender SSRC needs 4 bytes, length leaves \(reader.remaining)")
        }
        let ssrc = try reader.uint32("RR")
        let (blocks, rest) = try parseReportBlocks(count: Int(count), &reader, packet: "RR")
        return RTCPReceiverReport(ssrc: ssrc, reportBlocks: blocks, profileExtension: rest)
    }

    func serializeBody(into output: inout [UInt8]) throws(RTPError) -> UInt8 {
        try checkReportCount(reportBlocks, extensionBytes: profileExtension.count, offset: output.count, packet: "RR")
        output.appendUInt32(ssrc)
        for block in reportBlocks { try block.serialize(into: &output) }
        output.append(contentsOf: profileExtension)
        return UInt8(reportBlocks.count)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: RTCPCodingKeys.self)
        try c.encode("receiverReport", forKey: .type)
        try c.encode(Self.packetType, forKey: .packetType)
        try c.encode(ssrc, forKey: .ssrc)
        try c.encode(reportBlocks, forKey: .reportBlocks)
        try c.encode(Hex.encode(profileExtension), forKey: .profileExtension)
    }
}

/// JSON keys shared by the RTCP packet types.
enum RTCPCodingKeys: String, CodingKey {
    case type, packetType, ssrc, ntpTimestamp, rtpTimestamp, packetCount, octetCount, reportBlocks, profileExtension
    case chunks, items, text, value, prefix, name, subtype, data, ssrcs, reason, reasonText
    case format, senderSSRC, mediaSSRC, feedbackControlInformation, decoded, count, body
    case packets, padding, genericNACK, pictureLossIndication, kind, lostSequenceNumbers, pid, blp, typeCode, nameText
}
