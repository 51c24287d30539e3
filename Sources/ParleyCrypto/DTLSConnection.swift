internal import COpenSSL

/// What a ``DTLSConnection`` asks its owner to do, in order.
public enum DTLSAction: Sendable, Hashable {
    /// Send these bytes to the peer as one UDP datagram.
    case send([UInt8])
    /// The handshake finished, the peer's fingerprint matched and SRTP keys were exported.
    case connected(SRTPKeyingMaterial)
    /// Application data from the peer (DTLS records of content type 23).
    case received([UInt8])
    /// The peer closed the connection with close_notify.
    case closed
    /// The connection failed; no further datagrams will be produced.
    case failed(CryptoError)
}

/// The life of a ``DTLSConnection``.
public enum DTLSConnectionState: Sendable, Hashable {
    case new
    case handshaking
    case connected
    case failed(CryptoError)
    case closed
}

/// Why an incoming datagram was dropped before (or instead of) reaching OpenSSL.
public enum DTLSDropReason: String, Sendable, Hashable, CaseIterable, Encodable {
    /// A zero-length datagram.
    case empty
    /// The first byte is outside 20...63, so it is not DTLS (RFC 7983 §7: STUN, RTP/RTCP
    /// and others share the port and are demultiplexed by that byte).
    case notDTLS
    /// Shorter than one 13-byte DTLS record header (RFC 6347 §4.1).
    case shortRecordHeader
    /// Arrived before `start(now:)`.
    case notStarted
    /// Arrived after the connection closed or failed.
    case afterClose
}

/// A DTLS 1.2 endpoint (RFC 6347) for DTLS-SRTP (RFC 5764), driven sans-I/O: OpenSSL sees
/// only memory BIOs, datagrams go in through ``receive(datagram:now:)`` and come out as
/// ``DTLSAction/send(_:)``, and time is whatever the caller passes as `now`.
///
/// Retransmission follows the caller's clock: ``nextDeadline`` says when to call
/// ``handleTimeout(now:)``, which retransmits the last flight with exponential backoff
/// (RFC 6347 §4.2.4) and gives up after the configured total. OpenSSL's own timer, which
/// reads the real clock, is set an hour ahead so it never fires by itself (see
/// docs/media-dtls.md).
///
/// One class owns the `SSL_CTX`, the `SSL` and its two BIOs and frees them in `deinit`.
/// Not thread-safe: use one connection from one task or thread at a time.
public final class DTLSConnection {
    /// How a connection behaves.
    public struct Configuration: Sendable {
        /// This side's role (from SDP `a=setup`, see ``DTLSRole/init(localSetup:)``).
        public var role: DTLSRole
        /// This side's certificate and key.
        public var certificate: DTLSCertificate
        /// The peer's fingerprint from its SDP `a=fingerprint`.
        public var expectedPeerFingerprint: DTLSFingerprint
        /// SRTP profiles offered (client) or accepted (server), most preferred first. Empty
        /// means "do not send use_srtp", which only makes sense for testing peers that lack it:
        /// the connection then fails after the handshake.
        public var srtpProfiles: [SRTPProtectionProfile] = [.aeadAES128GCM, .aes128CMHMACSHA1_80]
        /// Largest datagram produced, in bytes (the DTLS "link MTU" with no IP/UDP overhead).
        public var mtu: Int = 1200
        /// First retransmission timeout (RFC 6347 §4.2.4.1 recommends 1 s).
        public var initialRetransmitTimeout: Duration = .seconds(1)
        /// Cap for the doubling timeout (RFC 6347 §4.2.4.1: at least 60 s allowed).
        public var maximumRetransmitTimeout: Duration = .seconds(60)
        /// Give up when the handshake has not completed this long after `start(now:)`.
        public var handshakeTimeout: Duration = .seconds(30)

        public init(role: DTLSRole, certificate: DTLSCertificate, expectedPeerFingerprint: DTLSFingerprint) {
            self.role = role
            self.certificate = certificate
            self.expectedPeerFingerprint = expectedPeerFingerprint
        }
    }

