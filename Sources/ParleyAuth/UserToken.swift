import ParleyWireCore
/// The claims of a user token: a JWT in the Sinch registration token format, with which a
/// device authenticates in `hello` (docs/protocol.md "Authentication", docs/auth.md).
///
/// ```text
/// header  {"alg":"HS256","kid":"hkdfv1-20251129","typ":"JWT"}
/// claims  {"iss":"//parley/applications/{key}","sub":"//parley/applications/{key}/users/{userId}",
///          "iat":1764421200,"exp":1764507600,"nonce":"q3Zt8yW1"}
/// key     HMAC-SHA256(key: base64-decoded application secret, message: "20251129")
/// ```
///
/// `init(_:)` reads the claims of a parsed token and checks their form only; nothing here
/// is trusted before ``TokenVerifier`` has checked the signature. The `Encodable` form
/// (for `parley inspect` and logs) has every member below, named as here except
/// `userId` and `keyId` (the spelling of docs/protocol.md).
public struct UserToken: Sendable, Hashable, Encodable {
    /// Which issuer prefix the token uses; both are accepted, `sub` must use the same one.
    public enum IssuerForm: String, Sendable, Hashable, Encodable, CaseIterable {
        /// `//parley/applications/{key}`
        case parley
        /// `//rtc.sinch.com/applications/{key}`, as Sinch backends mint it.
        case sinch

        /// The text before the application key.
        public var prefix: String {
            switch self {
            case .parley: return "//parley/applications/"
            case .sinch: return "//rtc.sinch.com/applications/"
            }
        }
    }

    /// The header's `kid`: `hkdfv1-YYYYMMDD`.
    public let keyID: String
    /// The date in ``keyID``, from which the signing key is derived.
    public let keyDate: TokenKeyDate
    /// The `iss` claim.
    public let issuer: String
    /// The `sub` claim.
    public let subject: String
    /// The prefix form of ``issuer``.
    public let issuerForm: IssuerForm
    /// The application key named by ``issuer``.
    public let applicationKey: String
    /// The user id named by ``subject``.
    public let userID: String
    /// `iat`, Unix seconds.
    public let issuedAt: Int64
    /// `exp`, Unix seconds.
    public let expiresAt: Int64
    /// `nbf`, Unix seconds, if present.
    public let notBefore: Int64?
    /// The `nonce` claim: 1-255 bytes of printable ASCII without space.
    public let nonce: String

    // JSON names follow docs/protocol.md (`userId`, like `hello.ok`).
    private enum CodingKeys: String, CodingKey {
        case keyID = "keyId", keyDate, issuer, subject, issuerForm, applicationKey, userID = "userId"
        case issuedAt, expiresAt, notBefore, nonce
    }

    /// The key id prefix; the only key derivation accepted.
    public static let keyIDPrefix = "hkdfv1-"

