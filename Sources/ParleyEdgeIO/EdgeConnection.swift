import ParleyNetCore
import ParleyNetLinux
import ParleyHTTP
import ParleyWebSocket
import ParleyWireCore

/// One accepted TCP connection on one loop: HTTP/1.1 requests until (maybe) a WebSocket
/// upgrade, then WebSocket frames. Owns the timeouts and the message rate limit.
///
/// `@unchecked Sendable`: every method runs on `loop` (callbacks of its `TCPConnection`,
/// timers of the loop, or closures hopped there by `EdgeWebSocket`); the conformance
/// lets other threads carry a reference into those closures.
final class EdgeConnection: @unchecked Sendable {
    private enum Phase {
        case http(HTTPRequestParser)
        case webSocket(WebSocketConnection, EdgeWebSocket)
        case closed
    }

    let id: UInt64
    let tcp: EdgeTransport
    private let server: EdgeServer
    private let context: EdgeRequestContext
    private var phase: Phase
    /// When the current timeout ends; checked by one lazily re-armed timer.
    private var deadline: ContinuousClock.Instant
    private var timer: TimerID?
    private var timerAt: ContinuousClock.Instant?
    private var lastActivity: ContinuousClock.Instant
    private var pinged = false
    private var closeReported = false
    /// A deferred HTTP handler has not answered yet.
    private var awaitingResponse = false
    private var closingSince: ContinuousClock.Instant?
    /// Over the message rate with the close left to the route's `onRateLimited`: input is
    /// dropped until the application closes (or the handshake timeout passes).
    private var rateLimitedSince: ContinuousClock.Instant?
    // Token bucket for the WebSocket message rate (§10.4 leaves the policy to the server).
    private var tokens: Double
    private var tokensUpdated: ContinuousClock.Instant

    init(id: UInt64, tcp: EdgeTransport, server: EdgeServer) {
        self.id = id
        self.tcp = tcp
        self.server = server
        context = EdgeRequestContext(remoteAddress: tcp.socket.remoteAddress, localAddress: tcp.socket.localAddress, connectionID: id)
        phase = .http(HTTPRequestParser(limits: server.configuration.httpLimits))
        let now = ContinuousClock.now
        deadline = now.advanced(by: server.configuration.handshakeTimeout)
        lastActivity = now
        tokens = Double(server.configuration.messageBurst)
        tokensUpdated = now
    }

    private var configuration: EdgeConfiguration { server.configuration }

    func start() throws(NetError) {
        try tcp.start(onRead: { [unowned self] bytes in self.received(bytes) },
                      onClose: { [unowned self] error in self.transportClosed(error) })
        armTimer()
    }

    // MARK: Input

    private func received(_ bytes: UnsafeRawBufferPointer) {
        lastActivity = .now
        switch phase {
        case .http(var parser):
            // Take the value out of `phase` first so appending does not copy its buffer.
            phase = .closed
            let wasMidRequest = parser.isMidRequest
            parser.append(bytes)
            if awaitingResponse {
                // Pipelined bytes wait until the pending answer went out, but not
                // without bound: more than one maximal request waiting closes.
                guard parser.bufferedByteCount <= configuration.httpLimits.maxHeadSize + configuration.httpLimits.maxBodySize else {
                    tcp.close(graceful: false)
                    return
                }
                phase = .http(parser)
                return
            }
            processHTTP(&parser, wasMidRequest: wasMidRequest)
        case .webSocket(var connection, let handle):
            // Past the rate limit nothing more is read into the application.
            guard rateLimitedSince == nil else { return }
            phase = .closed
            let events = connection.receive(bytes)
            phase = .webSocket(connection, handle)
            deliver(events, socket: handle)
        case .closed:
            break
        }
    }

