/// A STUN attribute type number (RFC 8489 §14, §18.3).
///
/// Types 0x0000-0x7FFF are comprehension-required: an agent that does not understand one
/// must reject a request with 420 (Unknown Attribute). Types 0x8000-0xFFFF are
/// comprehension-optional and may be ignored.
public struct STUNAttributeType: RawRepresentable, Sendable, Hashable, Comparable, Encodable, CustomStringConvertible {
    public let rawValue: UInt16

    public init(rawValue: UInt16) { self.rawValue = rawValue }
    public init(_ rawValue: UInt16) { self.rawValue = rawValue }

    // MARK: Types this module decodes (STUN, RFC 8489 §14; ICE, RFC 8445 §16.1)

    /// MAPPED-ADDRESS, RFC 8489 §14.1.
    public static let mappedAddress = STUNAttributeType(0x0001)
    /// USERNAME, RFC 8489 §14.3.
    public static let username = STUNAttributeType(0x0006)
    /// MESSAGE-INTEGRITY (HMAC-SHA1), RFC 8489 §14.5.
    public static let messageIntegrity = STUNAttributeType(0x0008)
    /// ERROR-CODE, RFC 8489 §14.8.
    public static let errorCode = STUNAttributeType(0x0009)
    /// UNKNOWN-ATTRIBUTES, RFC 8489 §14.13.
    public static let unknownAttributes = STUNAttributeType(0x000A)
    /// REALM, RFC 8489 §14.9.
    public static let realm = STUNAttributeType(0x0014)
    /// NONCE, RFC 8489 §14.10.
    public static let nonce = STUNAttributeType(0x0015)
    /// MESSAGE-INTEGRITY-SHA256, RFC 8489 §14.6.
    public static let messageIntegritySHA256 = STUNAttributeType(0x001C)
    /// XOR-MAPPED-ADDRESS, RFC 8489 §14.2.
    public static let xorMappedAddress = STUNAttributeType(0x0020)
    /// PRIORITY, RFC 8445 §7.1.1.
    public static let priority = STUNAttributeType(0x0024)
    /// USE-CANDIDATE, RFC 8445 §7.1.2.
    public static let useCandidate = STUNAttributeType(0x0025)
    /// SOFTWARE, RFC 8489 §14.14.
    public static let software = STUNAttributeType(0x8022)
    /// FINGERPRINT, RFC 8489 §14.7.
    public static let fingerprint = STUNAttributeType(0x8028)
    /// ICE-CONTROLLED, RFC 8445 §7.1.3.
    public static let iceControlled = STUNAttributeType(0x8029)
    /// ICE-CONTROLLING, RFC 8445 §7.1.3.
    public static let iceControlling = STUNAttributeType(0x802A)

    /// The types this module decodes into `STUNAttributeValue`; any other
    /// comprehension-required type is "unknown" for `STUNMessage.unknownComprehensionRequired`.
    public static let decodedTypes: Set<STUNAttributeType> = [
        .mappedAddress, .username, .messageIntegrity, .errorCode, .unknownAttributes, .realm, .nonce,
        .messageIntegritySHA256, .xorMappedAddress, .priority, .useCandidate, .software, .fingerprint,
        .iceControlled, .iceControlling,
    ]

    /// True for 0x0000-0x7FFF (RFC 8489 §14).
    public var isComprehensionRequired: Bool { rawValue < 0x8000 }

    /// The IANA registry name (e.g. `XOR-MAPPED-ADDRESS`), or nil if this module has none.
    /// Some TURN and RFC 8489 types are named for `parley inspect` but not decoded.
    public var name: String? {
        switch rawValue {
        case 0x0001: return "MAPPED-ADDRESS"
        case 0x0006: return "USERNAME"
        case 0x0008: return "MESSAGE-INTEGRITY"
        case 0x0009: return "ERROR-CODE"
        case 0x000A: return "UNKNOWN-ATTRIBUTES"
        case 0x000C: return "CHANNEL-NUMBER"
        case 0x000D: return "LIFETIME"
        case 0x0012: return "XOR-PEER-ADDRESS"
        case 0x0013: return "DATA"
        case 0x0014: return "REALM"
        case 0x0015: return "NONCE"
        case 0x0016: return "XOR-RELAYED-ADDRESS"
        case 0x0017: return "REQUESTED-ADDRESS-FAMILY"
        case 0x0018: return "EVEN-PORT"
        case 0x0019: return "REQUESTED-TRANSPORT"
        case 0x001A: return "DONT-FRAGMENT"
        case 0x001C: return "MESSAGE-INTEGRITY-SHA256"
        case 0x001D: return "PASSWORD-ALGORITHM"
        case 0x001E: return "USERHASH"
        case 0x0020: return "XOR-MAPPED-ADDRESS"
        case 0x0022: return "RESERVATION-TOKEN"
        case 0x0024: return "PRIORITY"
        case 0x0025: return "USE-CANDIDATE"
        case 0x8002: return "PASSWORD-ALGORITHMS"
        case 0x8003: return "ALTERNATE-DOMAIN"
        case 0x8022: return "SOFTWARE"
        case 0x8023: return "ALTERNATE-SERVER"
        case 0x8028: return "FINGERPRINT"
        case 0x8029: return "ICE-CONTROLLED"
        case 0x802A: return "ICE-CONTROLLING"
        default: return nil
        }
    }

    /// `0x8022` style hex text.
    public var hexString: String { "0x" + hex16(rawValue) }

    /// The name if known, else the hex number, for messages.
    var displayName: String { name ?? "attribute \(hexString)" }

    public var description: String { name ?? hexString }

    public static func < (lhs: STUNAttributeType, rhs: STUNAttributeType) -> Bool { lhs.rawValue < rhs.rawValue }

    /// Encodes as the `0x8022` hex text.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(hexString)
    }
}