    /// The configuration given at creation.
    public let configuration: Configuration
    /// Where the connection is.
    public private(set) var state: DTLSConnectionState = .new
    /// The negotiated keys once connected.
    public private(set) var keyingMaterial: SRTPKeyingMaterial?
    /// The peer certificate's fingerprint once the handshake finished (also on mismatch).
    public private(set) var peerFingerprint: DTLSFingerprint?
    /// Datagrams dropped before reaching OpenSSL, by reason. (Records OpenSSL itself
    /// discards, e.g. replays or bad MACs, are silent per RFC 6347 §4.1.2.7.)
    public private(set) var droppedDatagrams: [DTLSDropReason: Int] = [:]
    /// How many times the last flight was retransmitted on the caller's clock.
    public private(set) var retransmissions = 0
    /// True when the linked OpenSSL lets the caller's clock drive retransmission exactly
    /// (3.0 and 3.1); otherwise OpenSSL retransmits on its own wall-clock timer.
    public let callerDrivenTimer: Bool

    private let context: OpaquePointer
    private let ssl: OpaquePointer
    private let readBIO: OpaquePointer
    private let writeBIO: OpaquePointer
    /// Where the read BIO's callback stores OpenSSL's deadline pointer (see shim.h).
    private let timerField: UnsafeMutablePointer<UnsafeMutableRawPointer?>

    private var startedAt: ContinuousClock.Instant?
    private var retransmitDeadline: ContinuousClock.Instant?
    private var retransmitTimeout: Duration = .seconds(1)

    /// Creates the OpenSSL objects; nothing is sent until ``start(now:)``.
    public init(configuration: Configuration) throws(CryptoError) {
        self.configuration = configuration
        ERR_clear_error()
        guard let context = SSL_CTX_new(DTLS_method()) else { throw .openSSL("SSL_CTX_new") }
        do throws(CryptoError) {
            try Self.configure(context, configuration)
        } catch {
            SSL_CTX_free(context)
            throw error
        }
        guard let ssl = SSL_new(context) else {
            SSL_CTX_free(context)
            throw .openSSL("SSL_new")
        }
        guard let readBIO = BIO_new(BIO_s_mem()), let writeBIO = BIO_new(BIO_s_mem()) else {
            SSL_free(ssl)
            SSL_CTX_free(context)
            throw .openSSL("BIO_new")
        }
        _ = parley_bio_set_mem_eof_return(readBIO, -1)
        _ = parley_bio_set_mem_eof_return(writeBIO, -1)
        timerField = .allocate(capacity: 1)
        timerField.initialize(to: nil)
        callerDrivenTimer = parley_dtls_timer_field_is_live() != 0
        if callerDrivenTimer {
            parley_dtls_watch_timer_field(readBIO, timerField)
            parley_dtls_use_far_future_timer(ssl)
        }
        SSL_set_bio(ssl, readBIO, writeBIO)  // the SSL now owns both BIOs
        self.context = context
        self.ssl = ssl
        self.readBIO = readBIO
        self.writeBIO = writeBIO
        _ = parley_ssl_set_option_no_query_mtu(ssl)
        _ = parley_dtls_set_link_mtu(ssl, max(256, configuration.mtu))
        retransmitTimeout = configuration.initialRetransmitTimeout
        switch configuration.role {
        case .client: SSL_set_connect_state(ssl)
        case .server: SSL_set_accept_state(ssl)
        }
    }

    deinit {
        SSL_free(ssl)  // frees the BIOs; may still call the BIO callback, so the slot goes last
        SSL_CTX_free(context)
        timerField.deinitialize(count: 1)
        timerField.deallocate()
    }

