/// The 4-bit frame opcode (RFC 6455 §5.2, §11.8).
///
/// Any value 0-15 can be held so that frames with reserved opcodes can be built (to test
/// a peer) and described; the parser rejects the reserved ones.
public struct WebSocketOpcode: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The opcode nibble, 0-15.
    public let rawValue: UInt8

    /// Fails for values above 15, which do not fit the 4-bit field.
    public init?(rawValue: UInt8) {
        guard rawValue <= 0x0f else { return nil }
        self.rawValue = rawValue
    }

    private init(_ value: UInt8) { rawValue = value }

    /// 0x0: continues a fragmented message.
    public static let continuation = WebSocketOpcode(0x0)
    /// 0x1: first (or only) frame of a UTF-8 text message.
    public static let text = WebSocketOpcode(0x1)
    /// 0x2: first (or only) frame of a binary message.
    public static let binary = WebSocketOpcode(0x2)
    /// 0x8: close (§5.5.1).
    public static let close = WebSocketOpcode(0x8)
    /// 0x9: ping (§5.5.2).
    public static let ping = WebSocketOpcode(0x9)
    /// 0xA: pong (§5.5.3).
    public static let pong = WebSocketOpcode(0xa)

    /// Control opcodes have the high bit of the nibble set (§5.5).
    public var isControl: Bool { rawValue & 0x08 != 0 }

    /// 0x3-0x7 and 0xB-0xF have no meaning without an extension (§5.2).
    public var isReserved: Bool {
        switch rawValue {
        case 0x0, 0x1, 0x2, 0x8, 0x9, 0xa: return false
        default: return true
        }
    }

    /// `text`, `binary`, ... or `reserved-0x3` style for reserved values.
    public var description: String {
        switch rawValue {
        case 0x0: return "continuation"
        case 0x1: return "text"
        case 0x2: return "binary"
        case 0x8: return "close"
        case 0x9: return "ping"
        case 0xa: return "pong"
        default: return "reserved-0x" + String(rawValue, radix: 16)
        }
    }
}
