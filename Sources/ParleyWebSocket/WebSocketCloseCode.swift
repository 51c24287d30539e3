/// A close status code (RFC 6455 §7.4, IANA "WebSocket Close Code Number Registry").
public struct WebSocketCloseCode: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The 16-bit code as on the wire.
    public let rawValue: UInt16

    /// Any code; check `isAllowedOnWire` before sending one from outside this module.
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// 1000: the purpose of the connection is fulfilled.
    public static let normalClosure = WebSocketCloseCode(rawValue: 1000)
    /// 1001: the endpoint is going away (server shutdown, page navigation).
    public static let goingAway = WebSocketCloseCode(rawValue: 1001)
    /// 1002: protocol error.
    public static let protocolError = WebSocketCloseCode(rawValue: 1002)
    /// 1003: a kind of data the endpoint cannot accept (binary to a text-only endpoint).
    public static let unsupportedData = WebSocketCloseCode(rawValue: 1003)
    /// 1005: no status code was present. Local use only, never on the wire.
    public static let noStatusReceived = WebSocketCloseCode(rawValue: 1005)
    /// 1006: the connection closed without a close frame. Local use only.
    public static let abnormalClosure = WebSocketCloseCode(rawValue: 1006)
    /// 1007: message data not consistent with its type (invalid UTF-8 in text).
    public static let invalidPayloadData = WebSocketCloseCode(rawValue: 1007)
    /// 1008: a message violates the endpoint's policy; the generic code when no other fits.
    public static let policyViolation = WebSocketCloseCode(rawValue: 1008)
    /// 1009: a message too big to process.
    public static let messageTooBig = WebSocketCloseCode(rawValue: 1009)
    /// 1010: the client expected an extension the server did not negotiate.
    public static let mandatoryExtension = WebSocketCloseCode(rawValue: 1010)
    /// 1011: the server hit an unexpected condition.
    public static let internalError = WebSocketCloseCode(rawValue: 1011)
    /// 1012: the service is restarting.
    public static let serviceRestart = WebSocketCloseCode(rawValue: 1012)
    /// 1013: try again later.
    public static let tryAgainLater = WebSocketCloseCode(rawValue: 1013)
    /// 1014: a gateway got an invalid response upstream.
    public static let badGateway = WebSocketCloseCode(rawValue: 1014)
    /// 1015: TLS handshake failure. Local use only.
    public static let tlsHandshake = WebSocketCloseCode(rawValue: 1015)

    /// Whether the code may appear in a close frame (§7.4.1, §7.4.2): the defined
    /// 1000-1003 and 1007-1014, registered 3000-3999 and private 4000-4999. 0-999,
    /// 1004-1006, 1015, the unassigned 1016-2999 and 5000 and up are invalid.
    public var isAllowedOnWire: Bool {
        switch rawValue {
        case 1000...1003, 1007...1014, 3000...4999: return true
        default: return false
        }
    }

    /// The registry name in camelCase (`normalClosure`), `registered`/`private` for the
    /// 3000-4999 ranges, `unknown` otherwise.
    public var name: String {
        switch rawValue {
        case 1000: return "normalClosure"
        case 1001: return "goingAway"
        case 1002: return "protocolError"
        case 1003: return "unsupportedData"
        case 1005: return "noStatusReceived"
        case 1006: return "abnormalClosure"
        case 1007: return "invalidPayloadData"
        case 1008: return "policyViolation"
        case 1009: return "messageTooBig"
        case 1010: return "mandatoryExtension"
        case 1011: return "internalError"
        case 1012: return "serviceRestart"
        case 1013: return "tryAgainLater"
        case 1014: return "badGateway"
        case 1015: return "tlsHandshake"
        case 3000...3999: return "registered"
        case 4000...4999: return "private"
        default: return "unknown"
        }
    }

    public var description: String { "\(rawValue) (\(name))" }
}