    private static func configure(_ context: OpaquePointer, _ configuration: Configuration) throws(CryptoError) {
        guard parley_ssl_ctx_set_min_proto_version(context, DTLS1_2_VERSION) == 1,
              parley_ssl_ctx_set_max_proto_version(context, DTLS1_2_VERSION) == 1
        else { throw .openSSL("SSL_CTX_set_min/max_proto_version") }
        // ECDHE with AEAD only; ECDSA first (our certificate), RSA for peers whose
        // certificates are RSA.
        let ciphers = "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:"
            + "ECDHE-RSA-AES128-GCM-SHA256:ECDHE-RSA-AES256-GCM-SHA384:ECDHE-RSA-CHACHA20-POLY1305"
        guard SSL_CTX_set_cipher_list(context, ciphers) == 1 else { throw .openSSL("SSL_CTX_set_cipher_list") }
        _ = parley_ssl_ctx_set_option_no_ticket(context)
        guard SSL_CTX_use_certificate(context, configuration.certificate.certificate) == 1 else {
            throw .openSSL("SSL_CTX_use_certificate")
        }
        guard SSL_CTX_use_PrivateKey(context, configuration.certificate.key) == 1 else { throw .openSSL("SSL_CTX_use_PrivateKey") }
        // Self-signed peers are accepted at the TLS level; the fingerprint from SDP is what
        // authenticates them (RFC 5763 §5), checked once the handshake is done.
        parley_ssl_ctx_verify_peer_accepting_self_signed(context)
        if !configuration.srtpProfiles.isEmpty {
            let list = configuration.srtpProfiles.map(\.openSSLName).joined(separator: ":")
            // Unlike most of OpenSSL this returns 0 on success.
            guard SSL_CTX_set_tlsext_use_srtp(context, list) == 0 else { throw .openSSL("SSL_CTX_set_tlsext_use_srtp") }
        }
    }

    /// When the caller should call ``handleTimeout(now:)`` next; nil when no timer runs.
    public var nextDeadline: ContinuousClock.Instant? {
        guard state == .handshaking, let startedAt else { return nil }
        let giveUp = startedAt + configuration.handshakeTimeout
        guard let retransmitDeadline else { return giveUp }
        return min(retransmitDeadline, giveUp)
    }

    /// Starts the handshake: a client sends its ClientHello flight, a server waits.
    public func start(now: ContinuousClock.Instant) -> [DTLSAction] {
        guard state == .new else {
            return [.failed(.invalidState("DTLSConnection.start", "already started (state \(state))"))]
        }
        state = .handshaking
        startedAt = now
        return advance(now: now)
    }

    /// Feeds one received datagram. Never traps: anything that is not DTLS is dropped and
    /// counted in ``droppedDatagrams``.
    public func receive(datagram: [UInt8], now: ContinuousClock.Instant) -> [DTLSAction] {
        switch state {
        case .new: return drop(.notStarted)
        case .failed, .closed: return drop(.afterClose)
        case .handshaking, .connected: break
        }
        guard let first = datagram.first else { return drop(.empty) }
        // RFC 7983 §7: 20...63 is DTLS.
        guard (20...63).contains(first) else { return drop(.notDTLS) }
        guard datagram.count >= 13 else { return drop(.shortRecordHeader) }
        guard datagram.count <= Int(Int32.max) else { return drop(.notDTLS) }
        let written = datagram.withUnsafeBytes { BIO_write(readBIO, $0.baseAddress, Int32($0.count)) }
        guard written == Int32(datagram.count) else {
            return fail(.openSSL("BIO_write", detail: "could not queue a received datagram"))
        }
        return advance(now: now)
    }

    /// Retransmits the last flight if ``nextDeadline`` has passed, or gives up when the
    /// handshake has run longer than ``Configuration/handshakeTimeout``.
    public func handleTimeout(now: ContinuousClock.Instant) -> [DTLSAction] {
        guard state == .handshaking, let startedAt else { return [] }
        if now >= startedAt + configuration.handshakeTimeout {
            return fail(.handshakeTimeout(
                "no handshake with the peer within \(configuration.handshakeTimeout) "
                    + "(\(retransmissions) retransmission\(retransmissions == 1 ? "" : "s") of the last flight)"))
        }
        guard let deadline = retransmitDeadline, now >= deadline else { return [] }
        if callerDrivenTimer { _ = parley_dtls_expire_timer_field(timerField.pointee) }
        ERR_clear_error()
        let result = parley_dtls_handle_timeout(ssl)
        if result < 0 {
            // OpenSSL stops after DTLS1_TMO_ALERT_COUNT (12) retransmissions of one flight.
            return fail(.openSSL("DTLSv1_handle_timeout", detail: "retransmission of the last flight failed"))
        }
        if result > 0 { retransmissions += 1 }
        retransmitTimeout = min(retransmitTimeout * 2, configuration.maximumRetransmitTimeout)
        retransmitDeadline = now + retransmitTimeout
        return outgoingDatagrams()
    }