    private func processHTTP(_ parser: inout HTTPRequestParser, wasMidRequest: Bool) {
        if !wasMidRequest && parser.isMidRequest {
            // A new request began: it has the handshake timeout to arrive completely.
            setDeadline(ContinuousClock.now.advanced(by: configuration.handshakeTimeout))
        }
        // Bounded: each request consumes bytes of the one read just appended.
        while tcp.isOpen {
            let request: HTTPRequest
            do {
                guard let next = try parser.next() else { break }
                request = next
            } catch {
                server.counters.httpErrors.add(1, ordering: .relaxed)
                tcp.write(HTTPResponse.error(error).serialized(keepAlive: false))
                tcp.close()
                phase = .closed
                return
            }
            server.counters.httpRequests.add(1, ordering: .relaxed)
            if let route = server.handlers.webSocket, request.isUpgrade, request.path == route.path {
                upgrade(request, route: route, parser: &parser)
                return
            }
            switch server.handlers.http {
            case .immediate(let handler):
                guard respond(handler(request, context), to: request) else { return }
                setDeadline(ContinuousClock.now.advanced(by: parser.isMidRequest ? configuration.handshakeTimeout : configuration.idleTimeout))
            case .deferred(let handler):
                // Stop here until the answer comes back; later requests wait in the parser.
                awaitingResponse = true
                phase = .http(parser)
                setDeadline(ContinuousClock.now.advanced(by: configuration.idleTimeout))
                let loop = tcp.loop
                // Always through the loop's queue, even from the loop thread: an answer
                // given inside the handler must not recurse into the next request.
                handler(request, context, EdgeResponder { [self] response in
                    loop.execute { self.deferredResponse(response, to: request) }
                })
                return
            }
        }
        if parser.takeContinueRequest() {
            // RFC 9110 §10.1.1: the client waits for this before sending the body.
            tcp.write(Array("HTTP/1.1 100 Continue\r\n\r\n".utf8))
        }
        if tcp.isOpen { phase = .http(parser) }
    }

    /// Writes a response; false when the connection is closing after it.
    private func respond(_ response: HTTPResponse, to request: HTTPRequest) -> Bool {
        tcp.write(response.serialized(for: request))
        guard request.keepAlive, tcp.isOpen else {
            tcp.close()
            phase = .closed
            return false
        }
        return true
    }

    private func deferredResponse(_ response: HTTPResponse, to request: HTTPRequest) {
        guard awaitingResponse, tcp.isOpen, case .http(var parser) = phase else { return }
        awaitingResponse = false
        phase = .closed
        guard respond(response, to: request) else { return }
        setDeadline(ContinuousClock.now.advanced(by: parser.isMidRequest ? configuration.handshakeTimeout : configuration.idleTimeout))
        // Requests that arrived meanwhile (pipelined) are served now.
        processHTTP(&parser, wasMidRequest: true)
    }

    private func upgrade(_ request: HTTPRequest, route: WebSocketRoute, parser: inout HTTPRequestParser) {
        let upgradeRequest: WebSocketUpgradeRequest
        do {
            // The request the HTTP parser read is the one judged: its head is not parsed
            // again by a second grammar that could read it differently.
            upgradeRequest = try WebSocketUpgradeRequest(validating: request)
        } catch {
            tcp.write(WebSocketUpgradeResponse.rejecting(error).serialized())
            tcp.close()
            phase = .closed
            return
        }
        let acceptance = route.accept(upgradeRequest, context.remoteAddress)
        let response: WebSocketUpgradeResponse
        let subprotocol: String?
        switch acceptance {
        case .accept(let chosen):
            do {
                response = try WebSocketUpgradeResponse.accepting(upgradeRequest, subprotocol: chosen)
                subprotocol = chosen
            } catch {
                reject(status: 500, message: "cannot accept: \(error)")
                return
            }
        case .reject(let status, let message):
            reject(status: status, message: message)
            return
        case .respond(let refusal):
            tcp.write(refusal.serialized(keepAlive: false))
            tcp.close()
            phase = .closed
            return
        }
        guard tcp.write(response.serialized()) else { phase = .closed; return }
        let connection = WebSocketConnection(configuration: .init(
            role: .server, maxFrameSize: configuration.maxMessageSize, maxMessageSize: configuration.maxMessageSize))
        let handle = EdgeWebSocket(id: id, remoteAddress: context.remoteAddress, request: upgradeRequest,
                                   subprotocol: subprotocol, loop: tcp.loop, connection: self,
                                   maxBytesInTransit: configuration.connection.maxQueuedBytes)
        server.counters.webSocketsOpened.add(1, ordering: .relaxed)
        lastActivity = .now
        setDeadline(lastActivity.advanced(by: configuration.idleTimeout / 2))
        phase = .webSocket(connection, handle)
        route.onOpen(handle)
        // Bytes after the head already belong to the frame stream.
        let leftover = parser.takeBufferedBytes()
        if !leftover.isEmpty, case .webSocket(var connection, let handle) = phase {
            phase = .closed
            let events = connection.receive(leftover)
            phase = .webSocket(connection, handle)
            self.deliver(events, socket: handle)
        }
    }

