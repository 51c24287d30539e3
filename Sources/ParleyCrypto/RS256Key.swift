internal import COpenSSL

/// An RSA key for RS256 (RFC 7518 §3.3): RSASSA-PKCS1-v1_5 with SHA-256, as Google's
/// OAuth token endpoint expects for a service account's JWT assertion.
///
/// Loads the `private_key` PEM of a service-account JSON file (PKCS#8 `PRIVATE KEY`) or
/// `RSA PRIVATE KEY`, or a `PUBLIC KEY` PEM to verify. Keys under 2048 bits are refused.
/// Immutable and safe to share between threads.
public struct RS256Key: Sendable {
    let key: EVPKey
    /// Whether this key can sign.
    public let isPrivate: Bool

    private init(key: EVPKey, isPrivate: Bool) throws(CryptoError) {
        guard key.baseID == EVP_PKEY_RSA else { throw .invalidKey("RS256Key", "not an RSA key") }
        guard EVP_PKEY_get_bits(key.pointer) >= 2048 else { throw .invalidKey("RS256Key", "RSA keys under 2048 bits are refused") }
        self.key = key
        self.isPrivate = isPrivate
    }

    /// Loads a private key from PEM text.
    public init(privateKeyPEM pem: String) throws(CryptoError) {
        try self.init(key: EVPKey.privateKey(pem: pem), isPrivate: true)
    }

    /// Loads a public key from `PUBLIC KEY` PEM text; such a key only verifies.
    public init(publicKeyPEM pem: String) throws(CryptoError) {
        try self.init(key: EVPKey.publicKey(pem: pem), isPrivate: false)
    }

    /// Generates a fresh private key of `bits` bits (2048 by default; slow: tens of ms).
    public static func generate(bits: Int = 2048) throws(CryptoError) -> RS256Key {
        try RS256Key(key: EVPKey.generate(algorithm: "RSA", rsaBits: Int32(clamping: bits)), isPrivate: true)
    }

    /// The private key as unencrypted PKCS#8 PEM.
    public func privateKeyPEM() throws(CryptoError) -> String {
        guard isPrivate else { throw .invalidKey("RS256Key.privateKeyPEM", "a public key has no private part") }
        return try key.privateKeyPEM()
    }

    /// The public key as `PUBLIC KEY` PEM.
    public func publicKeyPEM() throws(CryptoError) -> String { try key.publicKeyPEM() }

    /// Signs `message` and returns the signature (as long as the modulus).
    public func sign(_ message: some Sequence<UInt8>) throws(CryptoError) -> [UInt8] {
        guard isPrivate else { throw .invalidKey("RS256Key.sign", "a public key cannot sign") }
        // PKCS#1 v1.5 is OpenSSL's default padding for RSA signatures.
        return try key.signSHA256(Array(message))
    }

    /// Checks a signature over `message`; a wrong one is `false`.
    public func verify(_ signature: some Collection<UInt8>, message: some Sequence<UInt8>) throws(CryptoError) -> Bool {
        try key.verifySHA256(Array(signature), message: Array(message))
    }
}
