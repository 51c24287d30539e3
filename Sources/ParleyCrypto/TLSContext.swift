internal import COpenSSL

/// The shared, read-only half of TLS: one `SSL_CTX` holding either a server's certificate
/// chain and key or a client's trust store, created once and used by every
/// ``TLSConnection`` made from it.
///
/// `@unchecked Sendable`: the `SSL_CTX` is configured completely in the initializer and
/// never changed afterwards; OpenSSL allows creating connections from one context on
/// several threads at once.
public final class TLSContext: @unchecked Sendable {
    /// Which side of the handshake connections from this context take.
    public enum Role: Sendable, Hashable {
        case server
        case client
    }

    /// The side connections from this context take.
    public let role: Role
    let context: OpaquePointer

    private init(role: Role, context: OpaquePointer) {
        self.role = role
        self.context = context
    }

    deinit { SSL_CTX_free(context) }

    /// A server context: the certificate chain (leaf first, then intermediates) and the
    /// private key, both PEM files. An encrypted key fails instead of prompting.
    public static func server(certificateChainFile: String, privateKeyFile: String) throws(CryptoError) -> TLSContext {
        let context = try makeContext(method: TLS_server_method())
        do throws(CryptoError) {
            parley_ssl_ctx_set_no_passphrase(context)
            guard SSL_CTX_use_certificate_chain_file(context, certificateChainFile) == 1 else {
                throw .openSSL("SSL_CTX_use_certificate_chain_file", detail: "cannot use certificate chain \(certificateChainFile)")
            }
            guard SSL_CTX_use_PrivateKey_file(context, privateKeyFile, SSL_FILETYPE_PEM) == 1 else {
                throw .openSSL("SSL_CTX_use_PrivateKey_file", detail: "cannot use private key \(privateKeyFile) with the certificate in \(certificateChainFile)")
            }
            guard SSL_CTX_check_private_key(context) == 1 else {
                throw .openSSL("SSL_CTX_check_private_key", detail: "\(privateKeyFile) does not belong to the certificate in \(certificateChainFile)")
            }
        } catch {
            SSL_CTX_free(context)
            throw error
        }
        return TLSContext(role: .server, context: context)
    }

    /// A client context that verifies servers against `caFile` (PEM, one or more
    /// certificates) or, when nil, the system's trust store (`/etc/ssl/certs` on Debian).
    public static func client(caFile: String? = nil) throws(CryptoError) -> TLSContext {
        let context = try makeContext(method: TLS_client_method())
        do throws(CryptoError) {
            if let caFile {
                guard SSL_CTX_load_verify_locations(context, caFile, nil) == 1 else {
                    throw .openSSL("SSL_CTX_load_verify_locations", detail: "cannot load CA certificates from \(caFile)")
                }
            } else {
                guard SSL_CTX_set_default_verify_paths(context) == 1 else {
                    throw .openSSL("SSL_CTX_set_default_verify_paths", detail: "cannot load the system trust store")
                }
            }
            parley_ssl_ctx_verify_peer(context)
        } catch {
            SSL_CTX_free(context)
            throw error
        }
        return TLSContext(role: .client, context: context)
    }

    private static func makeContext(method: OpaquePointer?) throws(CryptoError) -> OpaquePointer {
        ERR_clear_error()
        guard let context = SSL_CTX_new(method) else { throw .openSSL("SSL_CTX_new") }
        guard parley_ssl_ctx_set_min_proto_version(context, TLS1_2_VERSION) == 1 else {
            SSL_CTX_free(context)
            throw .openSSL("SSL_CTX_set_min_proto_version")
        }
        // Renegotiation only adds attack surface to a signaling connection.
        _ = parley_ssl_ctx_set_option_no_renegotiation(context)
        return context
    }
}
