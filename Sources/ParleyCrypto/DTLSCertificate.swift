internal import COpenSSL

/// An ECDSA P-256 key pair with a self-signed X.509 certificate, made fresh at start for
/// DTLS-SRTP (WebRTC authenticates the certificate by its fingerprint in SDP, RFC 8122 and
/// RFC 5763 §5, so no CA is involved).
///
/// Immutable after creation. `@unchecked Sendable` because the OpenSSL key and certificate
/// are never modified after `generate`, and OpenSSL allows concurrent read-only use of
/// `EVP_PKEY` and `X509` (each `SSL_CTX` that uses them takes its own reference).
public final class DTLSCertificate: @unchecked Sendable {
    let key: OpaquePointer
    let certificate: OpaquePointer

    /// The certificate in DER form.
    public let der: [UInt8]
    /// The SHA-256 fingerprint of ``der``, to put into SDP as `a=fingerprint:`.
    public let fingerprint: DTLSFingerprint

    private init(key: OpaquePointer, certificate: OpaquePointer, der: [UInt8]) throws(CryptoError) {
        self.key = key
        self.certificate = certificate
        self.der = der
        self.fingerprint = try DTLSFingerprint(certificateDER: der)
    }

    deinit {
        X509_free(certificate)
        EVP_PKEY_free(key)
    }

    /// Generates a new P-256 key and a self-signed certificate.
    ///
    /// - Parameters:
    ///   - commonName: the subject and issuer CN (peers do not check it).
    ///   - validityDays: validity from one day before now (tolerates clock skew) to
    ///     `validityDays` after now; OpenSSL reads the wall clock for this.
    public static func generate(commonName: String = "parley", validityDays: Int = 30) throws(CryptoError) -> DTLSCertificate {
        ERR_clear_error()
        let key = try generateP256Key()
        guard let x509 = X509_new() else {
            EVP_PKEY_free(key)
            throw .openSSL("X509_new")
        }
        do throws(CryptoError) {
            try fill(x509, key: key, commonName: commonName, validityDays: validityDays)
            let der = try encodeDER(x509)
            return try DTLSCertificate(key: key, certificate: x509, der: der)
        } catch {
            X509_free(x509)
            EVP_PKEY_free(key)
            throw error
        }
    }

    /// `EVP_PKEY_Q_keygen` is variadic and does not import: use the explicit context route.
    private static func generateP256Key() throws(CryptoError) -> OpaquePointer {
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else { throw .openSSL("EVP_PKEY_CTX_new_from_name") }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_keygen_init(context) == 1 else { throw .openSSL("EVP_PKEY_keygen_init") }
        guard EVP_PKEY_CTX_set_group_name(context, "P-256") == 1 else { throw .openSSL("EVP_PKEY_CTX_set_group_name") }
        var key: OpaquePointer?
        guard EVP_PKEY_generate(context, &key) == 1, let key else { throw .openSSL("EVP_PKEY_generate") }
        return key
    }

    private static func fill(_ x509: OpaquePointer, key: OpaquePointer, commonName: String, validityDays: Int) throws(CryptoError) {
        guard X509_set_version(x509, 2) == 1 else { throw .openSSL("X509_set_version") }  // v3
        // RFC 5280 §4.1.2.2: positive, at most 20 octets. 16 random bytes with the top bit
        // cleared.
        var serial = try SecureRandom.bytes(16)
        serial[0] &= 0x7F
        serial[0] |= 0x01  // never zero-length after BN trims leading zeros
        guard let bigNumber = BN_bin2bn(serial, Int32(serial.count), nil) else { throw .openSSL("BN_bin2bn") }
        defer { BN_free(bigNumber) }
        guard BN_to_ASN1_INTEGER(bigNumber, X509_get_serialNumber(x509)) != nil else { throw .openSSL("BN_to_ASN1_INTEGER") }

        let days = max(1, min(validityDays, 3650))
        guard X509_gmtime_adj(X509_getm_notBefore(x509), -86_400) != nil,
              X509_gmtime_adj(X509_getm_notAfter(x509), days * 86_400) != nil
        else { throw .openSSL("X509_gmtime_adj") }

        guard let name = X509_get_subject_name(x509) else { throw .openSSL("X509_get_subject_name") }
        let cn = Array(commonName.utf8.prefix(64))  // RFC 5280 ub-common-name
        guard X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, cn, Int32(cn.count), -1, 0) == 1 else {
            throw .openSSL("X509_NAME_add_entry_by_txt")
        }
        guard X509_set_issuer_name(x509, name) == 1 else { throw .openSSL("X509_set_issuer_name") }
        guard X509_set_pubkey(x509, key) == 1 else { throw .openSSL("X509_set_pubkey") }
        guard X509_sign(x509, key, EVP_sha256()) > 0 else { throw .openSSL("X509_sign") }
    }

    static func encodeDER(_ x509: OpaquePointer) throws(CryptoError) -> [UInt8] {
        let length = i2d_X509(x509, nil)
        guard length > 0 else { throw .openSSL("i2d_X509") }
        var der = [UInt8](repeating: 0, count: Int(length))
        let written = der.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor = buffer.baseAddress
            return i2d_X509(x509, &cursor)
        }
        guard written == length else { throw .openSSL("i2d_X509") }
        return der
    }
}
