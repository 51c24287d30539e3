internal import ParleyWireCore

/// A STUN message (RFC 8489, compatible with RFC 5389): header plus an ordered list of
/// attributes, each kept in its wire form.
///
/// ```
///  0                   1                   2                   3
///  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |0 0|     STUN Message Type     |         Message Length        |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                         Magic Cookie                          |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                                                               |
/// |                     Transaction ID (96 bits)                  |
/// |                                                               |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// ```
///
/// Parse with `init(decoding:)`, serialize with `encoded()` (or
/// `encoded(addingIntegrity:fingerprint:)` to sign), check with
/// `verifyMessageIntegrity(key:)` / `verifyFingerprint()`. A parsed message encodes back to
/// the same bytes.
public struct STUNMessage: Sendable, Hashable {
    /// RFC 8489 §5: the fixed value at offset 4 that tells STUN from other traffic.
    public static let magicCookie: UInt32 = 0x2112A442
    /// Bytes in the fixed header.
    public static let headerLength = 20

    /// Request, indication, success or error response.
    public var messageClass: STUNMessageClass
    /// The method, e.g. `.binding`.
    public var method: STUNMethod
    /// The 96-bit transaction ID.
    public var transactionID: STUNTransactionID
    /// Every attribute in wire order, including those a receiver ignores (see
    /// `isIgnored(attributeAt:)`).
    public var attributes: [STUNAttribute]

    public init(
        class messageClass: STUNMessageClass, method: STUNMethod, transactionID: STUNTransactionID,
        attributes: [STUNAttribute] = []
    ) {
        self.messageClass = messageClass
        self.method = method
        self.transactionID = transactionID
        self.attributes = attributes
    }

    /// The 14-bit message type: method bits M0-M11 interleaved with class bits C0 and C1.
    ///
    /// ```
    ///  0                 1
    ///  2  3  4 5 6 7 8 9 0 1 2 3 4 5
    /// +--+--+-+-+-+-+-+-+-+-+-+-+-+-+
    /// |M |M |M|M|M|C|M|M|M|C|M|M|M|M|
    /// |11|10|9|8|7|1|6|5|4|0|3|2|1|0|
    /// +--+--+-+-+-+-+-+-+-+-+-+-+-+-+
    /// ```
    /// RFC 8489 §5, Figure 3.
    public var messageType: UInt16 {
        let m = method.rawValue
        let c = UInt16(messageClass.rawValue)
        return (m & 0x000F) | (m & 0x0070) << 1 | (m & 0x0F80) << 2 | (c & 0x1) << 4 | (c & 0x2) << 7
    }

    /// Splits a message type into class and method; the caller has checked the top two bits are zero.
    static func split(messageType type: UInt16) -> (STUNMessageClass, STUNMethod) {
        let method = (type & 0x000F) | (type >> 1 & 0x0070) | (type >> 2 & 0x0F80)
        let classBits = UInt8(truncatingIfNeeded: (type >> 4 & 0x1) | (type >> 7 & 0x2))
        // Both unwraps are total: the masks keep method within 12 bits and class within 2.
        return (STUNMessageClass(rawValue: classBits) ?? .request, STUNMethod(rawValue: method) ?? .binding)
    }

    // MARK: Demultiplexing

    /// A cheap test for "this datagram is STUN" when STUN, DTLS, RTP and RTCP share a port:
    /// RFC 7983 §7 puts STUN's first byte in 0...3, and RFC 8489 §5 puts the magic cookie at
    /// offset 4. Does not validate the rest; `init(decoding:)` does.
    ///
    /// The first byte holds method bits M7-M11, so messages with a method of 0x100 or more
    /// (none registered for ICE or TURN) parse but are not claimed here, as RFC 7983 intends.
    public static func looksLikeSTUN(_ bytes: some Collection<UInt8>) -> Bool {
        guard bytes.count >= headerLength else { return false }
        var iterator = bytes.makeIterator()
        var header: UInt64 = 0
        for _ in 0..<8 {
            guard let byte = iterator.next() else { return false }
            header = header << 8 | UInt64(byte)
        }
        return header >> 56 <= 3 && UInt32(truncatingIfNeeded: header) == magicCookie
    }

    // MARK: Decoding

