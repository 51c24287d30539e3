import ParleyNetCore
import ParleyNetLinux
import ParleySIP
import Glibc

/// One TCP connection of a `SIPTransportServer`, accepted or opened by it: bytes framed
/// into messages by `SIPStreamFramer` (RFC 3261 §18.3), RFC 5626 keepalives answered,
/// and its timeouts (idle, a message left incomplete, a connect that does not finish).
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
        /// An opened connection never got established (refused, unreachable, too slow).
        case connectFailed
    }

    let id: UInt64
    let tcp: TCPConnection
    /// Opened by this server (rather than accepted).
    let isOutbound: Bool
    private let server: SIPTransportServer
    private var framer: SIPStreamFramer
    private var buffer: [UInt8] = []
    /// Bytes at the front of `buffer` already framed.
    private var framed = 0
    private var lastActivity: ContinuousClock.Instant
    /// When the bytes of an incomplete message began to arrive.
    private var partialSince: ContinuousClock.Instant?
    /// An opened connection must be established by then; nil once it is.
    private var connectDeadline: ContinuousClock.Instant?
    private var timer: TimerID?
    private var timerAt: ContinuousClock.Instant?
    private var ending = Ending.closed
    /// Requests moved from UDP to this connection for their size (RFC 3261 §18.1.1), to
    /// send over UDP after all if it never gets established.
    private(set) var fallbacks: [(bytes: [UInt8], destination: SocketAddress)] = []

    init(id: UInt64, tcp: TCPConnection, server: SIPTransportServer, isOutbound: Bool) {
        self.id = id
        self.tcp = tcp
        self.server = server
        self.isOutbound = isOutbound
        framer = SIPStreamFramer(limits: server.configuration.limits)
        let now = ContinuousClock.now
        lastActivity = now
        if isOutbound { connectDeadline = now.advanced(by: server.configuration.connectTimeout) }
    }

    /// Where this connection's messages come from.
    var source: SIPMessageSource {
        SIPMessageSource(transport: .tcp, remoteAddress: tcp.socket.remoteAddress, localAddress: tcp.socket.localAddress, connectionID: id)
    }

    var isOpen: Bool { tcp.isOpen }

    func start() throws(NetError) {
        try tcp.start(onRead: { [unowned self] bytes in self.received(bytes) },
                      onClose: { [unowned self] error in self.closed(error) })
        armTimer()
    }

    /// Queues `bytes`; false when the connection is closed or its write queue overflowed.
    func write(_ bytes: [UInt8]) -> Bool {
        lastActivity = .now
        return tcp.write(bytes)
    }

    /// Keeps `bytes` to send to `destination` over UDP if this connection never gets
    /// established.
    func addFallback(_ bytes: [UInt8], to destination: SocketAddress) {
        guard connectDeadline != nil else { return }
        fallbacks.append((bytes, destination))
    }

    func close(graceful: Bool) {
        tcp.close(graceful: graceful)
    }

    // MARK: Input

    private func received(_ bytes: UnsafeRawBufferPointer) {
        lastActivity = .now
        // The peer wrote to us, so the handshake is done.
        establish()
        buffer.append(contentsOf: bytes)
        frame()
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
                tcp.close(graceful: true)
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
                    tcp.close(graceful: true)
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
        // Errors a connection gets only while its handshake is under way.
        if connectDeadline != nil, let errno = error?.errno,
           [ECONNREFUSED, EHOSTUNREACH, ENETUNREACH, ETIMEDOUT].contains(errno) {
            ending = .connectFailed
        }
        server.streamClosed(self, ending: ending)
    }
}