    /// Sends application data (connected state only).
    public func send(applicationData: [UInt8]) -> [DTLSAction] {
        guard state == .connected else {
            return [.failed(.invalidState("DTLSConnection.send", "not connected (state \(state))"))]
        }
        guard !applicationData.isEmpty, applicationData.count <= configuration.mtu else {
            return [.failed(.invalidState("DTLSConnection.send", "application data must be 1...\(configuration.mtu) bytes"))]
        }
        ERR_clear_error()
        let written = applicationData.withUnsafeBytes { SSL_write(ssl, $0.baseAddress, Int32($0.count)) }
        guard written > 0 else { return fail(.openSSL("SSL_write")) }
        return outgoingDatagrams()
    }

    /// Sends close_notify and moves to the closed state.
    public func close() -> [DTLSAction] {
        switch state {
        case .handshaking, .connected:
            ERR_clear_error()
            _ = SSL_shutdown(ssl)
            state = .closed
            return outgoingDatagrams()
        case .new:
            state = .closed
            return []
        case .failed, .closed:
            return []
        }
    }

    // MARK: Driving OpenSSL

    private func advance(now: ContinuousClock.Instant) -> [DTLSAction] {
        var actions: [DTLSAction] = []
        if state == .handshaking {
            ERR_clear_error()
            let result = SSL_do_handshake(ssl)
            if result == 1 {
                actions += outgoingDatagrams()
                actions += finishHandshake()
                if state != .connected { return actions }
            } else {
                let error = SSL_get_error(ssl, result)
                switch error {
                case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
                    let output = outgoingDatagrams()
                    if !output.isEmpty {
                        // A new flight: restart the backoff (RFC 6347 §4.2.4).
                        retransmitTimeout = configuration.initialRetransmitTimeout
                        retransmitDeadline = now + retransmitTimeout
                    }
                    return output
                case SSL_ERROR_ZERO_RETURN:
                    state = .closed
                    return outgoingDatagrams() + [.closed]
                default:
                    return outgoingDatagrams() + fail(.openSSL("SSL_do_handshake"))
                }
            }
        }
        actions += readApplicationData()
        return actions
    }

    private func readApplicationData() -> [DTLSAction] {
        var actions: [DTLSAction] = []
        var buffer = [UInt8](repeating: 0, count: 2048)
        // Bounded: each datagram holds at most a handful of records.
        for _ in 0..<64 {
            guard state == .connected else { break }
            ERR_clear_error()
            let count = buffer.withUnsafeMutableBytes { SSL_read(ssl, $0.baseAddress, Int32($0.count)) }
            if count > 0 {
                actions.append(.received(Array(buffer.prefix(Int(count)))))
                continue
            }
            let error = SSL_get_error(ssl, count)
            switch error {
            case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
                return actions + outgoingDatagrams()
            case SSL_ERROR_ZERO_RETURN:
                // RFC 5246 §7.2.1: answer close_notify with close_notify.
                _ = SSL_shutdown(ssl)
                state = .closed
                return actions + outgoingDatagrams() + [.closed]
            default:
                return actions + outgoingDatagrams() + fail(.openSSL("SSL_read"))
            }
        }
        return actions + outgoingDatagrams()
    }

