internal import ParleyWireCore

/// RTCP feedback message (RFC 4585 §6.1): transport-layer (RTPFB, packet type 205) or
/// payload-specific (PSFB, 206).
///
/// ```
///  0                   1                   2                   3
///  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |V=2|P|   FMT   |       PT      |          length               |
/// |                  SSRC of packet sender                        |
/// |                  SSRC of media source                         |
/// :            Feedback Control Information (FCI)                 :
/// ```
///
/// The FCI is kept raw (so TWCC, REMB and others pass through untouched); `message`
/// decodes the few formats Parley acts on.
public struct RTCPFeedback: Sendable, Hashable, Encodable {
    /// Transport-layer (205) or payload-specific (206).
    public enum Layer: Sendable, Hashable {
        case transport
        case payloadSpecific

        public var packetType: UInt8 { self == .transport ? 205 : 206 }
    }

    /// One Generic NACK FCI entry (RFC 4585 §6.2.1): a lost packet ID and a bitmask of
    /// the 16 following sequence numbers also lost.
    public struct GenericNACK: Sendable, Hashable, Encodable {
        public var packetID: UInt16
        public var bitmaskOfFollowingLost: UInt16

        public init(packetID: UInt16, bitmaskOfFollowingLost: UInt16) {
            self.packetID = packetID
            self.bitmaskOfFollowingLost = bitmaskOfFollowingLost
        }

