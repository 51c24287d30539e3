/// A digest algorithm named by the `algorithm` parameter (RFC 3261 §22.4 for MD5,
/// RFC 8760 §2.2 for the SHA-2 ones, whose hashing RFC 7616 §3.4.2 defines). The `-sess`
/// variants hash the nonce and cnonce into the first hash (A1). Names compare
/// case-insensitively; a name not listed here is kept as `.other` so a client can skip
/// that challenge for another of the same realm.
public enum SIPDigestAlgorithm: Sendable, Hashable, CustomStringConvertible {
    case md5, md5Sess, sha256, sha256Sess, sha512_256, sha512_256Sess
    case other(String)

    /// The algorithm named `token` on the wire (case-insensitive).
    public init(token: String) {
        switch token.lowercased() {
        case "md5": self = .md5
        case "md5-sess": self = .md5Sess
        case "sha-256": self = .sha256
        case "sha-256-sess": self = .sha256Sess
        case "sha-512-256": self = .sha512_256
        case "sha-512-256-sess": self = .sha512_256Sess
        default: self = .other(token)
        }
    }

    /// The name written on the wire.
    public var token: String {
        switch self {
        case .md5: "MD5"
        case .md5Sess: "MD5-sess"
        case .sha256: "SHA-256"
        case .sha256Sess: "SHA-256-sess"
        case .sha512_256: "SHA-512-256"
        case .sha512_256Sess: "SHA-512-256-sess"
        case .other(let token): token
        }
    }

    /// True if this implementation can compute it (every case but `.other`).
    public var isSupported: Bool {
        if case .other = self { return false }
        return true
    }

    /// True for the `-sess` variants, whose A1 includes the nonce and the cnonce (and
    /// which therefore need a qop, since only then is a cnonce sent).
    public var isSession: Bool {
        switch self {
        case .md5Sess, .sha256Sess, .sha512_256Sess: true
        default: false
        }
    }

    /// How strong the hash is, for choosing among challenges: MD5 0, SHA-256 1,
    /// SHA-512/256 2 (the same 256-bit strength as SHA-256 but immune to length
    /// extension); nil if unsupported. A `-sess` variant ranks with its hash.
    public var strength: Int? {
        switch self {
        case .md5, .md5Sess: 0
        case .sha256, .sha256Sess: 1
        case .sha512_256, .sha512_256Sess: 2
        case .other: nil
        }
    }

    public var description: String { token }
}