    private func finishHandshake() -> [DTLSAction] {
        retransmitDeadline = nil
        guard let peer = SSL_get1_peer_certificate(ssl) else {
            return failAfterHandshake(.openSSL("SSL_get1_peer_certificate", detail: "peer sent no certificate"))
        }
        defer { X509_free(peer) }
        let fingerprint: DTLSFingerprint
        do throws(CryptoError) {
            fingerprint = try DTLSFingerprint(certificateDER: DTLSCertificate.encodeDER(peer))
        } catch {
            return failAfterHandshake(error)
        }
        peerFingerprint = fingerprint
        let expected = configuration.expectedPeerFingerprint
        guard Digest.constantTimeEqual(fingerprint.bytes, expected.bytes) else {
            return failAfterHandshake(.fingerprintMismatch(
                "peer certificate fingerprint sha-256 \(fingerprint.abbreviated) does not match "
                    + "sha-256 \(expected.abbreviated) from SDP"))
        }
        guard let selected = SSL_get_selected_srtp_profile(ssl) else {
            return failAfterHandshake(.srtpNotNegotiated(
                configuration.srtpProfiles.isEmpty
                    ? "this side did not offer use_srtp"
                    : "peer did not negotiate use_srtp (offered \(configuration.srtpProfiles.map(\.openSSLName).joined(separator: ":")))"))
        }
        guard let profile = SRTPProtectionProfile(profileID: selected.pointee.id) else {
            return failAfterHandshake(.srtpNotNegotiated("peer selected unknown SRTP profile \(selected.pointee.id)"))
        }
        // RFC 5764 §4.2: exporter label "EXTRACTOR-dtls_srtp", no context.
        let label = "EXTRACTOR-dtls_srtp"
        var exported = [UInt8](repeating: 0, count: SRTPKeyingMaterial.exportLength(for: profile))
        let ok = exported.withUnsafeMutableBufferPointer { out in
            SSL_export_keying_material(ssl, out.baseAddress, out.count, label, label.utf8.count, nil, 0, 0)
        }
        guard ok == 1, let keys = SRTPKeyingMaterial(profile: profile, localRole: configuration.role, exported: exported) else {
            return failAfterHandshake(.openSSL("SSL_export_keying_material"))
        }
        keyingMaterial = keys
        state = .connected
        return [.connected(keys)]
    }

    /// Fails and tells the peer with close_notify, since its handshake may have completed.
    private func failAfterHandshake(_ error: CryptoError) -> [DTLSAction] {
        ERR_clear_error()
        _ = SSL_shutdown(ssl)
        return outgoingDatagrams() + fail(error)
    }

    private func fail(_ error: CryptoError) -> [DTLSAction] {
        state = .failed(error)
        retransmitDeadline = nil
        return [.failed(error)]
    }

    private func drop(_ reason: DTLSDropReason) -> [DTLSAction] {
        droppedDatagrams[reason, default: 0] += 1
        return []
    }

    /// Drains the write BIO. OpenSSL writes each record separately but a memory BIO keeps
    /// no boundaries, so the records are found again from their headers and packed into
    /// datagrams of at most `mtu` bytes (RFC 6347 §4.1.1 allows several per datagram).
    private func outgoingDatagrams() -> [DTLSAction] {
        let pending = Int(parley_bio_pending(writeBIO))
        guard pending > 0 else { return [] }
        var bytes = [UInt8](repeating: 0, count: pending)
        let read = bytes.withUnsafeMutableBytes { BIO_read(writeBIO, $0.baseAddress, Int32($0.count)) }
        guard read > 0 else { return [] }
        bytes.removeLast(pending - Int(read))
        var datagrams: [DTLSAction] = []
        var current: [UInt8] = []
        var offset = 0
        while offset < bytes.count {
            //  0      1-2      3-4     5-10       11-12
            // +----+-------+-------+----------+--------+----------
            // |type|version| epoch | sequence | length | fragment…
            // +----+-------+-------+----------+--------+----------
            var end = bytes.count
            if offset + 13 <= bytes.count {
                let length = Int(bytes[offset + 11]) << 8 | Int(bytes[offset + 12])
                end = min(bytes.count, offset + 13 + length)
            }
            if !current.isEmpty, current.count + (end - offset) > configuration.mtu {
                datagrams.append(.send(current))
                current = []
            }
            current += bytes[offset..<end]
            offset = end
        }
        if !current.isEmpty { datagrams.append(.send(current)) }
        return datagrams
    }
}
