/// Every error of SIP digest authentication: a header value that does not parse, a
/// challenge that cannot be answered, credentials the server refused twice, a server
/// configuration that cannot work.
///
/// Compare errors by `kind`; `reason` is the one-line human description, and `offset`
/// the byte offset in the header value where parsing stopped, when there is one. For
/// example: `malformed at byte 17: unterminated quoted string in parameter "nonce"`.
public struct SIPDigestError: Error, Sendable, Hashable, CustomStringConvertible {
    fileprivate enum Code: String, Sendable, Hashable {
        case inputTooLarge, malformed, unsupportedScheme
        case missingParameter, duplicateParameter, invalidParameter
        case unsupportedAlgorithm, unsupportedQOP, noUsableChallenge
        case credentialsRefused, staleRetriesExhausted, invalidConfiguration, cryptoFailure
    }

    /// What went wrong, without the where and the details.
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
        fileprivate let code: Code

        /// A header value longer than `SIPDigestLimits.maxHeaderValueBytes`, more parameters
        /// than `SIPDigestLimits.maxParameters`, or more header values than
        /// `SIPDigestLimits.maxHeaderValues`.
        public static let inputTooLarge = Kind(code: .inputTooLarge)
        /// A header value that does not follow RFC 3261 §25.1's grammar: an unterminated
        /// quoted string, a missing `=` or `,`, a control character, a stray line break.
        public static let malformed = Kind(code: .malformed)
        /// A scheme other than Digest (Basic, Bearer...): skip this value.
        public static let unsupportedScheme = Kind(code: .unsupportedScheme)
        /// A parameter the grammar requires is absent (realm, nonce, response...).
        public static let missingParameter = Kind(code: .missingParameter)
        /// A known parameter appears twice, so which one counts would be a guess.
        public static let duplicateParameter = Kind(code: .duplicateParameter)
        /// A parameter whose value breaks its own rule (`nc` not 8 hex digits, `stale`
        /// neither true nor false, a value that cannot be written into a header).
        public static let invalidParameter = Kind(code: .invalidParameter)
        /// An algorithm this implementation cannot compute.
        public static let unsupportedAlgorithm = Kind(code: .unsupportedAlgorithm)
        /// A qop this implementation cannot compute (only auth and auth-int are known).
        public static let unsupportedQOP = Kind(code: .unsupportedQOP)
        /// No challenge of a realm can be answered (every one names an unknown
        /// algorithm or qop, or none is Digest).
        public static let noUsableChallenge = Kind(code: .noUsableChallenge)
        /// The server challenged again, not stale, right after credentials computed from a
        /// fresh challenge: the username or password is wrong. Retrying would loop.
        public static let credentialsRefused = Kind(code: .credentialsRefused)
        /// The server answered `stale=true` more often in a row than
        /// `SIPDigestLimits.maxStaleRetries`: it never accepts its own nonces.
        public static let staleRetriesExhausted = Kind(code: .staleRetriesExhausted)
        /// A client or server set up with values that cannot work (an empty realm, a short
        /// secret, an algorithm that is not supported).
        public static let invalidConfiguration = Kind(code: .invalidConfiguration)
        /// OpenSSL failed to compute a digest or an HMAC.
        public static let cryptoFailure = Kind(code: .cryptoFailure)

        public var description: String { code.rawValue }
    }

    private let code: Code
    /// The byte offset in the header value where the problem is, or nil when it concerns
    /// the whole value or no header value at all.
    public let offset: Int?
    /// One line saying what is wrong.
    public let reason: String

    /// The kind of problem, for matching: `error.kind == .credentialsRefused`.
    public var kind: Kind { Kind(code: code) }

    init(_ kind: Kind, offset: Int? = nil, _ reason: String) {
        self.code = kind.code
        self.offset = offset
        self.reason = reason
    }

    public var description: String {
        if let offset { return "\(code.rawValue) at byte \(offset): \(reason)" }
        return "\(code.rawValue): \(reason)"
    }

    /// Text from an untrusted header shortened and with control characters escaped, so a
    /// reason never carries a line break or a megabyte into a log.
    static func printable(_ text: String, limit: Int = 64) -> String {
        var out = ""
        for scalar in text.unicodeScalars.prefix(limit) {
            if scalar.value < 0x20 || scalar.value == 0x7F {
                out += "\\u{\(String(scalar.value, radix: 16))}"
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return text.unicodeScalars.count > limit ? out + "..." : out
    }
}
