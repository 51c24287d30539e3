import ParleyCrypto
import ParleyNetCore
import ParleyNetLinux
import ParleySIP
import Glibc

/// One TCP or TLS connection of a `SIPTransportServer`, accepted or opened by it: bytes
/// (decrypted first under TLS) framed into messages by `SIPStreamFramer` (RFC 3261
/// §18.3), RFC 5626 keepalives answered, and its timeouts (idle, a message left
/// incomplete, a connect or a TLS handshake that does not finish).
///
/// Under TLS the connection is a `TLSConnection` over the `TCPConnection`, driven from
/// its reads: what the TLS side has to send goes to the socket, what it decrypts to the
/// framer. Messages written before the handshake finished wait for it (bounded by the
/// write queue's limit); if it never finishes they are reported undelivered.
///
/// `@unchecked Sendable`: every method runs on the server's loop (its `TCPConnection`'s
/// callbacks and the loop's timers); the conformance only lets a reference travel into
/// those closures.
final class SIPStreamConnection: @unchecked Sendable {
    /// Why the connection closed, as far as the server cares.
    enum Ending: Sendable, Hashable {
        /// Either side closed it, or it failed once established.
        case closed
        /// Nothing arrived for the idle timeout, or a message stayed incomplete too long.
        case timedOut
        /// An opened connection never got established (refused, unreachable, too slow, or
        /// its TLS handshake failed).
        case connectFailed
    }

    let id: UInt64
    let tcp: TCPConnection
    /// Opened by this server (rather than accepted).
    let isOutbound: Bool
    /// For a TLS connection this server opened: the name or address its peer's
    /// certificate was checked against (with the address, the key for reusing it).
    let serverName: String?
    private let server: SIPTransportServer
    /// The TLS session over `tcp`; nil for plain TCP.
    private let tls: TLSConnection?
    private var framer: SIPStreamFramer
    private var buffer: [UInt8] = []
    /// Bytes at the front of `buffer` already framed.
    private var framed = 0
    private var lastActivity: ContinuousClock.Instant
    /// When the bytes of an incomplete message began to arrive.
    private var partialSince: ContinuousClock.Instant?
    /// An opened connection must be established by then; nil once it is.
    private var connectDeadline: ContinuousClock.Instant?
    /// A TLS handshake must be done by then; nil once it is (and for plain TCP).
    private var handshakeDeadline: ContinuousClock.Instant?
    private var timer: TimerID?
    private var timerAt: ContinuousClock.Instant?
    private var ending = Ending.closed
    /// Requests moved from UDP to this connection for their size (RFC 3261 §18.1.1), to
    /// send over UDP after all if it never gets established.
    private(set) var fallbacks: [(bytes: [UInt8], destination: SocketAddress)] = []
    /// Messages written before the TLS handshake finished, in order: sent once it does,
    /// reported undelivered if it does not.
    private(set) var pending: [(message: SIPMessage?, bytes: [UInt8])] = []
    private var pendingByteCount = 0
    /// Why the handshake failed (a certificate refused, garbage, the timeout), once it has.
    private(set) var handshakeFailure: String?

    /// - Parameter tls: the TLS session for a connection on the TLS listener (server side)
    ///   or opened for TLS (client side, verifying `serverName`); nil for plain TCP.
    init(id: UInt64, tcp: TCPConnection, server: SIPTransportServer, isOutbound: Bool, tls: TLSConnection? = nil) {
        self.id = id
        self.tcp = tcp
        self.server = server
        self.isOutbound = isOutbound
        self.tls = tls
        serverName = isOutbound ? tls?.serverName : nil
        framer = SIPStreamFramer(limits: server.configuration.limits)
        let now = ContinuousClock.now
        lastActivity = now
        if isOutbound { connectDeadline = now.advanced(by: server.configuration.connectTimeout) }
        if tls != nil { handshakeDeadline = now.advanced(by: server.configuration.tls?.handshakeTimeout ?? .seconds(10)) }
    }

    /// The transport of this connection: TCP, or TLS.
    var transport: SIPTransport { tls == nil ? .tcp : .tls }

    /// Where this connection's messages come from.
    var source: SIPMessageSource {
        SIPMessageSource(transport: transport, remoteAddress: tcp.socket.remoteAddress, localAddress: tcp.socket.localAddress,
                         connectionID: id)
    }

    var isOpen: Bool { tcp.isOpen }

