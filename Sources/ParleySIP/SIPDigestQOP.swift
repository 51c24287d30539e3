/// A quality of protection (RFC 3261 §25.1 `qop-value`, RFC 7616 §3.3): `auth` covers the
/// method and Request-URI, `auth-int` also the message body. Other tokens (`auth-conf`
/// from older drafts) are kept as `.other` so a client can tell it has nothing it can use.
public enum SIPDigestQOP: Sendable, Hashable, CustomStringConvertible {
    case auth, authInt
    case other(String)

    /// The qop named `token` on the wire (compared case-insensitively, as servers differ).
    public init(token: String) {
        switch token.lowercased() {
        case "auth": self = .auth
        case "auth-int": self = .authInt
        default: self = .other(token)
        }
    }

    /// The name written on the wire.
    public var token: String {
        switch self {
        case .auth: "auth"
        case .authInt: "auth-int"
        case .other(let token): token
        }
    }

    /// True for `auth` and `auth-int`.
    public var isSupported: Bool {
        if case .other = self { return false }
        return true
    }

    public var description: String { token }
}
