internal import ParleyWireCore

/// One RTCP packet of a compound datagram.
///
/// Every RTCP packet starts with the same 4-byte header (RFC 3550 §6.4.1):
///
/// ```
///  0                   1                   2                   3
///  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |V=2|P|  count  |      PT       |  length (32-bit words - 1)    |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// ```
public enum RTCPPacket: Sendable, Hashable, Encodable {
    case senderReport(RTCPSenderReport)
    case receiverReport(RTCPReceiverReport)
    case sourceDescription(RTCPSourceDescription)
    case goodbye(RTCPGoodbye)
    case applicationDefined(RTCPApplicationDefined)
    /// RTPFB (205) or PSFB (206), RFC 4585.
    case feedback(RTCPFeedback)
    case unknown(RTCPUnknownPacket)

    /// The PT field value.
    public var packetType: UInt8 {
        switch self {
        case .senderReport: RTCPSenderReport.packetType
        case .receiverReport: RTCPReceiverReport.packetType
        case .sourceDescription: RTCPSourceDescription.packetType
        case .goodbye: RTCPGoodbye.packetType
        case .applicationDefined: RTCPApplicationDefined.packetType
        case .feedback(let packet): packet.layer.packetType
        case .unknown(let packet): packet.packetType
        }
    }

    /// Decodes the body `reader` spans (header and padding already taken off).
    static func parse(packetType: UInt8, count: UInt8, _ reader: inout SliceReader, packetStart: Int) throws(RTPError) -> RTCPPacket {
        switch packetType {
        case RTCPSenderReport.packetType:
            return .senderReport(try .parse(count: count, &reader))
        case RTCPReceiverReport.packetType:
            return .receiverReport(try .parse(count: count, &reader))
        case RTCPSourceDescription.packetType:
            return .sourceDescription(try .parse(count: count, &reader, packetStart: packetStart))
        case RTCPGoodbye.packetType:
            return .goodbye(try .parse(count: count, &reader, packetStart: packetStart))
        case RTCPApplicationDefined.packetType:
            return .applicationDefined(try .parse(count: count, &reader))
        case RTCPFeedback.Layer.transport.packetType:
            return .feedback(try .parse(layer: .transport, format: count, &reader))
        case RTCPFeedback.Layer.payloadSpecific.packetType:
            return .feedback(try .parse(layer: .payloadSpecific, format: count, &reader))
        default:
            return .unknown(RTCPUnknownPacket(packetType: packetType, count: count, body: reader.rest()))
        }
    }

    /// Appends header, body and `padding` (setting the P bit when it is not empty).
    func serialize(into output: inout [UInt8], padding: [UInt8]) throws(RTPError) {
        let start = output.count
        output.appendUInt32(0)  // header, filled in below
        let count: UInt8
        switch self {
        case .senderReport(let packet): count = try packet.serializeBody(into: &output)
        case .receiverReport(let packet): count = try packet.serializeBody(into: &output)
        case .sourceDescription(let packet): count = try packet.serializeBody(into: &output, packetStart: start)
        case .goodbye(let packet): count = try packet.serializeBody(into: &output, packetStart: start)
        case .applicationDefined(let packet): count = try packet.serializeBody(into: &output)
        case .feedback(let packet): count = try packet.serializeBody(into: &output)
        case .unknown(let packet): count = try packet.serializeBody(into: &output)
        }
        output.append(contentsOf: padding)
        let words = (output.count - start) / 4 - 1
        guard words <= Int(UInt16.max) else {
            throw RTPError(.invalidValue, offset: start + 2, "RTCP length", "packet of \(output.count - start) bytes exceeds 65536 words")
        }
        output[start] = 2 << 6 | (padding.isEmpty ? 0 : 0x20) | count
        output[start + 1] = packetType
        output[start + 2] = UInt8(words >> 8)
        output[start + 3] = UInt8(truncatingIfNeeded: words)
    }

    /// The JSON of the packet inside, which names its kind in `type`.
    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .senderReport(let packet): try packet.encode(to: encoder)
        case .receiverReport(let packet): try packet.encode(to: encoder)
        case .sourceDescription(let packet): try packet.encode(to: encoder)
        case .goodbye(let packet): try packet.encode(to: encoder)
        case .applicationDefined(let packet): try packet.encode(to: encoder)
        case .feedback(let packet): try packet.encode(to: encoder)
        case .unknown(let packet): try packet.encode(to: encoder)
        }
    }
}
