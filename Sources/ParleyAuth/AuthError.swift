import ParleyWireCore
/// Why a user token, an application credential or a Basic authorization was refused.
///
/// Compare ``kind`` to tell errors apart (`error.kind == .expired`); send
/// ``protocolCode`` as the `code` of the signaling `error` reply (docs/protocol.md,
/// "Error codes"); log ``description``, one line such as
/// `token refused (expired) in exp: expired at 1764507600, now 1764507700 (leeway 60 s)`.
public struct AuthError: Error, Sendable, Hashable, CustomStringConvertible {
    fileprivate enum Code: Hashable, Sendable {
        case malformed, unsupportedAlgorithm, unknownKey, wrongApplication, unknownApplication
        case badUserID, badSignature, keyDateMismatch, lifetimeTooLong, notYetValid, expired
        case replayedNonce, replayCacheFull, malformedCredentials, badCredentials, invalidValue, cryptoFailure
    }

    /// What went wrong, without the details; compare with the static members.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        fileprivate let code: Code

        /// Not a compact JWS of three base64url parts holding JSON objects, over the size
        /// limit, or a required claim missing or of the wrong type. `token_malformed`.
        public static let malformed = Kind(code: .malformed)
        /// The header's `alg` is not `HS256` (`none` included). `token_malformed`.
        public static let unsupportedAlgorithm = Kind(code: .unsupportedAlgorithm)
        /// The header has no `kid`, or it is not `hkdfv1-YYYYMMDD` with a real date. `token_malformed`.
        public static let unknownKey = Kind(code: .unknownKey)
        /// `iss` names another application than the one the device said (`hello.appKey`),
        /// or `sub` names another application than `iss`. `token_wrong_application`.
        public static let wrongApplication = Kind(code: .wrongApplication)
        /// The server knows no application with the key the device said. `token_wrong_application`.
        public static let unknownApplication = Kind(code: .unknownApplication)
        /// `sub` is not `{iss}/users/{userId}` with a valid user id. `token_malformed`.
        public static let badUserID = Kind(code: .badUserID)
        /// The signature does not verify with the key derived from the application secret. `token_bad_signature`.
        public static let badSignature = Kind(code: .badSignature)
        /// The `kid` date is more than a day away from the UTC date of `iat`: a derived
        /// key only signs tokens issued on its own day. `token_bad_signature`.
        public static let keyDateMismatch = Kind(code: .keyDateMismatch)
        /// `exp - iat` is longer than the verifier allows (24 h by default). `token_malformed`.
        public static let lifetimeTooLong = Kind(code: .lifetimeTooLong)
        /// `iat` or `nbf` is later than now plus the clock-skew leeway. `token_not_yet_valid`.
        public static let notYetValid = Kind(code: .notYetValid)
        /// `exp` plus the clock-skew leeway is not later than now. `token_expired`.
        public static let expired = Kind(code: .expired)
        /// The token's `nonce` was already accepted for this application. `token_replayed`.
        public static let replayedNonce = Kind(code: .replayedNonce)
        /// The application has as many unexpired nonces as the replay cache holds; the
        /// token is refused rather than forgetting a nonce. `rate_limited`.
        public static let replayCacheFull = Kind(code: .replayCacheFull)
        /// An `Authorization` header that is not `Basic` with base64 of `key:secret`. `unauthorized`.
        public static let malformedCredentials = Kind(code: .malformedCredentials)
        /// Basic credentials of an unknown application, or with the wrong secret. `unauthorized`.
        public static let badCredentials = Kind(code: .badCredentials)
        /// A value given to this module (application key, secret, user id, nonce, lifetime,
        /// base64 text) breaks its format: the caller's mistake, not a peer's. `bad_request`.
        public static let invalidValue = Kind(code: .invalidValue)
        /// OpenSSL failed to compute a digest or random bytes. `internal_error`.
        public static let cryptoFailure = Kind(code: .cryptoFailure)