    func start() throws(NetError) {
        try tcp.start(onRead: { [unowned self] bytes in self.received(bytes) },
                      onClose: { [unowned self] error in self.closed(error) })
        // A client speaks first: its ClientHello is queued behind the TCP connect.
        if let tls, isOutbound { handle(tls.start(), handshaking: true) }
        armTimer()
    }

    /// Queues `bytes` (encrypted under TLS, or kept until the handshake is done); false
    /// when the connection is closed or its write queue overflowed. `message`: the
    /// message `bytes` hold, to report if the TLS handshake never finishes.
    func write(_ bytes: [UInt8], message: SIPMessage? = nil) -> Bool {
        lastActivity = .now
        guard let tls else { return tcp.write(bytes) }
        guard tcp.isOpen else { return false }
        switch tls.state {
        case .handshaking:
            guard bytes.count <= tcp.configuration.maxQueuedBytes - pendingByteCount else {
                // The same bound as the socket's write queue: a handshake that does not
                // finish cannot make the server hold more.
                handshakeFailure = "more than \(tcp.configuration.maxQueuedBytes) bytes waited for the TLS handshake"
                close(graceful: false)
                return false
            }
            pending.append((message, bytes))
            pendingByteCount += bytes.count
            return true
        case .connected:
            let output = tls.write(bytes)
            if !output.send.isEmpty, !tcp.write(output.send) { return false }
            if output.error != nil {
                tcp.close(graceful: false)
                return false
            }
            return true
        case .closed, .failed:
            return false
        }
    }

    /// Keeps `bytes` to send to `destination` over UDP if this connection never gets
    /// established.
    func addFallback(_ bytes: [UInt8], to destination: SocketAddress) {
        guard connectDeadline != nil else { return }
        fallbacks.append((bytes, destination))
    }

    /// Closes the connection; `graceful` under TLS sends close_notify first (RFC 8446
    /// §6.1), then what is queued, then FIN.
    func close(graceful: Bool) {
        if graceful, let tls, tcp.isOpen, tls.state == .connected {
            let output = tls.close()
            if !output.send.isEmpty { _ = tcp.write(output.send) }
        }
        tcp.close(graceful: graceful)
    }

    // MARK: Input

    private func received(_ bytes: UnsafeRawBufferPointer) {
        lastActivity = .now
        // The peer wrote to us, so the TCP handshake is done.
        establish()
        guard let tls else {
            buffer.append(contentsOf: bytes)
            frame()
            return
        }
        let handshaking = tls.state == .handshaking
        handle(tls.receive(bytes), handshaking: handshaking)
    }

    /// Carries out what one call into the TLS session produced: records to the socket,
    /// the end of the handshake, decrypted bytes to the framer, or a failure, after which
    /// the alert (if any) goes out and the connection closes (this one only).
    private func handle(_ output: TLSOutput, handshaking: Bool) {
        if !output.send.isEmpty { _ = tcp.write(output.send) }
        if let error = output.error {
            // One read can finish the handshake and carry a bad record after it.
            if output.didConnect {
                handshakeDeadline = nil
                server.counters.tlsHandshakes.add(1, ordering: .relaxed)
            }
            if handshaking && !output.didConnect {
                handshakeFailure = "TLS handshake failed: \(error)"
            } else {
                // A record that does not decrypt: the stream is lost, like a framing error.
                server.counters.countDropped(.malformed)
            }
            tcp.close(graceful: true)
            return
        }
        if output.didConnect { handshakeDone() }
        if !output.received.isEmpty {
            buffer.append(contentsOf: output.received)
            frame()
        }
        if output.didClose, tcp.isOpen { tcp.close(graceful: true) }
    }

    /// The TLS handshake finished: what waited for it goes out, in order.
    private func handshakeDone() {
        handshakeDeadline = nil
        server.counters.tlsHandshakes.add(1, ordering: .relaxed)
        let waiting = pending
        pending = []
        pendingByteCount = 0
        for (_, bytes) in waiting where !write(bytes) {
            server.counters.countDropped(.sendFailed)
        }
    }

