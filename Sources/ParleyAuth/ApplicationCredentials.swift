/// An application's key and secret, with the previous secret while a rotation's grace
/// period lasts. The store keeps these; this type generates, rotates and checks them.
///
/// Rotation: ``rotatingSecret(to:now:gracePeriod:)`` makes the new secret current and
/// keeps the old one accepted, for tokens and Basic auth alike, until `now + gracePeriod`,
/// so backends can switch without a gap. A grace period of 0 (after a leak) drops the old
/// secret at once; tokens it signed are then refused with `token_bad_signature`.
///
/// `Codable` form: `{"key": ..., "secret": ..., "previousSecret": ..., "previousSecretExpiresAt": ...}`
/// (the last two only during a grace period); decoding checks every value.
public struct ApplicationCredentials: Sendable, Hashable, Codable {
    /// The application key: 1-64 bytes of `A-Z a-z 0-9 - _`; new ones are random UUIDs.
    public let key: String
    /// The current secret.
    public private(set) var secret: ApplicationSecret
    /// The secret before the last rotation, still accepted until ``previousSecretExpiresAt``.
    public private(set) var previousSecret: ApplicationSecret?
    /// Unix seconds at which ``previousSecret`` stops being accepted.
    public private(set) var previousSecretExpiresAt: Int64?

    /// Credentials from stored values; throws `invalidValue` for a bad key, or a previous
    /// secret without an expiry (or the reverse).
    public init(key: String, secret: ApplicationSecret, previousSecret: ApplicationSecret? = nil,
                previousSecretExpiresAt: Int64? = nil) throws(AuthError) {
        guard Self.isValidKey(key) else {
            throw AuthError(.invalidValue, field: "key", "application key must be 1-64 bytes of A-Z a-z 0-9 - _")
        }
        guard (previousSecret == nil) == (previousSecretExpiresAt == nil) else {
            throw AuthError(.invalidValue, field: "previousSecret", "a previous secret needs an expiry time, and only then")
        }
        self.key = key
        self.secret = secret
        self.previousSecret = previousSecret
        self.previousSecretExpiresAt = previousSecretExpiresAt
    }

    /// New credentials: a random version 4 UUID as key and a 32-byte random secret.
    public static func generate() throws(AuthError) -> ApplicationCredentials {
        try ApplicationCredentials(key: generateKey(), secret: .generate())
    }

    /// A random version 4 UUID in canonical lower-case form (RFC 9562 §5.4).
    public static func generateKey() throws(AuthError) -> String {
        var bytes = try ApplicationSecret.randomBytes(16)
        bytes[6] = bytes[6] & 0x0F | 0x40
        bytes[8] = bytes[8] & 0x3F | 0x80
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        for (index, byte) in bytes.enumerated() {
            if [4, 6, 8, 10].contains(index) { out.append(UInt8(ascii: "-")) }
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// An application key: 1-64 bytes of `A-Z a-z 0-9 - _` (docs/protocol.md "Field formats").
    public static func isValidKey(_ key: some StringProtocol) -> Bool {
        let bytes = key.utf8
        return (1...64).contains(bytes.count) && bytes.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "_"): return true
            default: return false
            }
        }
    }

    /// These credentials with `newSecret` current and the present secret accepted until
    /// `now + gracePeriod` (seconds; 0 or less drops it at once). A secret still in its
    /// grace period from an earlier rotation is dropped.
    public func rotatingSecret(to newSecret: ApplicationSecret, now: Int64, gracePeriod: Int64) -> ApplicationCredentials {
        var rotated = self
        rotated.secret = newSecret
        if gracePeriod > 0 {
            rotated.previousSecret = secret
            let (end, overflow) = now.addingReportingOverflow(gracePeriod)
            rotated.previousSecretExpiresAt = overflow ? Int64.max : end
        } else {
            rotated.previousSecret = nil
            rotated.previousSecretExpiresAt = nil
        }
        return rotated
    }

    /// The secrets accepted at `now`: the current one, then the previous one while its
    /// grace period lasts (`now < previousSecretExpiresAt`).
    public func acceptedSecrets(at now: Int64) -> [ApplicationSecret] {
        if let previousSecret, let previousSecretExpiresAt, now < previousSecretExpiresAt {
            return [secret, previousSecret]
        }
        return [secret]
    }

    /// Checks HTTP Basic credentials against these: the key must be this application's and
    /// the secret one of ``acceptedSecrets(at:)``, compared in constant time (as SHA-256
    /// digests, so the time does not depend on the length either). Throws `badCredentials`.
    public func authenticate(_ credentials: BasicCredentials, now: Int64) throws(AuthError) {
        guard credentials.applicationKey.utf8.elementsEqual(key.utf8) else {
            throw AuthError(.badCredentials, field: "authorization", "the credentials are for another application")
        }
        let presented = try AuthCrypto.sha256(Array(credentials.secret.utf8))
        var matched = false
        for accepted in acceptedSecrets(at: now) {
            // No early exit: both secrets are always compared.
            if AuthCrypto.constantTimeEqual(try AuthCrypto.sha256(Array(accepted.base64.utf8)), presented) { matched = true }
        }
        guard matched else {
            throw AuthError(.badCredentials, field: "authorization", "wrong application secret")
        }
    }

    private enum CodingKeys: String, CodingKey { case key, secret, previousSecret, previousSecretExpiresAt }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        try self.init(
            key: container.decode(String.self, forKey: .key),
            secret: container.decode(ApplicationSecret.self, forKey: .secret),
            previousSecret: container.decodeIfPresent(ApplicationSecret.self, forKey: .previousSecret),
            previousSecretExpiresAt: container.decodeIfPresent(Int64.self, forKey: .previousSecretExpiresAt)
        )
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(key, forKey: .key)
        try container.encode(secret, forKey: .secret)
        try container.encodeIfPresent(previousSecret, forKey: .previousSecret)
        try container.encodeIfPresent(previousSecretExpiresAt, forKey: .previousSecretExpiresAt)
    }
}