    private func reject(status: Int, message: String) {
        if let response = (try? WebSocketUpgradeResponse.rejecting(status: status, message: message))
            ?? (try? WebSocketUpgradeResponse.rejecting(status: 500, message: "invalid rejection status \(status)")) {
            tcp.write(response.serialized())
        }
        tcp.close()
        phase = .closed
    }

    // MARK: WebSocket

    private func deliver(_ events: [WebSocketEvent], socket handle: EdgeWebSocket) {
        guard let route = server.handlers.webSocket else { return }
        for event in events {
            switch event {
            case .text(let text):
                guard takeToken() else { return rateExceeded(handle) }
                server.counters.messagesReceived.add(1, ordering: .relaxed)
                route.onMessage(handle, .text(text))
            case .binary(let bytes):
                guard takeToken() else { return rateExceeded(handle) }
                server.counters.messagesReceived.add(1, ordering: .relaxed)
                route.onMessage(handle, .binary(bytes))
            case .pong:
                break
            case .sendPong(let payload):
                // Pings count against the rate too: a ping flood is a flood.
                guard takeToken() else { return rateExceeded(handle) }
                tcp.write(WebSocketFrame.pong(payload).serialized())
            case .sendClose(let close):
                tcp.write(WebSocketFrame.close(close).serialized())
            case .closed(let close):
                reportClose(close)
                tcp.close()
            case .failConnection(let error):
                tcp.write(WebSocketFrame.close(error.close).serialized())
                reportClose(error.close)
                tcp.close()
            }
        }
    }

    private func takeToken() -> Bool {
        let now = ContinuousClock.now
        let elapsed = tokensUpdated.duration(to: now)
        tokensUpdated = now
        tokens = min(Double(configuration.messageBurst), tokens + elapsed.fractionalSeconds * configuration.maxMessagesPerSecond)
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }

    /// RFC 6455 §7.4.1: 1008 when a message violates policy (here: the rate). With the
    /// route's `onRateLimited` the application closes instead, after its replies to what
    /// it was given, which may still be on their way from other threads.
    private func rateExceeded(_ handle: EdgeWebSocket) {
        server.counters.rateLimited.add(1, ordering: .relaxed)
        guard let onRateLimited = server.handlers.webSocket?.onRateLimited else {
            fail(with: WebSocketClose(code: configuration.rateLimitCloseCode, reason: "message rate limit exceeded"))
            return
        }
        guard rateLimitedSince == nil else { return }
        rateLimitedSince = .now
        setDeadline(ContinuousClock.now.advanced(by: configuration.handshakeTimeout))
        onRateLimited(handle)
    }

    private func fail(with close: WebSocketClose) {
        guard case .webSocket(var connection, let handle) = phase else { return }
        if connection.fail() {
            tcp.write(WebSocketFrame.close(close).serialized())
        }
        phase = .webSocket(connection, handle)
        reportClose(close)
        tcp.close()
    }

    func sendMessage(_ message: WebSocketMessage) -> Bool {
        guard case .webSocket(let connection, _) = phase, connection.canSendMessages, tcp.isOpen else { return false }
        let frame: WebSocketFrame
        switch message {
        case .text(let text): frame = .text(text)
        case .binary(let bytes): frame = .binary(bytes)
        }
        server.counters.messagesSent.add(1, ordering: .relaxed)
        return tcp.write(frame.serialized())
    }

    /// Closes at once, without a close frame (the peer is not reading anyway).
    func abort(reason: String) {
        guard case .webSocket = phase else { return }
        reportClose(WebSocketClose(code: .abnormalClosure, reason: reason))
        tcp.close(graceful: false)
    }

