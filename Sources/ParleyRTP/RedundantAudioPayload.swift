internal import ParleyWireCore

/// An RFC 2198 redundant audio payload (`red`): zero or more older encodings of earlier
/// frames followed by the primary encoding, each with its own payload type.
///
/// Layout (RFC 2198 §3): one 4-byte header per redundant block, then a 1-byte header for
/// the primary, then the block data in the same order (primary last).
///
/// ```
///  0                   1                    2                   3
///  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4  5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |F|   block PT  |  timestamp offset         |   block length    |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |0|   block PT  |   (final header: the primary)
/// +-+-+-+-+-+-+-+-+
/// ```
///
/// F=1 marks a header that is followed by another; the offset (14 bits) is how far the
/// block's timestamp lies before the packet's RTP timestamp; the length (10 bits) counts
/// the block's data bytes. The primary's length is whatever remains.
public struct RedundantAudioPayload: Sendable, Hashable {
    /// One older encoding carried for loss recovery.
    public struct Block: Sendable, Hashable {
        /// The block's RTP payload type (7 bits).
        public var payloadType: UInt8
        /// Timestamp units by which this block precedes the packet's timestamp (14 bits).
        public var timestampOffset: UInt16
        /// The encoded frame.
        public var data: [UInt8]

        public init(payloadType: UInt8, timestampOffset: UInt16, data: [UInt8]) {
            self.payloadType = payloadType
            self.timestampOffset = timestampOffset
            self.data = data
        }
    }

    /// Largest timestamp offset a header can carry (14 bits).
    public static let maximumTimestampOffset: UInt16 = 0x3fff
    /// Largest redundant block a header can describe (10 bits).
    public static let maximumBlockLength = 0x3ff

    /// Older encodings, oldest first as they appear on the wire.
    public var redundant: [Block]
    /// The primary encoding's payload type (7 bits).
    public var primaryPayloadType: UInt8
    /// The primary encoding: the frame whose timestamp is the packet's.
    public var primary: [UInt8]

    public init(redundant: [Block] = [], primaryPayloadType: UInt8, primary: [UInt8]) {
        self.redundant = redundant
        self.primaryPayloadType = primaryPayloadType
        self.primary = primary
    }

    /// Parses a whole `red` payload. Throws `.truncated` when headers or a block run past
    /// the end; an empty payload has no final header and is truncated too.
    public init(parsing payload: ArraySlice<UInt8>) throws(RTPError) {
        let origin = payload.startIndex
        var index = origin
        var headers: [(payloadType: UInt8, offset: UInt16, length: Int)] = []
        while true {
            guard index < payload.endIndex else {
                throw .truncated("RED block header", offset: index - origin, needed: 1, available: 0)
            }
            let first = payload[index]
            if first & 0x80 == 0 {
                primaryPayloadType = first & 0x7f
                index += 1
                break
            }
            guard payload.endIndex - index >= 4 else {
                throw .truncated("RED block header", offset: index - origin, needed: 4, available: payload.endIndex - index)
            }
            let word = payload.readUInt32(at: index)
            headers.append((payloadType: first & 0x7f,
                            offset: UInt16((word >> 10) & 0x3fff),
                            length: Int(word & 0x3ff)))
            index += 4
        }
        var blocks: [Block] = []
        blocks.reserveCapacity(headers.count)
        for header in headers {
            guard payload.endIndex - index >= header.length else {
                throw .truncated("RED block data", offset: index - origin, needed: header.length,
                                 available: payload.endIndex - index)
            }
            blocks.append(Block(payloadType: header.payloadType, timestampOffset: header.offset,
                                data: Array(payload[index..<index + header.length])))
            index += header.length
        }
        redundant = blocks
        primary = Array(payload[index...])
    }

    public init(parsing payload: [UInt8]) throws(RTPError) {
        try self.init(parsing: payload[...])
    }

    /// Size of the serialized payload in bytes.
    public var serializedSize: Int {
        redundant.reduce(1 + primary.count) { $0 + 4 + $1.data.count }
    }

    /// Appends the payload. Throws `.invalidValue` when a payload type exceeds 7 bits, an
    /// offset 14 bits, or a redundant block 1023 bytes.
    public func serialize(into output: inout [UInt8]) throws(RTPError) {
        var headerOffset = output.count
        for block in redundant {
            guard block.payloadType <= 0x7f else {
                throw RTPError(.invalidValue, offset: headerOffset, "RED block payload type", "\(block.payloadType) does not fit in 7 bits")
            }
            guard block.timestampOffset <= Self.maximumTimestampOffset else {
                throw RTPError(.invalidValue, offset: headerOffset + 1, "RED timestamp offset", "\(block.timestampOffset) does not fit in 14 bits")
            }
            guard block.data.count <= Self.maximumBlockLength else {
                throw RTPError(.invalidValue, offset: headerOffset + 2, "RED block length", "\(block.data.count) bytes do not fit in 10 bits")
            }
            headerOffset += 4
        }
        guard primaryPayloadType <= 0x7f else {
            throw RTPError(.invalidValue, offset: headerOffset, "RED primary payload type", "\(primaryPayloadType) does not fit in 7 bits")
        }
        output.reserveCapacity(output.count + serializedSize)
        for block in redundant {
            output.appendUInt32(UInt32(0x80 | block.payloadType) << 24
                                | UInt32(block.timestampOffset) << 10
                                | UInt32(block.data.count))
        }
        output.append(primaryPayloadType)
        for block in redundant { output.append(contentsOf: block.data) }
        output.append(contentsOf: primary)
    }

    public func serialized() throws(RTPError) -> [UInt8] {
        var output: [UInt8] = []
        try serialize(into: &output)
        return output
    }
}