        /// The sequence numbers this entry reports lost, in order (wrapping past 65535).
        public var lostSequenceNumbers: [UInt16] {
            var result = [packetID]
            for bit in 0..<16 where bitmaskOfFollowingLost & (1 << bit) != 0 {
                result.append(packetID &+ UInt16(bit + 1))
            }
            return result
        }

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: RTCPCodingKeys.self)
            try c.encode(packetID, forKey: .pid)
            try c.encode(bitmaskOfFollowingLost, forKey: .blp)
            try c.encode(lostSequenceNumbers, forKey: .lostSequenceNumbers)
        }
    }

    /// One Full Intra Request FCI entry (RFC 5104 §4.3.1).
    public struct FullIntraRequest: Sendable, Hashable, Encodable {
        public var ssrc: UInt32
        public var sequenceNumber: UInt8

        public init(ssrc: UInt32, sequenceNumber: UInt8) {
            self.ssrc = ssrc
            self.sequenceNumber = sequenceNumber
        }
    }

    /// The decoded forms of well-known formats.
    public enum Message: Sendable, Hashable {
        /// RTPFB FMT 1 (RFC 4585 §6.2.1).
        case genericNACK([GenericNACK])
        /// PSFB FMT 1 with no FCI (RFC 4585 §6.3.1).
        case pictureLossIndication
        /// PSFB FMT 4 (RFC 5104 §4.3.1), entries whose reserved bits are kept in the raw FCI.
        case fullIntraRequest([FullIntraRequest])
    }

    public var layer: Layer
    /// The feedback message type, 0-31, in the header's count field.
    public var format: UInt8
    public var senderSSRC: UInt32
    public var mediaSSRC: UInt32
    /// Feedback control information: whole 32-bit words.
    public var feedbackControlInformation: [UInt8]

    public init(layer: Layer, format: UInt8, senderSSRC: UInt32, mediaSSRC: UInt32, feedbackControlInformation: [UInt8] = []) {
        self.layer = layer
        self.format = format
        self.senderSSRC = senderSSRC
        self.mediaSSRC = mediaSSRC
        self.feedbackControlInformation = feedbackControlInformation
    }

    /// A Generic NACK for `lost` sequence numbers, given in sending order; neighbours
    /// within 16 of an entry's packet ID share its bitmask.
    public static func genericNACK(senderSSRC: UInt32, mediaSSRC: UInt32, lost: [UInt16]) -> RTCPFeedback {
        var entries: [GenericNACK] = []
        for sequence in lost {
            if let last = entries.last {
                let distance = sequence &- last.packetID
                if (1...16).contains(distance) {
                    entries[entries.count - 1].bitmaskOfFollowingLost |= 1 << (distance - 1)
                    continue
                }
                if distance == 0 { continue }
            }
            entries.append(GenericNACK(packetID: sequence, bitmaskOfFollowingLost: 0))
        }
        var fci: [UInt8] = []
        for entry in entries {
            fci.appendUInt16(entry.packetID)
            fci.appendUInt16(entry.bitmaskOfFollowingLost)
        }
        return RTCPFeedback(layer: .transport, format: 1, senderSSRC: senderSSRC, mediaSSRC: mediaSSRC, feedbackControlInformation: fci)
    }

    /// A Picture Loss Indication (RFC 4585 §6.3.1).
    public static func pictureLossIndication(senderSSRC: UInt32, mediaSSRC: UInt32) -> RTCPFeedback {
        RTCPFeedback(layer: .payloadSpecific, format: 1, senderSSRC: senderSSRC, mediaSSRC: mediaSSRC)
    }

    /// The decoded message for Generic NACK, PLI and FIR; nil for other formats or an
    /// FCI that does not fit the format.
    public var message: Message? {
        let fci = feedbackControlInformation
        switch (layer, format) {
        case (.transport, 1):
            guard !fci.isEmpty, fci.count % 4 == 0 else { return nil }
            var entries: [GenericNACK] = []
            entries.reserveCapacity(fci.count / 4)
            for i in stride(from: 0, to: fci.count, by: 4) {
                entries.append(GenericNACK(packetID: UInt16(fci[i]) << 8 | UInt16(fci[i + 1]),
                                           bitmaskOfFollowingLost: UInt16(fci[i + 2]) << 8 | UInt16(fci[i + 3])))
            }
            return .genericNACK(entries)
        case (.payloadSpecific, 1):
            return fci.isEmpty ? .pictureLossIndication : nil
        case (.payloadSpecific, 4):
            guard !fci.isEmpty, fci.count % 8 == 0 else { return nil }
            var entries: [FullIntraRequest] = []
            for i in stride(from: 0, to: fci.count, by: 8) {
                let ssrc = UInt32(fci[i]) << 24 | UInt32(fci[i + 1]) << 16 | UInt32(fci[i + 2]) << 8 | UInt32(fci[i + 3])
                entries.append(FullIntraRequest(ssrc: ssrc, sequenceNumber: fci[i + 4]))
            }
            return .fullIntraRequest(entries)
        default:
            return nil
        }
    }

    static func parse(layer: Layer, format: UInt8, _ reader: inout SliceReader) throws(RTPError) -> RTCPFeedback {
        let name = layer == .transport ? "RTPFB" : "PSFB"
        guard reader.remaining >= 8 else {
            throw RTPError(.invalidLength, offset: reader.offset, name, "sender and media SSRC need 8 bytes, length leaves \(reader.remaining)")
        }
        let sender = try reader.uint32(name)
        let media = try reader.uint32(name)
        return RTCPFeedback(layer: layer, format: format, senderSSRC: sender, mediaSSRC: media, feedbackControlInformation: reader.rest())
    }

    func serializeBody(into output: inout [UInt8]) throws(RTPError) -> UInt8 {
        guard format <= 31, feedbackControlInformation.count % 4 == 0 else {
            throw RTPError(.invalidValue, offset: output.count, layer == .transport ? "RTPFB" : "PSFB",
                           "needs FMT 0-31 (is \(format)) and whole-word FCI (is \(feedbackControlInformation.count) bytes)")
        }
        output.appendUInt32(senderSSRC)
        output.appendUInt32(mediaSSRC)
        output.append(contentsOf: feedbackControlInformation)
        return format
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: RTCPCodingKeys.self)
        try c.encode(layer == .transport ? "transportFeedback" : "payloadFeedback", forKey: .type)
        try c.encode(layer.packetType, forKey: .packetType)
        try c.encode(format, forKey: .format)
        try c.encode(senderSSRC, forKey: .senderSSRC)
        try c.encode(mediaSSRC, forKey: .mediaSSRC)
        try c.encode(Hex.encode(feedbackControlInformation), forKey: .feedbackControlInformation)
        try c.encode(message, forKey: .decoded)
    }
}

extension RTCPFeedback.Message: Encodable {
    /// `{"kind": "genericNACK", "entries": [...]}`, `{"kind": "pictureLossIndication"}`,
    /// `{"kind": "fullIntraRequest", "entries": [...]}`.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: MessageKeys.self)
        switch self {
        case .genericNACK(let entries):
            try c.encode("genericNACK", forKey: .kind)
            try c.encode(entries, forKey: .entries)
        case .pictureLossIndication:
            try c.encode("pictureLossIndication", forKey: .kind)
        case .fullIntraRequest(let entries):
            try c.encode("fullIntraRequest", forKey: .kind)
            try c.encode(entries, forKey: .entries)
        }
    }

    private enum MessageKeys: String, CodingKey { case kind, entries }
}
