/// A STUN method: a 12-bit number (RFC 8489 §5, §18.2).
///
/// Any 12-bit method can be carried; `binding` is the one ICE uses. Names of the TURN
/// methods (RFC 8656 §17) are known only to label them in `parley inspect`.
public struct STUNMethod: RawRepresentable, Sendable, Hashable, Encodable, CustomStringConvertible {
    /// The method number, 0x000...0xFFF.
    public let rawValue: UInt16

    /// Returns nil when `rawValue` does not fit in 12 bits.
    public init?(rawValue: UInt16) {
        guard rawValue <= 0x0FFF else { return nil }
        self.rawValue = rawValue
    }

    private init(known rawValue: UInt16) { self.rawValue = rawValue }

    /// Binding (RFC 8489 §18.2): connectivity checks and server-reflexive addresses.
    public static let binding = STUNMethod(known: 0x001)
    /// TURN Allocate (RFC 8656).
    public static let allocate = STUNMethod(known: 0x003)
    /// TURN Refresh (RFC 8656).
    public static let refresh = STUNMethod(known: 0x004)
    /// TURN Send (RFC 8656).
    public static let send = STUNMethod(known: 0x006)
    /// TURN Data (RFC 8656).
    public static let data = STUNMethod(known: 0x007)
    /// TURN CreatePermission (RFC 8656).
    public static let createPermission = STUNMethod(known: 0x008)
    /// TURN ChannelBind (RFC 8656).
    public static let channelBind = STUNMethod(known: 0x009)

    /// The registered name, or nil for a method this module has no name for.
    public var name: String? {
        switch rawValue {
        case 0x001: return "binding"
        case 0x003: return "allocate"
        case 0x004: return "refresh"
        case 0x006: return "send"
        case 0x007: return "data"
        case 0x008: return "createPermission"
        case 0x009: return "channelBind"
        default: return nil
        }
    }

    /// `0x001` style hex text.
    public var hexString: String { "0x" + String(hex16(rawValue).dropFirst()) }

    public var description: String { name ?? hexString }

    /// Encodes as the `0x001` hex text.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(hexString)
    }
}