    func closeWebSocket(_ close: WebSocketClose) {
        if rateLimitedSince != nil {
            // The peer's input is not read any more, so its close frame would never be
            // seen: close frame after the queued replies, then FIN, no handshake wait.
            fail(with: close)
            return
        }
        guard case .webSocket(var connection, let handle) = phase else { return }
        guard connection.beginClosing() else { return }
        phase = .webSocket(connection, handle)
        handle.markClosed()
        tcp.write(WebSocketFrame.close(close).serialized())
        // §7.1.1: wait for the peer's close frame, but not forever.
        closingSince = .now
        setDeadline(ContinuousClock.now.advanced(by: configuration.handshakeTimeout))
    }

    private func reportClose(_ close: WebSocketClose) {
        guard !closeReported, case .webSocket(_, let handle) = phase else { return }
        closeReported = true
        handle.markClosed()
        server.counters.webSocketsClosed.add(1, ordering: .relaxed)
        server.handlers.webSocket?.onClose(handle, close)
    }

    // MARK: Shutdown and close

    /// Server shutdown: WebSockets get 1001 (going away), HTTP connections just close.
    func shutdown() {
        switch phase {
        case .webSocket:
            fail(with: WebSocketClose(code: .goingAway, reason: "server shutting down"))
        case .http, .closed:
            tcp.close()
        }
    }

    private func transportClosed(_ error: NetError?) {
        if case .webSocket(var connection, let handle) = phase {
            _ = connection.receiveEndOfStream()
            phase = .webSocket(connection, handle)
            reportClose(WebSocketClose(code: .abnormalClosure, reason: error.map { "\($0)" } ?? ""))
        }
        phase = .closed
        if let timer { tcp.loop.cancel(timer) }
        timer = nil
        server.connectionClosed(self)
    }

    // MARK: Timeouts

    /// Moves the deadline; the timer is re-armed only when the deadline moves earlier
    /// than the pending timer (later deadlines are picked up when it fires).
    private func setDeadline(_ newDeadline: ContinuousClock.Instant) {
        deadline = newDeadline
        if let timerAt, timerAt <= newDeadline { return }
        if let timer { tcp.loop.cancel(timer) }
        timer = nil
        armTimer()
    }

    private func armTimer() {
        guard timer == nil, tcp.isOpen else { return }
        timerAt = deadline
        timer = tcp.loop.schedule(at: deadline) { [weak self] in self?.timerFired() }
    }

    private func timerFired() {
        timer = nil
        timerAt = nil
        guard tcp.isOpen else { return }
        let now = ContinuousClock.now
        if now < deadline {
            armTimer()
            return
        }
        switch phase {
        case .http(let parser):
            server.counters.timeouts.add(1, ordering: .relaxed)
            if parser.isMidRequest && !awaitingResponse {
                tcp.write(HTTPResponse.jsonError(status: 408, message: "request not complete within the handshake timeout").serialized(keepAlive: false))
            }
            tcp.close()
            phase = .closed
            return
        case .webSocket:
            if rateLimitedSince != nil {
                // The application never closed the connection it was told about.
                fail(with: WebSocketClose(code: configuration.rateLimitCloseCode, reason: "message rate limit exceeded"))
                return
            }
            if closingSince != nil {
                // The peer never answered our close frame.
                reportClose(WebSocketClose(code: .abnormalClosure, reason: "no close frame from peer"))
                tcp.close(graceful: false)
                return
            }
            let silence = lastActivity.duration(to: now)
            if silence >= configuration.idleTimeout {
                server.counters.timeouts.add(1, ordering: .relaxed)
                fail(with: WebSocketClose(code: .goingAway, reason: "idle timeout"))
                return
            }
            if silence >= configuration.idleTimeout / 2 {
                if !pinged {
                    pinged = true
                    tcp.write(WebSocketFrame.ping().serialized())
                }
                deadline = lastActivity.advanced(by: configuration.idleTimeout)
            } else {
                pinged = false
                deadline = lastActivity.advanced(by: configuration.idleTimeout / 2)
            }
            armTimer()
        case .closed:
            return
        }
    }
}
