internal import ParleyWireCore

/// A compound RTCP datagram (RFC 3550 §6.1): RTCP packets back to back, the length of
/// each in its header, padding (if any) only at the end of the last.
///
/// Validation follows RFC 3550 Appendix A.2 with one deliberate relaxation:
/// - every packet must have version 2;
/// - each length must fit, and the lengths must add up exactly to the datagram;
/// - only the last packet may have the P bit set, and its padding count must be a
///   non-zero multiple of 4 that fits in the packet;
/// - each known packet's count field must agree with its length.
/// Relaxed: the first packet need not be SR or RR, since reduced-size RTCP (RFC 5506)
/// sends feedback alone, and real stacks (libwebrtc among them) accept it.
public struct RTCPCompoundPacket: Sendable, Hashable, Encodable {
    public var packets: [RTCPPacket]
    /// The padding at the end of the last packet, its final byte being its length;
    /// empty when that packet's P bit is clear. Build with `RTCPCompoundPacket.padding(count:)`.
    public var padding: [UInt8]

    public init(packets: [RTCPPacket], padding: [UInt8] = []) {
        self.packets = packets
        self.padding = padding
    }

    /// Zero padding of `count` bytes ending in the count (a multiple of 4 for RTCP).
    public static func padding(count: UInt8) -> [UInt8] {
        guard count > 0 else { return [] }
        var bytes = [UInt8](repeating: 0, count: Int(count))
        bytes[bytes.count - 1] = count
        return bytes
    }

    /// Parses a whole datagram. Offsets in errors count from its start.
    public init(parsing bytes: [UInt8]) throws(RTPError) {
        try self.init(parsing: bytes[...])
    }

    /// Parses a whole datagram. Offsets in errors count from `bytes.startIndex`.
    public init(parsing bytes: ArraySlice<UInt8>) throws(RTPError) {
        let origin = bytes.startIndex
        let end = bytes.endIndex
        guard end > origin else {
            throw .truncated("RTCP header", offset: 0, needed: 4, available: 0)
        }
        var packets: [RTCPPacket] = []
        var padding: [UInt8] = []
        var index = origin
        while index < end {
            let offset = index - origin
            guard end - index >= 4 else {
                throw .truncated("RTCP header", offset: offset, needed: 4, available: end - index)
            }
            let first = bytes[index]
            guard first >> 6 == 2 else {
                throw RTPError(.unsupportedVersion, offset: offset, "RTCP header", "version \(first >> 6), expected 2")
            }
            let packetType = bytes[index + 1]
            let length = (Int(bytes.readUInt16(at: index + 2)) + 1) * 4
            guard end - index >= length else {
                throw RTPError(.invalidLength, offset: offset + 2, "RTCP length",
                               "packet type \(packetType) claims \(length) bytes, \(end - index) left in the datagram")
            }
            let packetEnd = index + length
            var bodyEnd = packetEnd
            if first & 0x20 != 0 {
                guard packetEnd == end else {
                    throw RTPError(.invalidPadding, offset: offset, "RTCP padding",
                                   "P bit set on a packet that is not the last of the compound (RFC 3550 A.2)")
                }
                let count = Int(bytes[packetEnd - 1])
                guard count >= 4, count % 4 == 0, count <= length - 4 else {
                    throw RTPError(.invalidPadding, offset: packetEnd - 1 - origin, "RTCP padding",
                                   "padding count \(count) must be a non-zero multiple of 4 up to \(length - 4)")
                }
                bodyEnd = packetEnd - count
                padding = Array(bytes[bodyEnd..<packetEnd])
            }
            var reader = SliceReader(bytes, origin: origin, range: (index + 4)..<bodyEnd)
            packets.append(try RTCPPacket.parse(packetType: packetType, count: first & 0x1f, &reader, packetStart: index))
            index = packetEnd
        }
        self.packets = packets
        self.padding = padding
    }

    /// Appends the datagram to `output`. Throws `.invalidValue` for a compound with no
    /// packets, padding that is not a multiple of 4 ending in its length, or a packet
    /// whose fields do not fit (counts above 31, values too long, bodies not whole words).
    public func serialize(into output: inout [UInt8]) throws(RTPError) {
        guard !packets.isEmpty else {
            throw RTPError(.invalidValue, offset: output.count, "RTCP compound", "no packets")
        }
        if !padding.isEmpty {
            guard padding.count % 4 == 0, padding.count <= 255, let last = padding.last, Int(last) == padding.count else {
                throw RTPError(.invalidValue, offset: output.count, "RTCP padding",
                               "must be a multiple of 4 bytes up to 252 whose last byte is its length (is \(padding.count) bytes)")
            }
        }
        let last = packets.count - 1
        for (i, packet) in packets.enumerated() {
            try packet.serialize(into: &output, padding: i == last ? padding : [])
        }
    }

    public func serialized() throws(RTPError) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(256)
        try serialize(into: &output)
        return output
    }

    /// `{"packets": [...], "padding": "hex"}`.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: RTCPCodingKeys.self)
        try c.encode(packets, forKey: .packets)
        try c.encode(Hex.encode(padding), forKey: .padding)
    }
}
