internal import ParleyWireCore

/// One attribute of a STUN message exactly as it is on the wire: type, value bytes and the
/// padding bytes that round the value up to a multiple of 4 (RFC 8489 §14).
///
/// ```
///  0                   1                   2                   3
///  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |         Type                  |            Length             |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                         Value (variable)                ....
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// ```
///
/// Keeping the wire form (rather than only a typed value) means a parsed message encodes
/// back to the very same bytes, padding included, so integrity checks over a re-encoded
/// message see what the sender signed even when it set reserved bits or padded with
/// spaces (as the RFC 5769 vectors do). `decoded(transactionID:)` gives the typed view.
public struct STUNAttribute: Sendable, Hashable {
    /// The attribute type.
    public let type: STUNAttributeType
    /// The value bytes, without padding; the Length field is `value.count`.
    public let value: [UInt8]
    // Padding bytes packed from the most significant byte down; zero when there is none,
    // so the padding byte asked for an unpadded value does not affect equality.
    private let packedPadding: UInt32

    /// An attribute with raw value bytes; padding bytes are all `paddingByte` (RFC 8489 says
    /// senders should pad with zero; receivers ignore the padding's content).
    public init(type: STUNAttributeType, value: [UInt8], paddingByte: UInt8 = 0) {
        self.type = type
        self.value = value
        var packed: UInt32 = 0
        let count = Self.paddingCount(value.count)
        for index in 0..<count { packed |= UInt32(paddingByte) << UInt32(24 - 8 * index) }
        self.packedPadding = packed
    }

    /// The typed `value` encoded; XOR-MAPPED-ADDRESS needs the message's transaction ID.
    /// Throws `invalidValue` when the value is out of range (e.g. a USERNAME of 509 bytes
    /// or more, RFC 8489 §14.3; a text of 128 characters or more; an error code outside 300-699).
    public init(_ typed: STUNAttributeValue, transactionID: STUNTransactionID, paddingByte: UInt8 = 0) throws(STUNError) {
        self.init(type: typed.type, value: try typed.encodedValue(transactionID: transactionID), paddingByte: paddingByte)
    }

    /// Used by the decoder: `padding` holds exactly `paddingCount(value.count)` bytes.
    init(type: STUNAttributeType, value: [UInt8], padding: ArraySlice<UInt8>) {
        self.type = type
        self.value = value
        var packed: UInt32 = 0
        for (index, byte) in padding.enumerated() { packed |= UInt32(byte) << UInt32(24 - 8 * index) }
        self.packedPadding = packed
    }

    /// The padding bytes after the value (0 to 3 of them), as received or as built.
    public var padding: [UInt8] {
        (0..<Self.paddingCount(value.count)).map { UInt8(truncatingIfNeeded: packedPadding >> UInt32(24 - 8 * $0)) }
    }

    /// Bytes this attribute takes in a message: header, value and padding.
    public var encodedLength: Int { 4 + value.count + Self.paddingCount(value.count) }

    /// The typed meaning of the value. Throws `malformedAttribute` when the bytes do not
    /// have the form the type defines; types this module does not decode give `.other`.
    public func decoded(transactionID: STUNTransactionID) throws(STUNError) -> STUNAttributeValue {
        try STUNAttributeValue.decode(type: type, value: value[...], transactionID: transactionID, offset: nil)
    }

    static func paddingCount(_ length: Int) -> Int { (4 - length % 4) % 4 }

    /// Appends the type, length, value and padding. The caller has checked `value.count`
    /// fits in 16 bits.
    func append(to out: inout [UInt8]) {
        out.appendUInt16(type.rawValue)
        out.appendUInt16(UInt16(truncatingIfNeeded: value.count))
        out += value
        for index in 0..<Self.paddingCount(value.count) {
            out.append(UInt8(truncatingIfNeeded: packedPadding >> UInt32(24 - 8 * index)))
        }
    }
}
