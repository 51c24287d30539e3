import Foundation
import ParleyWebSocketClientIO
import ParleyNetCore
import ParleyWebSocket
import ParleyCrypto
@_spi(ParleyEngines) import ParleySDKCore

/// One WebSocket connection to the server on Linux: `WebSocketClient` (blocking, not
/// thread-safe) behind a lock, a reader thread that waits for readability outside the
/// lock, and sends from any thread. Events go to `handler`, from the reader thread.
final class WebSocketTransport: ParleySignalingTransport, @unchecked Sendable {
    // @unchecked: `client` is used only under `lock`; the flags are `Locked`.
    typealias Event = ParleySignalingTransportEvent

    let endpoint: ParleyServerEndpoint
    /// Set for `wss://`: whom to trust.
    private let tls: TLSContext?
    private let handler: @Sendable (Event) -> Void
    private let lock = NSLock()
    private var client: WebSocketClient?
    private let closeRequest = Locked<UInt16?>(nil)

    init(endpoint: ParleyServerEndpoint, tls: TLSContext?, handler: @escaping @Sendable (Event) -> Void) {
        self.endpoint = endpoint
        self.tls = tls
        self.handler = handler
    }

    /// Left when the reader thread has finished (failed, closed, or sent the close frame
    /// asked for by `close(code:)`).
    let finished = DispatchGroup()

    /// Starts the reader thread, which connects first.
    func open() {
        finished.enter()
        let thread = Thread { [self] in
            run()
            finished.leave()
        }
        thread.name = "parley-sdk-ws"
        thread.start()
    }

    /// Sends one text frame; false if the connection is not open.
    @discardableResult
    func send(_ text: String) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard let client, client.isOpen else { return false }
        do { try client.send(.text(text), timeout: .seconds(5)) } catch { return false }
        return true
    }

    /// Closes with `code` (on the reader thread, which then ends without reporting `closed`).
    func close(code: UInt16) {
        closeRequest.withLock { $0 = $0 ?? code }
    }

    private func run() {
        if endpoint.isSecure && tls == nil {
            handler(.failed("\(endpoint.webSocketURL): no TLS context for a secure endpoint"))
            return
        }
        let connected: WebSocketClient
        do {
            let address = try endpoint.resolve()
            connected = try WebSocketClient(connectingTo: address, host: endpoint.hostHeader, path: endpoint.path,
                                            subprotocols: [ParleyServerEndpoint.subprotocol], timeout: .seconds(10),
                                            maxMessageSize: 1 << 20, tls: endpoint.isSecure ? tls : nil, serverName: endpoint.host)
        } catch let error as ParleyClientError {
            handler(.failed(error.message))
            return
        } catch {
            handler(.failed("\(endpoint.webSocketURL): \(error)"))
            return
        }
        guard connected.subprotocol == ParleyServerEndpoint.subprotocol else {
            connected.close(code: .protocolError)
            handler(.failed("\(endpoint.webSocketURL): the server did not select \(ParleyServerEndpoint.subprotocol)"))
            return
        }
        lock.lock()
        client = connected
        lock.unlock()
        handler(.opened(localHost: connected.socket.localAddress.hostDescription))
        // After an event, read again before waiting: one socket read can carry several
        // messages (a `result` and the `call.ended` right behind it), and the ones the
        // client buffered would otherwise wait for the socket's next bytes.
        var mayHaveBuffered = false
        while true {
            if let code = closeRequest.current {
                lock.lock()
                connected.close(code: WebSocketCloseCode(rawValue: code))
                lock.unlock()
                return
            }
            if !mayHaveBuffered {
                guard connected.socket.waitUntilReadable(timeout: .milliseconds(100)) else { continue }
            }
            lock.lock()
            let event: WebSocketClient.Event?
            do {
                event = try connected.receive(timeout: .zero)
            } catch {
                event = .closed(WebSocketClose(code: .abnormalClosure, reason: "\(error)"))
            }
            if case .closed = event { connected.socket.close() }
            lock.unlock()
            mayHaveBuffered = event != nil
            switch event {
            case .message(.text(let text))?:
                handler(.message(Array(text.utf8)))
            case .message(.binary)?:
                // protocol.md: text frames only; a binary frame from the server is dropped.
                continue
            case .closed(let close)?:
                if closeRequest.current == nil { handler(.closed(code: close.code?.rawValue ?? 1005, reason: close.reason)) }
                return
            case nil:
                continue
            }
        }
    }
}