    /// Parses one whole STUN message, strictly (RFC 8489 §5, §6.3, §14):
    /// - at least 20 bytes, top two bits zero, magic cookie present (RFC 3489 messages
    ///   without it are rejected with `missingMagicCookie`);
    /// - the length field a multiple of 4 and equal to the bytes after the header;
    /// - every attribute with its padding inside the message;
    /// - every attribute this module knows (`STUNAttributeType.decodedTypes`) well formed,
    ///   except those a receiver ignores (after MESSAGE-INTEGRITY etc., see
    ///   `isIgnored(attributeAt:)`), which are kept but not checked.
    ///
    /// Unknown attributes are kept as bytes; unknown comprehension-required ones are listed
    /// by `unknownComprehensionRequired` so an agent can answer 420.
    public init(decoding bytes: [UInt8]) throws(STUNError) {
        let count = bytes.count
        guard count >= Self.headerLength else {
            throw STUNError.truncatedMessage(what: "message header", offset: 0, needed: Self.headerLength, available: count)
        }
        let type = UInt16(bytes[0]) << 8 | UInt16(bytes[1])
        guard type & 0xC000 == 0 else { throw STUNError.notSTUN(firstByte: bytes[0]) }
        let length = Int(bytes[2]) << 8 | Int(bytes[3])
        let cookie = UInt32(bytes[4]) << 24 | UInt32(bytes[5]) << 16 | UInt32(bytes[6]) << 8 | UInt32(bytes[7])
        guard cookie == Self.magicCookie else { throw STUNError.missingMagicCookie(found: cookie) }
        guard length % 4 == 0 else { throw STUNError.badMessageLength(length) }
        let end = Self.headerLength + length
        guard count >= end else {
            throw STUNError.truncatedMessage(what: "message body", offset: Self.headerLength, needed: length, available: count - Self.headerLength)
        }
        guard count == end else { throw STUNError.trailingBytes(end: end, extra: count - end) }

        let (messageClass, method) = Self.split(messageType: type)
        let transactionID = STUNTransactionID(reading: bytes, at: 8)
        var attributes: [STUNAttribute] = []
        var ordering = AttributeOrdering()
        var offset = Self.headerLength
        while offset < end {
            guard end - offset >= 4 else {
                throw STUNError.truncatedAttribute(nil, what: "header", offset: offset, needed: 4, available: end - offset)
            }
            let attributeType = STUNAttributeType(UInt16(bytes[offset]) << 8 | UInt16(bytes[offset + 1]))
            let valueLength = Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            let valueStart = offset + 4
            guard end - valueStart >= valueLength else {
                throw STUNError.truncatedAttribute(attributeType, what: "value", offset: valueStart, needed: valueLength, available: end - valueStart)
            }
            let valueEnd = valueStart + valueLength
            let paddingCount = STUNAttribute.paddingCount(valueLength)
            guard end - valueEnd >= paddingCount else {
                throw STUNError.truncatedAttribute(attributeType, what: "padding", offset: valueEnd, needed: paddingCount, available: end - valueEnd)
            }
            let value = bytes[valueStart..<valueEnd]
            if !ordering.isIgnored(attributeType), STUNAttributeType.decodedTypes.contains(attributeType) {
                _ = try STUNAttributeValue.decode(type: attributeType, value: value, transactionID: transactionID, offset: offset)
            }
            attributes.append(STUNAttribute(type: attributeType, value: Array(value), padding: bytes[valueEnd..<(valueEnd + paddingCount)]))
            offset = valueEnd + paddingCount
        }
        self.init(class: messageClass, method: method, transactionID: transactionID, attributes: attributes)
    }

    // MARK: Encoding

    /// The message as bytes: header, then each attribute with its padding. Throws
    /// `invalidValue` if an attribute value exceeds 65535 bytes or the attributes together
    /// exceed the 65535 the length field can say.
    public func encoded() throws(STUNError) -> [UInt8] {
        let length = try checkedAttributesLength()
        var out: [UInt8] = []
        out.reserveCapacity(Self.headerLength + length)
        appendHeader(length: length, to: &out)
        for attribute in attributes { attribute.append(to: &out) }
        return out
    }

    /// Total encoded size of the attributes, checked against the 16-bit length fields.
    func checkedAttributesLength() throws(STUNError) -> Int {
        var length = 0
        for attribute in attributes {
            guard attribute.value.count <= 0xFFFF else {
                throw STUNError.invalidValue(attribute.type, "value of \(attribute.value.count) bytes, at most 65535 allowed")
            }
            length += attribute.encodedLength
        }
        guard length <= 0xFFFF else {
            throw STUNError.invalidValue(nil, "attributes of \(length) bytes, at most 65535 fit in a message")
        }
        return length
    }

    func appendHeader(length: Int, to out: inout [UInt8]) {
        out.appendUInt16(messageType)
        out.appendUInt16(UInt16(truncatingIfNeeded: length))
        out.appendUInt32(Self.magicCookie)
        transactionID.append(to: &out)
    }

    /// Encodes `value` (using this message's transaction ID for XOR-MAPPED-ADDRESS) and
    /// appends it. Throws `invalidValue` for an out-of-range value.
    public mutating func append(_ value: STUNAttributeValue, paddingByte: UInt8 = 0) throws(STUNError) {
        attributes.append(try STUNAttribute(value, transactionID: transactionID, paddingByte: paddingByte))
    }
}

/// Which attributes a receiver acts on, RFC 8489 §14.5-14.7: everything up to the first
/// MESSAGE-INTEGRITY; after it only MESSAGE-INTEGRITY-SHA256 and FINGERPRINT; after
/// MESSAGE-INTEGRITY-SHA256 only FINGERPRINT; nothing after FINGERPRINT, which must be last.
struct AttributeOrdering {
    private enum State { case open, afterIntegrity, afterIntegritySHA256, afterFingerprint }
    private var state = State.open

    /// Feeds the next attribute's type; true if a receiver ignores it.
    mutating func isIgnored(_ type: STUNAttributeType) -> Bool {
        switch (state, type) {
        case (.open, .messageIntegrity):
            state = .afterIntegrity
            return false
        case (.open, .messageIntegritySHA256), (.afterIntegrity, .messageIntegritySHA256):
            state = .afterIntegritySHA256
            return false
        case (.open, .fingerprint), (.afterIntegrity, .fingerprint), (.afterIntegritySHA256, .fingerprint):
            state = .afterFingerprint
            return false
        case (.open, _):
            return false
        default:
            return true
        }
    }
}