        public var description: String {
            switch code {
            case .malformed: return "malformed"
            case .unsupportedAlgorithm: return "unsupportedAlgorithm"
            case .unknownKey: return "unknownKey"
            case .wrongApplication: return "wrongApplication"
            case .unknownApplication: return "unknownApplication"
            case .badUserID: return "badUserID"
            case .badSignature: return "badSignature"
            case .keyDateMismatch: return "keyDateMismatch"
            case .lifetimeTooLong: return "lifetimeTooLong"
            case .notYetValid: return "notYetValid"
            case .expired: return "expired"
            case .replayedNonce: return "replayedNonce"
            case .replayCacheFull: return "replayCacheFull"
            case .malformedCredentials: return "malformedCredentials"
            case .badCredentials: return "badCredentials"
            case .invalidValue: return "invalidValue"
            case .cryptoFailure: return "cryptoFailure"
            }
        }
    }

    private let code: Code
    /// The part of the input at fault: `token`, `header`, `payload`, `signature`, a header
    /// parameter or claim name (`alg`, `kid`, `iss`, `sub`, `iat`, `exp`, `nbf`, `nonce`,
    /// `aud`, `crit`, `typ`), `authorization`, or the name of an argument.
    public let field: String?
    /// Byte offset of the problem: within the token or header text for encoding errors,
    /// within the decoded header or payload JSON for JSON errors (then ``field`` says which).
    public let offset: Int?
    /// One line saying what is wrong, without the kind.
    public let reason: String

    init(_ kind: Kind, field: String? = nil, offset: Int? = nil, _ reason: String) {
        self.code = kind.code
        self.field = field
        self.offset = offset
        self.reason = reason
    }

    /// The same error with another kind and field, for reusing a lower layer's finding
    /// (a base64 error inside a token is `malformed`, inside a header `malformedCredentials`).
    /// A Base64 refusal as an error of `kind`.
    init(_ kind: Kind, field: String?, _ error: Base64Error) {
        self.init(kind, field: field, offset: error.offset, error.reason)
    }

    func recast(_ kind: Kind, field: String?) -> AuthError {
        AuthError(kind, field: field, offset: offset, reason)
    }

    /// What kind of error this is.
    public var kind: Kind { Kind(code: code) }

    /// The error code for the wire: a signaling `error` code (docs/protocol.md) for token
    /// errors, `unauthorized` for Basic credentials on the REST API.
    public var protocolCode: String {
        switch code {
        case .malformed, .unsupportedAlgorithm, .unknownKey, .badUserID, .lifetimeTooLong: return "token_malformed"
        case .wrongApplication, .unknownApplication: return "token_wrong_application"
        case .badSignature, .keyDateMismatch: return "token_bad_signature"
        case .notYetValid: return "token_not_yet_valid"
        case .expired: return "token_expired"
        case .replayedNonce: return "token_replayed"
        case .replayCacheFull: return "rate_limited"
        case .malformedCredentials, .badCredentials: return "unauthorized"
        case .invalidValue: return "bad_request"
        case .cryptoFailure: return "internal_error"
        }
    }

    /// The error for a `hello` naming an application the server does not know.
    public static func unknownApplication(_ applicationKey: String) -> AuthError {
        AuthError(.unknownApplication, field: "appKey", "no application with key \"\(printable(applicationKey))\"")
    }

    public var description: String {
        var text: String
        switch code {
        case .malformedCredentials, .badCredentials: text = "credentials refused (\(kind))"
        case .invalidValue: text = "invalid value"
        case .cryptoFailure: text = "crypto failure"
        default: text = "token refused (\(kind))"
        }
        if let field { text += " in \(field)" }
        if let offset { text += " at offset \(offset)" }
        return text + ": " + reason
    }

    /// `text` cut to 64 characters with control characters replaced, for messages that
    /// quote hostile input.
    static func printable(_ text: some StringProtocol) -> String {
        var out = ""
        var count = 0
        for scalar in text.unicodeScalars {
            if count == 64 { return out + "..." }
            out.unicodeScalars.append(scalar.value < 0x20 || scalar.value == 0x7f ? "?" : scalar)
            count += 1
        }
        return out
    }
}
