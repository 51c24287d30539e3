public import ParleyNetCore
public import ParleyNetLinux
public import ParleyWebSocket
import Synchronization

/// One open server-side WebSocket, as the application sees it: who it is, and a way to
/// send messages and close it from any thread.
///
/// Sending from another thread hops to the connection's loop (`EventLoop.execute`, woken
/// through its eventfd); messages sent from one thread go out in the order sent. A send
/// to a peer that does not read is queued up to the connection's write limit; past it
/// the connection is closed (back-pressure), and `send` returns false from then on.
public final class EdgeWebSocket: Sendable, Hashable, CustomStringConvertible {
    /// Unique among this server's connections.
    public let id: UInt64
    /// The client's address.
    public let remoteAddress: SocketAddress
    /// The upgrade request (path, query, headers: where a token would be).
    public let request: WebSocketUpgradeRequest
    /// The subprotocol accepted, if any.
    public let subprotocol: String?
    /// The loop this connection lives on.
    public let loop: EventLoop

    private let open = Atomic<Bool>(true)
    /// Bytes sent from other threads whose closures have not reached the loop yet: the
    /// hop is a queue too, and it must be bounded like the write queue.
    private let bytesInTransit = Atomic<Int>(0)
    private let maxBytesInTransit: Int
    // The connection is only touched on `loop`; the reference is set once and cleared on close.
    private let connection: Mutex<EdgeConnection?>

    init(id: UInt64, remoteAddress: SocketAddress, request: WebSocketUpgradeRequest, subprotocol: String?,
         loop: EventLoop, connection: EdgeConnection, maxBytesInTransit: Int) {
        self.maxBytesInTransit = maxBytesInTransit
        self.id = id
        self.remoteAddress = remoteAddress
        self.request = request
        self.subprotocol = subprotocol
        self.loop = loop
        self.connection = Mutex(connection)
    }

    /// False once the connection closed or began closing.
    public var isOpen: Bool { open.load(ordering: .acquiring) }

    func markClosed() {
        open.store(false, ordering: .releasing)
        connection.withLock { $0 = nil }
    }

    /// Sends a message. Returns false if the connection is closed (or its loop stopped).
    @discardableResult
    public func send(_ message: WebSocketMessage) -> Bool {
        guard isOpen else { return false }
        if loop.inEventLoop {
            return connection.withLock { $0 }?.sendMessage(message) ?? false
        }
        let size: Int
        switch message {
        case .text(let text): size = text.utf8.count
        case .binary(let bytes): size = bytes.count
        }
        let total = bytesInTransit.add(size, ordering: .relaxed).newValue
        guard total <= maxBytesInTransit else {
            // The loop is not keeping up with this sender (or the peer is not reading):
            // close rather than buffer without bound.
            bytesInTransit.subtract(size, ordering: .relaxed)
            loop.execute { [self] in self.connection.withLock { $0 }?.abort(reason: "send queue over \(maxBytesInTransit) bytes") }
            return false
        }
        return loop.execute { [self] in
            self.bytesInTransit.subtract(size, ordering: .relaxed)
            _ = self.connection.withLock { $0 }?.sendMessage(message)
        }
    }

    /// Sends a text message; see `send(_:)`.
    @discardableResult
    public func send(text: String) -> Bool { send(.text(text)) }

    /// Starts the close handshake with `code` (1000 by default; 4000-4999 for the
    /// application's own codes). `onClose` follows when the peer answers or the
    /// handshake timeout passes.
    public func close(code: WebSocketCloseCode = .normalClosure, reason: String = "") {
        guard isOpen else { return }
        let close = WebSocketClose(code: code, reason: reason)
        if loop.inEventLoop {
            connection.withLock { $0 }?.closeWebSocket(close)
        } else {
            loop.execute { [self] in self.connection.withLock { $0 }?.closeWebSocket(close) }
        }
    }

    public static func == (a: EdgeWebSocket, b: EdgeWebSocket) -> Bool { a === b }
    public func hash(into hasher: inout Hasher) { hasher.combine(id) }
    public var description: String { "ws#\(id) \(remoteAddress) \(request.path)" }
}
