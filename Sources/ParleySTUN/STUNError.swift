import ParleyWireCore
/// Every problem ParleySTUN reports: a message that does not parse, or a value that cannot
/// be encoded.
///
/// It says what went wrong (`kind`), where (`offset` from the first byte of the message, and
/// the attribute type when one is involved) and gives a one-line `description` such as
/// `truncated attribute header at offset 24: need 4 bytes, 2 left`.
public struct STUNError: Error, Sendable, Hashable, CustomStringConvertible {
    private enum Code: String, Sendable, Hashable {
        case truncatedMessage
        case notSTUN
        case missingMagicCookie
        case badMessageLength
        case trailingBytes
        case truncatedAttribute
        case malformedAttribute
        case invalidValue
        case misplacedTrailer
        case cryptoFailure
    }

    /// What kind of problem this is; compare with the static members, e.g.
    /// `error.kind == .truncatedAttribute`.
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
        private let code: Code
        private init(_ code: Code) { self.code = code }

        /// Fewer bytes than the 20-byte header, or than the header's length field announces.
        public static let truncatedMessage = Kind(.truncatedMessage)
        /// The two most significant bits of the first byte are not zero (RFC 8489 §5).
        public static let notSTUN = Kind(.notSTUN)
        /// No magic cookie 0x2112A442 at offset 4: an RFC 3489 ("classic STUN") message, or
        /// not STUN at all. Classic STUN is not supported.
        public static let missingMagicCookie = Kind(.missingMagicCookie)
        /// The header's length field is not a multiple of 4 (RFC 8489 §5).
        public static let badMessageLength = Kind(.badMessageLength)
        /// Bytes follow the end that the header's length field announces.
        public static let trailingBytes = Kind(.trailingBytes)
        /// An attribute header, value or padding runs past the end of the message.
        public static let truncatedAttribute = Kind(.truncatedAttribute)
        /// A known attribute's value does not have its defined form (wrong size, unknown
        /// address family, invalid UTF-8, out-of-range error class, ...).
        public static let malformedAttribute = Kind(.malformedAttribute)
        /// A value given to the encoder is out of range (too long, bad error code, ...).
        public static let invalidValue = Kind(.invalidValue)
        /// An integrity or fingerprint attribute cannot be added where it was asked for.
        public static let misplacedTrailer = Kind(.misplacedTrailer)
        /// The HMAC could not be computed (OpenSSL failed).
        public static let cryptoFailure = Kind(.cryptoFailure)

        public var description: String { code.rawValue }
    }

    /// What kind of problem this is.
    public let kind: Kind
    /// Offset from the first byte of the message where the problem is; `nil` for problems
    /// with a value handed to the encoder.
    public let offset: Int?
    /// The attribute involved, if any.
    public let attributeType: STUNAttributeType?
    /// The one-line human description, offset included.
    public let description: String

    private init(_ kind: Kind, offset: Int?, attributeType: STUNAttributeType?, description: String) {
        self.kind = kind
        self.offset = offset
        self.attributeType = attributeType
        self.description = description
    }

    // MARK: Constructors used inside the module

    static func truncatedMessage(what: String, offset: Int, needed: Int, available: Int) -> STUNError {
        STUNError(.truncatedMessage, offset: offset, attributeType: nil,
                  description: "truncated \(what) at offset \(offset): need \(needed) bytes, \(available) left")
    }

    static func notSTUN(firstByte: UInt8) -> STUNError {
        STUNError(.notSTUN, offset: 0, attributeType: nil,
                  description: "not a STUN message at offset 0: first byte 0x\(hexByte(firstByte)) has its top two bits set")
    }

    static func missingMagicCookie(found: UInt32) -> STUNError {
        STUNError(.missingMagicCookie, offset: 4, attributeType: nil,
                  description: "no magic cookie at offset 4: found 0x\(hex32(found)), expected 0x2112a442 (RFC 3489 classic STUN is not supported)")
    }

    static func badMessageLength(_ length: Int) -> STUNError {
        STUNError(.badMessageLength, offset: 2, attributeType: nil,
                  description: "bad message length at offset 2: \(length) is not a multiple of 4")
    }

    static func trailingBytes(end: Int, extra: Int) -> STUNError {
        STUNError(.trailingBytes, offset: end, attributeType: nil,
                  description: "\(extra) bytes after the end of the message at offset \(end) (the length field says it ends there)")
    }

    static func truncatedAttribute(
        _ type: STUNAttributeType?, what: String, offset: Int, needed: Int, available: Int
    ) -> STUNError {
        let name = type.map { " \($0.displayName)" } ?? ""
        return STUNError(.truncatedAttribute, offset: offset, attributeType: type,
                         description: "truncated attribute\(name) \(what) at offset \(offset): need \(needed) bytes, \(available) left")
    }

    /// `offset` is nil when the attribute is decoded on its own, outside a message.
    static func malformedAttribute(_ type: STUNAttributeType, offset: Int?, _ reason: String) -> STUNError {
        let place = offset.map { " at offset \($0)" } ?? ""
        return STUNError(.malformedAttribute, offset: offset, attributeType: type,
                         description: "malformed \(type.displayName)\(place): \(reason)")
    }

    static func invalidValue(_ type: STUNAttributeType?, _ reason: String) -> STUNError {
        let name = type.map { "\($0.displayName): " } ?? ""
        return STUNError(.invalidValue, offset: nil, attributeType: type, description: "cannot encode \(name)\(reason)")
    }

    static func misplacedTrailer(_ type: STUNAttributeType, _ reason: String) -> STUNError {
        STUNError(.misplacedTrailer, offset: nil, attributeType: type,
                  description: "cannot add \(type.displayName): \(reason)")
    }

    static func cryptoFailure(_ type: STUNAttributeType, _ reason: String) -> STUNError {
        STUNError(.cryptoFailure, offset: nil, attributeType: type,
                  description: "cannot compute \(type.displayName): \(reason)")
    }
}

func hexByte(_ value: UInt8) -> String { Hex.encode([value]) }

func hex16(_ value: UInt16) -> String { Hex.encode([UInt8(value >> 8), UInt8(truncatingIfNeeded: value)]) }

func hex32(_ value: UInt32) -> String { hex16(UInt16(value >> 16)) + hex16(UInt16(truncatingIfNeeded: value)) }
