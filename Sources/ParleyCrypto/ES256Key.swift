internal import COpenSSL

/// An ECDSA P-256 key for ES256 (RFC 7518 §3.4): SHA-256, and signatures in the JOSE form,
/// the 32-byte big-endian `r` followed by the 32-byte `s` (not DER).
///
/// Loads an APNs `.p8` file (PKCS#8 PEM) or a `PUBLIC KEY` PEM; a key on another curve or
/// of another type is refused with ``CryptoError/Kind/invalidKey``. Immutable and safe to
/// share between threads.
public struct ES256Key: Sendable {
    let key: EVPKey
    /// Whether this key can sign (it was loaded from or generated as a private key).
    public let isPrivate: Bool

    private init(key: EVPKey, isPrivate: Bool) throws(CryptoError) {
        guard key.baseID == EVP_PKEY_EC else { throw .invalidKey("ES256Key", "not an EC key") }
        var name = [CChar](repeating: 0, count: 64)
        var length = 0
        guard EVP_PKEY_get_group_name(key.pointer, &name, name.count, &length) == 1,
              String(decoding: name.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self) == "prime256v1"
        else { throw .invalidKey("ES256Key", "not a P-256 key") }
        self.key = key
        self.isPrivate = isPrivate
    }

    /// Loads a private key from PEM text (PKCS#8 `PRIVATE KEY`, as in an APNs `.p8` file,
    /// or `EC PRIVATE KEY`).
    public init(privateKeyPEM pem: String) throws(CryptoError) {
        try self.init(key: EVPKey.privateKey(pem: pem), isPrivate: true)
    }

    /// Loads a public key from `PUBLIC KEY` PEM text; such a key only verifies.
    public init(publicKeyPEM pem: String) throws(CryptoError) {
        try self.init(key: EVPKey.publicKey(pem: pem), isPrivate: false)
    }

    /// Generates a fresh P-256 private key.
    public static func generate() throws(CryptoError) -> ES256Key {
        try ES256Key(key: EVPKey.generate(algorithm: "EC", curve: "P-256"), isPrivate: true)
    }

    /// The private key as unencrypted PKCS#8 PEM (the `.p8` form).
    public func privateKeyPEM() throws(CryptoError) -> String {
        guard isPrivate else { throw .invalidKey("ES256Key.privateKeyPEM", "a public key has no private part") }
        return try key.privateKeyPEM()
    }

    /// The public key as `PUBLIC KEY` PEM.
    public func publicKeyPEM() throws(CryptoError) -> String { try key.publicKeyPEM() }

    /// Signs `message` (SHA-256) and returns the 64-byte `r || s` signature.
    public func sign(_ message: some Sequence<UInt8>) throws(CryptoError) -> [UInt8] {
        guard isPrivate else { throw .invalidKey("ES256Key.sign", "a public key cannot sign") }
        let der = try key.signSHA256(Array(message))
        return try Self.joseSignature(fromDER: der)
    }

    /// Checks a 64-byte `r || s` signature over `message`. Any other length is `false`.
    public func verify(_ signature: some Collection<UInt8>, message: some Sequence<UInt8>) throws(CryptoError) -> Bool {
        guard signature.count == 64 else { return false }
        guard let der = Self.derSignature(fromJOSE: Array(signature)) else { return false }
        return try key.verifySHA256(der, message: Array(message))
    }

    private static func joseSignature(fromDER der: [UInt8]) throws(CryptoError) -> [UInt8] {
        let parsed: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor = buffer.baseAddress
            return d2i_ECDSA_SIG(nil, &cursor, buffer.count)
        }
        guard let parsed else { throw .openSSL("d2i_ECDSA_SIG") }
        defer { ECDSA_SIG_free(parsed) }
        var out = [UInt8](repeating: 0, count: 64)
        let ok = out.withUnsafeMutableBufferPointer { buffer in
            BN_bn2binpad(ECDSA_SIG_get0_r(parsed), buffer.baseAddress, 32) == 32
                && BN_bn2binpad(ECDSA_SIG_get0_s(parsed), buffer.baseAddress! + 32, 32) == 32
        }
        guard ok else { throw .openSSL("BN_bn2binpad") }
        return out
    }

    private static func derSignature(fromJOSE jose: [UInt8]) -> [UInt8]? {
        guard let signature = ECDSA_SIG_new() else { return nil }
        defer { ECDSA_SIG_free(signature) }
        guard let r = BN_bin2bn(jose, 32, nil) else { return nil }
        let s: OpaquePointer? = jose.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress! + 32, 32, nil) }
        guard let s else { BN_free(r); return nil }
        // ECDSA_SIG_set0 takes ownership of both numbers on success.
        guard ECDSA_SIG_set0(signature, r, s) == 1 else { BN_free(r); BN_free(s); return nil }
        let length = i2d_ECDSA_SIG(signature, nil)
        guard length > 0 else { return nil }
        var der = [UInt8](repeating: 0, count: Int(length))
        let written = der.withUnsafeMutableBufferPointer { buffer in
            var cursor = buffer.baseAddress
            return i2d_ECDSA_SIG(signature, &cursor)
        }
        return written == length ? der : nil
    }
}
