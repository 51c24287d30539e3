internal import COpenSSL

/// An OpenSSL `EVP_PKEY` owned by one Swift object, with the PEM and EVP sign/verify
/// steps that ES256 and RS256 share.
///
/// `@unchecked Sendable`: the key is never modified after loading or generation, and
/// OpenSSL allows concurrent signing and verifying with one read-only `EVP_PKEY` (each
/// operation makes its own `EVP_MD_CTX`).
final class EVPKey: @unchecked Sendable {
    let pointer: OpaquePointer

    init(taking pointer: OpaquePointer) { self.pointer = pointer }
    deinit { EVP_PKEY_free(pointer) }

    /// The OpenSSL key type id (`EVP_PKEY_EC`, `EVP_PKEY_RSA`).
    var baseID: Int32 { EVP_PKEY_get_base_id(pointer) }

    /// Reads the first private key of a PEM text (PKCS#8 `PRIVATE KEY`, or the
    /// traditional `EC PRIVATE KEY` / `RSA PRIVATE KEY` forms). Never asks for a passphrase.
    static func privateKey(pem: String) throws(CryptoError) -> EVPKey {
        ERR_clear_error()
        let key: OpaquePointer? = withMemoryBIO(pem) { bio in PEM_read_bio_PrivateKey(bio, nil, parley_pem_no_passphrase, nil) }
        guard let key else { throw .invalidKey("PEM_read_bio_PrivateKey", "no unencrypted private key in the PEM text") }
        return EVPKey(taking: key)
    }

    /// Reads the first `PUBLIC KEY` (SubjectPublicKeyInfo) of a PEM text.
    static func publicKey(pem: String) throws(CryptoError) -> EVPKey {
        ERR_clear_error()
        let key: OpaquePointer? = withMemoryBIO(pem) { bio in PEM_read_bio_PUBKEY(bio, nil, parley_pem_no_passphrase, nil) }
        guard let key else { throw .invalidKey("PEM_read_bio_PUBKEY", "no public key in the PEM text") }
        return EVPKey(taking: key)
    }

    /// Generates a key with the named algorithm (`"EC"` with a group, or `"RSA"` with bits).
    static func generate(algorithm: String, curve: String? = nil, rsaBits: Int32? = nil) throws(CryptoError) -> EVPKey {
        ERR_clear_error()
        guard let context = EVP_PKEY_CTX_new_from_name(nil, algorithm, nil) else { throw .openSSL("EVP_PKEY_CTX_new_from_name") }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_keygen_init(context) == 1 else { throw .openSSL("EVP_PKEY_keygen_init") }
        if let curve, EVP_PKEY_CTX_set_group_name(context, curve) != 1 { throw .openSSL("EVP_PKEY_CTX_set_group_name") }
        if let rsaBits, EVP_PKEY_CTX_set_rsa_keygen_bits(context, rsaBits) != 1 { throw .openSSL("EVP_PKEY_CTX_set_rsa_keygen_bits") }
        var key: OpaquePointer?
        guard EVP_PKEY_generate(context, &key) == 1, let key else { throw .openSSL("EVP_PKEY_generate") }
        return EVPKey(taking: key)
    }

    /// The private key as PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`), unencrypted.
    func privateKeyPEM() throws(CryptoError) -> String {
        try writePEM("PEM_write_bio_PKCS8PrivateKey") { bio in PEM_write_bio_PKCS8PrivateKey(bio, pointer, nil, nil, 0, nil, nil) }
    }

    /// The public key as SubjectPublicKeyInfo PEM (`-----BEGIN PUBLIC KEY-----`).
    func publicKeyPEM() throws(CryptoError) -> String {
        try writePEM("PEM_write_bio_PUBKEY") { bio in PEM_write_bio_PUBKEY(bio, pointer) }
    }

    /// EVP_DigestSign with SHA-256; for EC keys the result is DER (an `ECDSA-Sig-Value`).
    func signSHA256(_ message: [UInt8]) throws(CryptoError) -> [UInt8] {
        ERR_clear_error()
        guard let context = EVP_MD_CTX_new() else { throw .openSSL("EVP_MD_CTX_new") }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestSignInit(context, nil, EVP_sha256(), nil, pointer) == 1 else { throw .openSSL("EVP_DigestSignInit") }
        var length = 0
        guard message.withUnsafeBufferPointer({ EVP_DigestSign(context, nil, &length, $0.baseAddress, $0.count) }) == 1 else {
            throw .openSSL("EVP_DigestSign")
        }
        var signature = [UInt8](repeating: 0, count: length)
        let ok = signature.withUnsafeMutableBufferPointer { output in
            message.withUnsafeBufferPointer { EVP_DigestSign(context, output.baseAddress, &length, $0.baseAddress, $0.count) }
        }
        guard ok == 1 else { throw .openSSL("EVP_DigestSign") }
        return Array(signature.prefix(length))
    }

    /// EVP_DigestVerify with SHA-256. A wrong signature is `false`, not an error.
    func verifySHA256(_ signature: [UInt8], message: [UInt8]) throws(CryptoError) -> Bool {
        ERR_clear_error()
        guard let context = EVP_MD_CTX_new() else { throw .openSSL("EVP_MD_CTX_new") }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestVerifyInit(context, nil, EVP_sha256(), nil, pointer) == 1 else { throw .openSSL("EVP_DigestVerifyInit") }
        let result = signature.withUnsafeBufferPointer { sig in
            message.withUnsafeBufferPointer { EVP_DigestVerify(context, sig.baseAddress, sig.count, $0.baseAddress, $0.count) }
        }
        // 0 is a mismatch, negative a malformed signature: both mean "not valid".
        ERR_clear_error()
        return result == 1
    }

    private static func withMemoryBIO<R>(_ text: String, _ body: (OpaquePointer) -> R?) -> R? {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty, bytes.count < Int(Int32.max) else { return nil }
        return bytes.withUnsafeBytes { buffer -> R? in
            guard let bio = BIO_new_mem_buf(buffer.baseAddress, Int32(buffer.count)) else { return nil }
            defer { BIO_free(bio) }
            return body(bio)
        }
    }

    private func writePEM(_ function: String, _ write: (OpaquePointer) -> Int32) throws(CryptoError) -> String {
        ERR_clear_error()
        guard let bio = BIO_new(BIO_s_mem()) else { throw .openSSL("BIO_new") }
        defer { BIO_free(bio) }
        guard write(bio) == 1 else { throw .openSSL(function) }
        var data: UnsafeMutablePointer<CChar>?
        let length = parley_bio_get_mem_data(bio, &data)
        guard length > 0, let data else { throw .openSSL(function) }
        return data.withMemoryRebound(to: UInt8.self, capacity: length) {
            String(decoding: UnsafeBufferPointer(start: $0, count: length), as: UTF8.self)
        }
    }
}