    /// Reads and checks the form of the claims of `token`: `kid` (`unknownKey`), `iss`,
    /// `sub` (`wrongApplication` if it names another application than `iss`, `badUserID`),
    /// `iat`, `exp`, `nbf`, `nonce`, and no `aud` (`malformed`). Does not check the
    /// signature or the times against a clock.
    public init(_ token: JSONWebToken) throws(AuthError) {
        guard let kid = token.keyID else {
            throw AuthError(.unknownKey, field: "kid", "the header has no \"kid\"; expected \"hkdfv1-YYYYMMDD\"")
        }
        guard kid.hasPrefix(Self.keyIDPrefix), let date = TokenKeyDate(digits: kid.dropFirst(Self.keyIDPrefix.count)) else {
            throw AuthError(.unknownKey, field: "kid", "key id \"\(AuthError.printable(kid))\" is not \"hkdfv1-YYYYMMDD\" with a real date")
        }
        let claims = token.claims
        if claims["aud"] != nil {
            // RFC 7519 §4.1.3: a recipient that is not named in `aud` must refuse the token.
            throw AuthError(.malformed, field: "aud", "the token is restricted to an audience (\"aud\"); user tokens carry none")
        }
        let issuer = try Self.string(claims, "iss")
        // Prefixes are compared as bytes: String comparison would apply Unicode canonical
        // equivalence, and a combining mark could then glue onto the final '/'.
        guard let form = IssuerForm.allCases.first(where: { issuer.utf8.starts(with: $0.prefix.utf8) }) else {
            throw AuthError(.malformed, field: "iss", "issuer \"\(AuthError.printable(issuer))\" is not //parley/applications/{key} or //rtc.sinch.com/applications/{key}")
        }
        let applicationKey = String(decoding: issuer.utf8.dropFirst(form.prefix.utf8.count), as: UTF8.self)
        guard ApplicationCredentials.isValidKey(applicationKey) else {
            throw AuthError(.malformed, field: "iss", "issuer \"\(AuthError.printable(issuer))\" does not end in a valid application key (1-64 bytes of A-Z a-z 0-9 - _)")
        }
        let subject = try Self.string(claims, "sub")
        let userID = try Self.userID(subject: subject, issuer: issuer, form: form, applicationKey: applicationKey)
        let issuedAt = try Self.time(claims, "iat")
        let expiresAt = try Self.time(claims, "exp")
        var notBefore: Int64? = nil
        if claims["nbf"] != nil, claims["nbf"] != .null { notBefore = try Self.time(claims, "nbf") }
        guard expiresAt > issuedAt else {
            throw AuthError(.malformed, field: "exp", "exp \(expiresAt) is not after iat \(issuedAt)")
        }
        let nonce = try Self.string(claims, "nonce")
        guard Self.isValidNonce(nonce) else {
            throw AuthError(.malformed, field: "nonce", "nonce must be 1-255 bytes of printable ASCII without space")
        }
        self.keyID = kid
        self.keyDate = date
        self.issuer = issuer
        self.subject = subject
        self.issuerForm = form
        self.applicationKey = applicationKey
        self.userID = userID
        self.issuedAt = issuedAt
        self.expiresAt = expiresAt
        self.notBefore = notBefore
        self.nonce = nonce
    }

    /// Parses `token` (``JSONWebToken/parse(_:)``) and reads its claims, without checking
    /// the signature: for `parley inspect` and error messages, never for trust.
    public static func decodeUnverified(_ token: String) throws(AuthError) -> UserToken {
        try UserToken(JSONWebToken.parse(token))
    }

    private static func userID(subject: String, issuer: String, form: IssuerForm, applicationKey: String) throws(AuthError) -> String {
        let expectedPrefix = issuer + "/users/"
        guard subject.utf8.starts(with: expectedPrefix.utf8) else {
            // Say "another application" only when sub clearly names one.
            for other in IssuerForm.allCases where subject.utf8.starts(with: other.prefix.utf8) {
                let rest = subject.utf8.dropFirst(other.prefix.utf8.count)
                let key = String(decoding: rest.prefix { $0 != UInt8(ascii: "/") }, as: UTF8.self)
                if !key.utf8.elementsEqual(applicationKey.utf8) {
                    throw AuthError(.wrongApplication, field: "sub", "subject names application \"\(AuthError.printable(key))\" but the issuer names \"\(applicationKey)\"")
                }
            }
            throw AuthError(.badUserID, field: "sub", "subject \"\(AuthError.printable(subject))\" is not \"\(AuthError.printable(expectedPrefix)){userId}\"")
        }
        let userID = String(decoding: subject.utf8.dropFirst(expectedPrefix.utf8.count), as: UTF8.self)
        guard isValidUserID(userID) else {
            throw AuthError(.badUserID, field: "sub", "user id \"\(AuthError.printable(userID))\" is not 1-255 bytes of A-Z a-z 0-9 - _ =")
        }
        return userID
    }

    private static func string(_ claims: JSONObject, _ name: String) throws(AuthError) -> String {
        guard let value = claims[name], value != .null else {
            throw AuthError(.malformed, field: name, "the claim \"\(name)\" is missing")
        }
        guard case .string(let text) = value else {
            throw AuthError(.malformed, field: name, "the claim \"\(name)\" is \(JSONWebToken.typeName(value)), not a string")
        }
        return text
    }