    /// Frames every complete message in the buffer. Bounded: the framer never waits for
    /// more than `SIPLimits.maxMessageBytes` (it throws instead), so the buffer holds at
    /// most one message plus one read.
    private func frame() {
        while tcp.isOpen {
            let frame: SIPStreamFrame
            do {
                frame = try framer.next(in: buffer[framed...])
            } catch {
                // The stream cannot be framed any more: answer if the error says so, then
                // close this connection (only this one).
                server.streamReceived(.failure(error), looksLikeResponse: SIPTransportServer.looksLikeResponse(buffer[framed...]), on: self)
                buffer = []
                framed = 0
                close(graceful: true)
                return
            }
            switch frame {
            case .message(let message, let consumed):
                framed += consumed
                partialSince = nil
                server.streamReceived(.success(message), looksLikeResponse: !message.isRequest, on: self)
            case .invalidMessage(let error, let consumed):
                let looksLikeResponse = SIPTransportServer.looksLikeResponse(buffer[framed..<(framed + consumed)])
                framed += consumed
                partialSince = nil
                server.streamReceived(.failure(error), looksLikeResponse: looksLikeResponse, on: self)
                if error.closesConnection {
                    close(graceful: true)
                    return
                }
            case .ping(let consumed):
                framed += consumed
                partialSince = nil
                server.counters.keepalives.add(1, ordering: .relaxed)
                // RFC 5626 §4.4.1: a double CRLF is answered with a single one.
                _ = write([0x0d, 0x0a])
            case .pong(let consumed):
                framed += consumed
                partialSince = nil
            case .needMoreBytes:
                compact()
                return
            }
        }
    }

    private func compact() {
        if framed >= buffer.count {
            // Released rather than kept: an idle connection should hold no buffer.
            buffer = []
            partialSince = nil
        } else {
            if framed > 0 { buffer.removeFirst(framed) }
            if partialSince == nil {
                partialSince = .now
                rearm()
            }
        }
        framed = 0
    }

    // MARK: Timers

    private var deadline: ContinuousClock.Instant {
        var deadline = lastActivity.advanced(by: server.configuration.idleTimeout)
        if let partialSince { deadline = min(deadline, partialSince.advanced(by: server.configuration.messageTimeout)) }
        if let connectDeadline { deadline = min(deadline, connectDeadline) }
        if let handshakeDeadline { deadline = min(deadline, handshakeDeadline) }
        return deadline
    }

    /// Arms the timer for an earlier deadline than the pending one (a later deadline is
    /// picked up when the pending timer fires).
    private func rearm() {
        if let timerAt, timerAt <= deadline { return }
        if let timer { tcp.loop.cancel(timer) }
        timer = nil
        armTimer()
    }

    private func armTimer() {
        guard timer == nil, tcp.isOpen else { return }
        let at = deadline
        timerAt = at
        timer = tcp.loop.schedule(at: at) { [weak self] in self?.timerFired() }
    }

    private func timerFired() {
        timer = nil
        timerAt = nil
        guard tcp.isOpen else { return }
        let now = ContinuousClock.now
        if let connectDeadline, now >= connectDeadline {
            if tcp.socket.isConnected {
                establish()
            } else {
                ending = .connectFailed
                server.counters.connectionTimeouts.add(1, ordering: .relaxed)
                tcp.close(graceful: false)
                return
            }
        }
        if let handshakeDeadline, now >= handshakeDeadline {
            ending = isOutbound ? .connectFailed : .timedOut
            handshakeFailure = "the TLS handshake did not finish within \(server.configuration.tls?.handshakeTimeout ?? .zero)"
            server.counters.connectionTimeouts.add(1, ordering: .relaxed)
            tcp.close(graceful: false)
            return
        }
        if now >= deadline {
            ending = .timedOut
            server.counters.connectionTimeouts.add(1, ordering: .relaxed)
            tcp.close(graceful: false)
            return
        }
        armTimer()
    }

    /// The handshake is known to be done: no connect deadline, no UDP fallback.
    private func establish() {
        guard connectDeadline != nil else { return }
        connectDeadline = nil
        fallbacks = []
    }

    private func closed(_ error: NetError?) {
        if let timer { tcp.loop.cancel(timer) }
        timer = nil
        if let tls, handshakeFailure != nil || tls.state == .handshaking {
            if handshakeFailure == nil {
                handshakeFailure = "the connection closed during the TLS handshake\(error.map { ": \($0)" } ?? "")"
            }
            server.counters.tlsHandshakeFailures.add(1, ordering: .relaxed)
            if isOutbound { ending = .connectFailed }
        }
        // Errors a connection gets only while its handshake is under way.
        if connectDeadline != nil, let errno = error?.errno,
           [ECONNREFUSED, EHOSTUNREACH, ENETUNREACH, ETIMEDOUT].contains(errno) {
            ending = .connectFailed
        }
        server.streamClosed(self, ending: ending)
    }
}
