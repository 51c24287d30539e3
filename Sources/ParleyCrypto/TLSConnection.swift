internal import COpenSSL

/// The life of a ``TLSConnection``.
public enum TLSConnectionState: Sendable, Hashable {
    case handshaking
    case connected
    /// The peer sent close_notify, or ``TLSConnection/close()`` was called.
    case closed
    case failed(CryptoError)
}

/// What one call into a ``TLSConnection`` produced.
public struct TLSOutput: Sendable, Hashable {
    /// Bytes to send to the peer over the transport, in order.
    public var send: [UInt8] = []
    /// Application bytes from the peer.
    public var received: [UInt8] = []
    /// True when the handshake (and the certificate check) finished during this call.
    public var didConnect = false
    /// True when the peer closed with close_notify during this call.
    public var didClose = false
    /// Set when the connection failed during this call; send `send` (it may hold an
    /// alert), then close the transport.
    public var error: CryptoError?

    public init() {}
}

/// One TLS 1.2/1.3 connection over memory BIOs, driven sans-I/O: bytes from the network
/// go in through ``receive(_:)``, bytes for the network come out in ``TLSOutput/send``,
/// and application bytes go through ``write(_:)`` and ``TLSOutput/received``. The same
/// shape as `DTLSConnection`, for a byte stream instead of datagrams; no clock is needed
/// (TLS over TCP has no retransmission, timeouts belong to the caller).
///
/// A client verifies the server's certificate against its context's trust store and
/// against `serverName`: a DNS name is checked with `SSL_set1_host` and sent as SNI, an IP
/// address is checked against the certificate's IP subject alternative names. A failed
/// check ends the handshake with ``CryptoError/Kind/certificateRejected`` naming
/// OpenSSL's reason (e.g. "certificate has expired", "Hostname mismatch").
///
/// Not thread-safe: use one connection from one thread at a time.
public final class TLSConnection {
    /// Where the connection is.
    public private(set) var state: TLSConnectionState = .handshaking
    /// The name or address the client verifies (nil on the server side).
    public let serverName: String?
    /// The shared context (keeps the `SSL_CTX` alive).
    public let context: TLSContext

    private let ssl: OpaquePointer
    private let readBIO: OpaquePointer
    private let writeBIO: OpaquePointer
    private var buffer = [UInt8](repeating: 0, count: 16 * 1024)

    /// A connection from `context`. A client needs `serverName` (host name or IP address
    /// literal, without brackets): there is no TLS without knowing whom to verify.
    public init(context: TLSContext, serverName: String? = nil) throws(CryptoError) {
        self.context = context
        ERR_clear_error()
        if context.role == .client {
            guard let serverName, !serverName.isEmpty else {
                throw .invalidState("TLSConnection.init", "a client connection needs the server's name or address to verify")
            }
            self.serverName = serverName
        } else {
            self.serverName = nil
        }
        guard let ssl = SSL_new(context.context) else { throw .openSSL("SSL_new") }
        guard let readBIO = BIO_new(BIO_s_mem()), let writeBIO = BIO_new(BIO_s_mem()) else {
            SSL_free(ssl)
            throw .openSSL("BIO_new")
        }
        // An empty memory BIO means "wait for more bytes", not end of stream.
        _ = parley_bio_set_mem_eof_return(readBIO, -1)
        _ = parley_bio_set_mem_eof_return(writeBIO, -1)
        SSL_set_bio(ssl, readBIO, writeBIO)  // the SSL now owns both BIOs
        self.ssl = ssl
        self.readBIO = readBIO
        self.writeBIO = writeBIO
        switch context.role {
        case .server:
            SSL_set_accept_state(ssl)
        case .client:
            SSL_set_connect_state(ssl)
            do throws(CryptoError) {
                try Self.setExpectedPeer(ssl, serverName ?? "")
            } catch {
                SSL_free(ssl)
                throw error
            }
        }
    }

    deinit { SSL_free(ssl) }

    private static func setExpectedPeer(_ ssl: OpaquePointer, _ name: String) throws(CryptoError) {
        if isIPAddressLiteral(name) {
            // RFC 6066 §3: SNI carries host names only, never address literals.
            guard let param = SSL_get0_param(ssl), X509_VERIFY_PARAM_set1_ip_asc(param, name) == 1 else {
                throw .openSSL("X509_VERIFY_PARAM_set1_ip_asc", detail: "\(name) is not a valid IP address")
            }
        } else {
            guard SSL_set1_host(ssl, name) == 1 else { throw .openSSL("SSL_set1_host", detail: "cannot verify host \(name)") }
            guard parley_ssl_set_tlsext_host_name(ssl, name) == 1 else {
                throw .openSSL("SSL_set_tlsext_host_name", detail: "cannot send SNI \(name)")
            }
        }
    }

    /// True for an IPv4 dotted quad or anything with a colon (IPv6); host names have neither.
    static func isIPAddressLiteral(_ name: String) -> Bool {
        if name.contains(":") { return true }
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts.allSatisfy { !$0.isEmpty && $0.count <= 3 && $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }
    }

    /// The negotiated protocol ("TLSv1.3", "TLSv1.2") once connected.
    public var protocolVersion: String? {
        guard state == .connected, let name = SSL_get_version(ssl) else { return nil }
        return String(cString: name)
    }

    /// Starts the handshake: a client's ClientHello comes out in ``TLSOutput/send``; a
    /// server produces nothing until the client speaks.
    public func start() -> TLSOutput {
        var output = TLSOutput()
        advance(&output)
        return output
    }

