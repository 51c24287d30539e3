/// The value of an ERROR-CODE attribute (RFC 8489 §14.8): a code 300-699 and a reason phrase.
public struct STUNErrorCode: Sendable, Hashable, Encodable, CustomStringConvertible {
    /// The error code, class * 100 + number (e.g. 420). Valid codes are 300...699.
    public var code: Int
    /// The human-readable reason phrase, UTF-8, fewer than 128 characters.
    public var reason: String

    public init(code: Int, reason: String) {
        self.code = code
        self.reason = reason
    }

    /// The hundreds digit (3...6 for a valid code).
    public var errorClass: Int { code / 100 }
    /// The code modulo 100.
    public var number: Int { code % 100 }

    // RFC 8489 §14.8 and RFC 8445 §7.3.1.1: the codes an ICE agent sends.

    /// 300 Try Alternate.
    public static let tryAlternate = STUNErrorCode(code: 300, reason: "Try Alternate")
    /// 400 Bad Request: malformed request.
    public static let badRequest = STUNErrorCode(code: 400, reason: "Bad Request")
    /// 401 Unauthenticated: missing or wrong credentials.
    public static let unauthenticated = STUNErrorCode(code: 401, reason: "Unauthenticated")
    /// 420 Unknown Attribute: list the types in UNKNOWN-ATTRIBUTES.
    public static let unknownAttribute = STUNErrorCode(code: 420, reason: "Unknown Attribute")
    /// 438 Stale Nonce.
    public static let staleNonce = STUNErrorCode(code: 438, reason: "Stale Nonce")
    /// 487 Role Conflict (RFC 8445 §7.3.1.1).
    public static let roleConflict = STUNErrorCode(code: 487, reason: "Role Conflict")
    /// 500 Server Error.
    public static let serverError = STUNErrorCode(code: 500, reason: "Server Error")

    public var description: String { "\(code) \(reason)" }

    private enum CodingKeys: String, CodingKey { case code, reason }

    /// `{"code": 420, "reason": "Unknown Attribute"}`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(code, forKey: .code)
        try container.encode(reason, forKey: .reason)
    }
}
