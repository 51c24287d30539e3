public import ParleyNetCore
public import ParleyNetLinux
public import ParleyWebSocket
public import ParleyCrypto

/// A `ws://` or `wss://` WebSocket client over a `TCPSocket` (through a `TLSConnection`
/// for `wss://`, verifying the server's name or address), sharing the framing code with the
/// server (`WebSocketConnection` in the client role). Calls block the calling thread, with
/// timeouts; use one client from one thread at a time (it is not `Sendable`).
///
/// ```swift
/// let client = try WebSocketClient(connectingTo: address, path: "/v1/ws?token=...")
/// try client.send(.text("hello"))
/// if case .message(let reply)? = try client.receive(timeout: .seconds(5)) { ... }
/// client.close()
/// ```
///
/// For `wss://` pass a client `TLSContext` (`TLSContext.client()` trusts the system's
/// CAs, `TLSContext.client(caFile:)` a development CA) and, when the address does not say
/// it, the `serverName` the certificate must match.
public final class WebSocketClient {
    /// What `receive(timeout:)` returns.
    public enum Event: Sendable, Hashable {
        /// A complete message.
        case message(WebSocketMessage)
        /// The connection is closed, with the peer's close code and reason (1006 if the
        /// transport ended without a close frame).
        case closed(WebSocketClose)
    }

    /// The socket (for tests that shrink its buffers, or read its addresses).
    public var socket: TCPSocket { stream.socket }
    /// True when the connection runs over TLS.
    public let isTLS: Bool
    private let stream: WebSocketClientStream
    /// The subprotocol the server chose, if any.
    public let subprotocol: String?
    private var connection: WebSocketConnection
    private var pending: [Event] = []
    private var closed: WebSocketClose?

    /// Connects (with `tls`, completes a TLS handshake that verifies `serverName`, by
    /// default the address's host), sends the opening handshake for `path` (with query)
    /// and checks the 101. `host` is the `Host` header (default: the address).
    /// Throws `WebSocketClientError`: network failures, `tlsError` when TLS failed (a server
    /// certificate that did not verify has kind `certificateRejected`), `rejectedStatus`
    /// when the server answered another status, a handshake error, or a timeout.
    public init(connectingTo address: SocketAddress, host: String? = nil, path: String = "/",
                subprotocols: [String] = [], headers: [(name: String, value: String)] = [],
                timeout: Duration = .seconds(10), maxMessageSize: Int = 1 << 20,
                tls: TLSContext? = nil, serverName: String? = nil) throws(WebSocketClientError) {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        if let tls, tls.role != .client { throw .invalidArgument("a WebSocketClient needs a client TLSContext") }
        let stream = try WebSocketClientStream(connectingTo: address, tls: tls, serverName: serverName ?? address.hostDescription,
                                               deadline: deadline)
        self.stream = stream
        isTLS = tls != nil
        do throws(WebSocketClientError) {
            let nonce: [UInt8]
            do { nonce = try SecureRandom.bytes(16) } catch { throw WebSocketClientError.invalidArgument("no random bytes: \(error)") }
            guard let key = WebSocketKey(nonce: nonce) else { throw WebSocketClientError.invalidArgument("bad nonce") }
            let request: WebSocketUpgradeRequest
            do {
                request = try WebSocketUpgradeRequest(target: path, host: host ?? address.description, key: key,
                                                      subprotocols: subprotocols, additionalHeaders: headers)
            } catch {
                throw WebSocketClientError.handshake(error)
            }
            try stream.writeAll(request.serialized(), deadline: deadline)
            var reader = WebSocketHandshakeReader()
            var head: [UInt8] = []
            var remainder: [UInt8] = []
            readLoop: while true {
                let chunk = try stream.readSome(deadline: deadline)
                guard let chunk else { throw WebSocketClientError.timedOut("handshake") }
                guard !chunk.isEmpty else { throw WebSocketClientError.closed }
                do {
                    switch try reader.append(chunk) {
                    case .needMoreBytes: continue
                    case .complete(let h, let r):
                        head = h
                        remainder = r
                        break readLoop
                    }
                } catch {
                    throw WebSocketClientError.handshake(error)
                }
            }
            let response: WebSocketUpgradeResponse
            do { response = try WebSocketUpgradeResponse.parse(head) } catch { throw WebSocketClientError.handshake(error) }
            guard response.status == 101 else { throw WebSocketClientError.rejected(status: response.status, reason: response.reason) }
            do { subprotocol = try response.validate(for: request) } catch { throw WebSocketClientError.handshake(error) }
            connection = WebSocketConnection(configuration: .init(role: .client, maxFrameSize: maxMessageSize, maxMessageSize: maxMessageSize))
            if !remainder.isEmpty { absorb(connection.receive(remainder)) }
        } catch {
            stream.close()
            throw error
        }
    }