    /// Feeds bytes from the network. Never traps: garbage fails the connection with an
    /// error (and usually an alert in ``TLSOutput/send``).
    public func receive(_ bytes: UnsafeRawBufferPointer) -> TLSOutput {
        var output = TLSOutput()
        switch state {
        case .handshaking, .connected: break
        case .closed, .failed: return output
        }
        var offset = 0
        // Bounded: each turn queues up to Int32.max bytes.
        while offset < bytes.count {
            let count = min(bytes.count - offset, Int(Int32.max))
            let written = BIO_write(readBIO, bytes.baseAddress! + offset, Int32(count))
            guard written > 0 else {
                fail(.openSSL("BIO_write", detail: "could not queue received bytes"), &output)
                return output
            }
            offset += Int(written)
        }
        advance(&output)
        return output
    }

    /// Feeds bytes from the network.
    public func receive(_ bytes: [UInt8]) -> TLSOutput {
        bytes.withUnsafeBytes { receive($0) }
    }

    /// The transport ended. During the handshake that is a failure (the peer gave up, or
    /// is not speaking TLS); after it, a close without close_notify (RFC 8446 §6.1:
    /// possibly truncated data), reported as closed.
    public func receiveEndOfStream() -> TLSOutput {
        var output = TLSOutput()
        switch state {
        case .handshaking:
            fail(.openSSL("TLS handshake", detail: "the peer closed the connection during the handshake"), &output)
        case .connected:
            state = .closed
            output.didClose = true
        case .closed, .failed:
            break
        }
        return output
    }

    /// Encrypts application bytes (connected state only); the records come out in
    /// ``TLSOutput/send``.
    public func write(_ bytes: [UInt8]) -> TLSOutput {
        var output = TLSOutput()
        guard state == .connected else {
            output.error = .invalidState("TLSConnection.write", "not connected (state \(state))")
            return output
        }
        var offset = 0
        while offset < bytes.count {
            let count = min(bytes.count - offset, 16 * 1024)
            ERR_clear_error()
            let written = bytes.withUnsafeBytes { SSL_write(ssl, $0.baseAddress! + offset, Int32(count)) }
            guard written > 0 else {
                fail(.openSSL("SSL_write"), &output)
                return output
            }
            offset += Int(written)
        }
        drainOutput(&output)
        return output
    }

    /// Sends close_notify (RFC 8446 §6.1) and moves to the closed state.
    public func close() -> TLSOutput {
        var output = TLSOutput()
        switch state {
        case .handshaking, .connected:
            ERR_clear_error()
            _ = SSL_shutdown(ssl)
            state = .closed
            drainOutput(&output)
        case .closed, .failed:
            break
        }
        return output
    }

    // MARK: Driving OpenSSL

    private func advance(_ output: inout TLSOutput) {
        if state == .handshaking {
            ERR_clear_error()
            let result = SSL_do_handshake(ssl)
            if result == 1 {
                state = .connected
                output.didConnect = true
            } else {
                switch SSL_get_error(ssl, result) {
                case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
                    drainOutput(&output)
                    return
                case SSL_ERROR_ZERO_RETURN:
                    state = .closed
                    output.didClose = true
                    drainOutput(&output)
                    return
                default:
                    fail(handshakeError(), &output)
                    return
                }
            }
        }
        readApplicationData(&output)
    }

    /// The reason a handshake failed: the certificate check when that is what failed,
    /// else OpenSSL's error queue (e.g. "wrong version number" for plain HTTP).
    private func handshakeError() -> CryptoError {
        if context.role == .client {
            let result = SSL_get_verify_result(ssl)
            if result != Int(X509_V_OK) {
                let reason = X509_verify_cert_error_string(result).map { String(cString: $0) } ?? "error \(result)"
                return .certificateRejected("server certificate for \(serverName ?? "?") rejected: \(reason)")
            }
        }
        return .openSSL("SSL_do_handshake", detail: "TLS handshake failed")
    }

    private func readApplicationData(_ output: inout TLSOutput) {
        // Bounded: each turn consumes a record of the bytes just queued.
        for _ in 0..<4096 {
            guard state == .connected else { break }
            ERR_clear_error()
            let count = buffer.withUnsafeMutableBytes { SSL_read(ssl, $0.baseAddress, Int32($0.count)) }
            if count > 0 {
                output.received += buffer.prefix(Int(count))
                continue
            }
            switch SSL_get_error(ssl, count) {
            case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
                break
            case SSL_ERROR_ZERO_RETURN:
                // Answer close_notify with close_notify.
                _ = SSL_shutdown(ssl)
                state = .closed
                output.didClose = true
            default:
                fail(.openSSL("SSL_read", detail: "TLS record error"), &output)
                return
            }
            break
        }
        drainOutput(&output)
    }

    private func fail(_ error: CryptoError, _ output: inout TLSOutput) {
        state = .failed(error)
        output.error = error
        // An alert may be waiting: the peer deserves to know why.
        drainOutput(&output)
    }

    private func drainOutput(_ output: inout TLSOutput) {
        // Bounded: each turn takes up to one buffer of what OpenSSL wrote.
        for _ in 0..<1_000_000 {
            let pending = Int(parley_bio_pending(writeBIO))
            guard pending > 0 else { return }
            let read = buffer.withUnsafeMutableBytes { BIO_read(writeBIO, $0.baseAddress, Int32(min($0.count, pending))) }
            guard read > 0 else { return }
            output.send += buffer.prefix(Int(read))
        }
    }
}
