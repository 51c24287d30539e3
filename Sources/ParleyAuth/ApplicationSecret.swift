import ParleyWireCore
import ParleyCrypto

/// An application secret: 16-64 random bytes, written in standard Base64 with padding
/// (the form Sinch uses, so existing secrets can be imported as they are).
///
/// It signs user token keys (``UserToken/signingKey(secret:keyDate:)``) and authenticates
/// the REST API (HTTP Basic). `description` never shows it, so logging a value that holds
/// one does not leak it; `Codable` writes the Base64 text, for the store and `--json`.
public struct ApplicationSecret: Sendable, Hashable, Codable, CustomStringConvertible {
    /// Bytes in a newly generated secret.
    public static let generatedByteCount = 32
    /// Accepted secret sizes, in bytes.
    public static let byteCountRange: ClosedRange<Int> = 16...64

    /// The secret as Base64 text, as given to backends.
    public let base64: String
    /// The decoded secret: the HMAC key from which token keys are derived.
    public let bytes: [UInt8]

    /// Reads a secret from strict Base64 text; throws `invalidValue` if it is not Base64
    /// or does not decode to 16-64 bytes.
    public init(base64: String) throws(AuthError) {
        let bytes: [UInt8]
        do { bytes = try Base64.decode(base64) } catch { throw AuthError(.invalidValue, field: "secret", error) }
        guard Self.byteCountRange.contains(bytes.count) else {
            throw AuthError(.invalidValue, field: "secret", "a secret of \(bytes.count) bytes; secrets have 16 to 64")
        }
        self.base64 = base64
        self.bytes = bytes
    }

    /// A new secret of 32 random bytes from OpenSSL's DRBG.
    public static func generate() throws(AuthError) -> ApplicationSecret {
        try ApplicationSecret(base64: Base64.encode(randomBytes(generatedByteCount)))
    }

    static func randomBytes(_ count: Int) throws(AuthError) -> [UInt8] {
        do { return try SecureRandom.bytes(count) } catch { throw AuthError(.cryptoFailure, "random bytes: \(error)") }
    }

    public var description: String { "ApplicationSecret(\(bytes.count) bytes, redacted)" }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        try self.init(base64: text)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(base64)
    }
}