    /// A NumericDate (RFC 7519 §2) written as an integer, within ``TokenKeyDate/unixTimeRange``.
    private static func time(_ claims: JSONObject, _ name: String) throws(AuthError) -> Int64 {
        guard let value = claims[name], value != .null else {
            throw AuthError(.malformed, field: name, "the claim \"\(name)\" is missing")
        }
        guard case .number = value else {
            throw AuthError(.malformed, field: name, "the claim \"\(name)\" is \(JSONWebToken.typeName(value)), not a number")
        }
        guard let integer = value.integerValue, TokenKeyDate.unixTimeRange.contains(integer) else {
            throw AuthError(.malformed, field: name, "the claim \"\(name)\" must be whole seconds between 0 and 253402300799")
        }
        return integer
    }

    /// A user id: 1-255 bytes of `A-Z a-z 0-9 - _ =` (docs/protocol.md "Field formats").
    public static func isValidUserID(_ userID: String) -> Bool {
        let bytes = userID.utf8
        return (1...255).contains(bytes.count) && bytes.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "="): return true
            default: return false
            }
        }
    }

    /// A nonce: 1-255 bytes of printable ASCII (0x21-0x7E).
    public static func isValidNonce(_ nonce: String) -> Bool {
        let bytes = nonce.utf8
        return (1...255).contains(bytes.count) && bytes.allSatisfy { $0 >= 0x21 && $0 <= 0x7E }
    }

    /// The HS256 key for tokens of `keyDate`: HMAC-SHA256(key: secret bytes, message: "YYYYMMDD").
    public static func signingKey(secret: ApplicationSecret, keyDate: TokenKeyDate) throws(AuthError) -> [UInt8] {
        try AuthCrypto.hmacSHA256(key: secret.bytes, Array(keyDate.description.utf8))
    }

    /// A fresh random nonce: 16 random bytes as base64url (22 characters).
    public static func randomNonce() throws(AuthError) -> String {
        Base64.encodeURL(try ApplicationSecret.randomBytes(16))
    }

    /// Mints a user token as an application backend would, for `parley token` and tests.
    ///
    /// The key id is the UTC date of `issuedAt`; `exp` is `issuedAt + lifetime`.
    /// `secret` is the application secret in Base64. Throws `invalidValue` for a bad
    /// key, secret, user id, nonce, or a lifetime that is not positive or ends after 9999.
    public static func mint(
        applicationKey: String, secret: String, userID: String, issuedAt: Int64, lifetime: Int64,
        nonce: String, issuerForm: IssuerForm = .parley
    ) throws(AuthError) -> String {
        let applicationSecret: ApplicationSecret
        do { applicationSecret = try ApplicationSecret(base64: secret) } catch { throw error.recast(.invalidValue, field: "secret") }
        guard ApplicationCredentials.isValidKey(applicationKey) else {
            throw AuthError(.invalidValue, field: "applicationKey", "application key must be 1-64 bytes of A-Z a-z 0-9 - _")
        }
        guard isValidUserID(userID) else {
            throw AuthError(.invalidValue, field: "userID", "user id must be 1-255 bytes of A-Z a-z 0-9 - _ =")
        }
        guard isValidNonce(nonce) else {
            throw AuthError(.invalidValue, field: "nonce", "nonce must be 1-255 bytes of printable ASCII without space")
        }
        guard let keyDate = TokenKeyDate(unixTime: issuedAt), lifetime > 0,
              lifetime <= TokenKeyDate.unixTimeRange.upperBound - issuedAt else {
            throw AuthError(.invalidValue, field: "lifetime", "issuedAt must lie in 1970-9999 and lifetime be positive, ending by 9999")
        }
        let issuer = issuerForm.prefix + applicationKey
        var header = JSONObject()
        header.append("alg", "HS256")
        header.append("kid", "\(keyIDPrefix)\(keyDate)")
        header.append("typ", "JWT")
        var payload = JSONObject()
        payload.append("iss", issuer)
        payload.append("sub", "\(issuer)/users/\(userID)")
        payload.append("iat", issuedAt)
        payload.append("exp", issuedAt + lifetime)
        payload.append("nonce", nonce)
        return try JSONWebToken.signHS256(headerJSON: JSONWriter.serialize(.object(header)), payloadJSON: JSONWriter.serialize(.object(payload)),
                                          key: signingKey(secret: applicationSecret, keyDate: keyDate))
    }
}