    deinit { stream.close() }

    /// Whether messages may still be sent.
    public var isOpen: Bool { closed == nil && connection.canSendMessages }

    /// Sends one message (masked, §5.3), waiting at most `timeout` for the socket to take it.
    public func send(_ message: WebSocketMessage, timeout: Duration = .seconds(10)) throws(WebSocketClientError) {
        guard isOpen else { throw .closed }
        let mask = try Self.maskingKey()
        let frame: WebSocketFrame
        switch message {
        case .text(let text): frame = .text(text, maskingKey: mask)
        case .binary(let bytes): frame = .binary(bytes, maskingKey: mask)
        }
        try stream.writeAll(frame.serialized(), deadline: ContinuousClock.now.advanced(by: timeout))
    }

    /// Sends raw bytes as they are (tests use it for malformed or oversized frames).
    public func sendRaw(_ bytes: [UInt8], timeout: Duration = .seconds(10)) throws(WebSocketClientError) {
        try stream.writeAll(bytes, deadline: ContinuousClock.now.advanced(by: timeout))
    }

    /// Sends a ping.
    public func ping(_ payload: [UInt8] = [], timeout: Duration = .seconds(10)) throws(WebSocketClientError) {
        guard isOpen else { throw .closed }
        try stream.writeAll(WebSocketFrame.ping(payload, maskingKey: try Self.maskingKey()).serialized(),
                          deadline: ContinuousClock.now.advanced(by: timeout))
    }

    /// The next message or the close, waiting at most `timeout`; nil on timeout. Pings are
    /// answered on the way. After `.closed` was returned, throws `closed`.
    public func receive(timeout: Duration) throws(WebSocketClientError) -> Event? {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while pending.isEmpty {
            if closed != nil { throw .closed }
            guard let chunk = try stream.readSome(deadline: deadline) else { return nil }
            if chunk.isEmpty {
                absorb(connection.receiveEndOfStream())
                if pending.isEmpty && closed == nil {
                    closed = WebSocketClose(code: .abnormalClosure)
                    pending.append(.closed(WebSocketClose(code: .abnormalClosure)))
                }
            } else {
                absorb(connection.receive(chunk))
            }
        }
        let event = pending.removeFirst()
        if case .closed(let close) = event {
            closed = close
            stream.close()
        }
        return event
    }

    /// Starts the close handshake and waits (at most `timeout`) for the server's close,
    /// dropping messages that arrive meanwhile; then closes the socket.
    public func close(code: WebSocketCloseCode = .normalClosure, reason: String = "", timeout: Duration = .seconds(2)) {
        defer { stream.close() }
        guard closed == nil else { return }
        if connection.beginClosing(), let mask = try? Self.maskingKey() {
            try? stream.writeAll(WebSocketFrame.close(WebSocketClose(code: code, reason: reason), maskingKey: mask).serialized(),
                               deadline: ContinuousClock.now.advanced(by: timeout))
        }
        let deadline = ContinuousClock.now.advanced(by: timeout)
        for _ in 0..<10_000 {
            let remaining = ContinuousClock.now.duration(to: deadline)
            guard remaining > .zero, let event = try? receive(timeout: remaining) else { return }
            if case .closed = event { return }
        }
        stream.sendCloseNotify(deadline: ContinuousClock.now.advanced(by: .milliseconds(100)))
    }

    private func absorb(_ events: [WebSocketEvent]) {
        for event in events {
            switch event {
            case .text(let text): pending.append(.message(.text(text)))
            case .binary(let bytes): pending.append(.message(.binary(bytes)))
            case .pong: break
            case .sendPong(let payload):
                if let mask = try? Self.maskingKey() {
                    try? stream.writeAll(WebSocketFrame.pong(payload, maskingKey: mask).serialized(),
                                       deadline: ContinuousClock.now.advanced(by: .seconds(2)))
                }
            case .sendClose(let close):
                if let mask = try? Self.maskingKey() {
                    try? stream.writeAll(WebSocketFrame.close(close, maskingKey: mask).serialized(),
                                       deadline: ContinuousClock.now.advanced(by: .seconds(2)))
                }
            case .closed(let close):
                pending.append(.closed(close))
            case .failConnection(let error):
                if let mask = try? Self.maskingKey() {
                    try? stream.writeAll(WebSocketFrame.close(error.close, maskingKey: mask).serialized(),
                                       deadline: ContinuousClock.now.advanced(by: .seconds(2)))
                }
                pending.append(.closed(error.close))
            }
        }
    }

    private static func maskingKey() throws(WebSocketClientError) -> WebSocketMaskingKey {
        do {
            let bytes = try SecureRandom.bytes(4)
            return WebSocketMaskingKey(bytes[0], bytes[1], bytes[2], bytes[3])
        } catch {
            throw .invalidArgument("no random bytes: \(error)")
        }
    }
}
