public import ParleyNetCore
public import ParleyHTTP
public import ParleyWebSocket
import Synchronization

/// The application's answer to a WebSocket upgrade request.
public enum WebSocketAcceptance: Sendable {
    /// Switch protocols, choosing one of the offered subprotocols or none.
    case accept(subprotocol: String? = nil)
    /// Refuse with an HTTP status (e.g. 401, 403) and a one-line message; the connection closes.
    case reject(status: Int, message: String)
    /// Refuse with this response (e.g. 426 with a JSON body); the connection closes.
    case respond(HTTPResponse)
}

/// What the server does with WebSocket connections on `path`.
///
/// Callbacks run on the connection's event loop thread, in order for one connection;
/// they must not block (hand long work to another thread and answer with
/// `EdgeWebSocket.send`, which any thread may call).
public struct WebSocketRoute: Sendable {
    /// The request path (without query) that upgrades, e.g. `/v1/ws`.
    public var path: String
    /// Decides whether to accept an upgrade (authentication by token, origin checks).
    public var accept: @Sendable (WebSocketUpgradeRequest, SocketAddress) -> WebSocketAcceptance
    /// The connection is open (after the 101 was queued).
    public var onOpen: @Sendable (EdgeWebSocket) -> Void
    /// A message arrived.
    public var onMessage: @Sendable (EdgeWebSocket, WebSocketMessage) -> Void
    /// The connection closed: the close code and reason the peer sent, or the one this
    /// side failed it with (1008 rate, 1009 size, 1002 protocol, 1006 lost, 1001 idle or
    /// shutdown). Called exactly once per opened connection.
    public var onClose: @Sendable (EdgeWebSocket, WebSocketClose) -> Void
    /// Who closes a connection over the message rate (`maxMessagesPerSecond`,
    /// `messageBurst`). nil: the edge, at once, with `rateLimitCloseCode`; replies the
    /// application is still preparing on other threads are then lost. Set: the edge stops
    /// delivering the connection's messages (the message over the rate and everything after
    /// it is dropped unread), calls this once, and leaves the close to the application,
    /// which answers what it was given first and then calls `EdgeWebSocket.close`: the
    /// messages it sent before are written, then the close frame, then the connection
    /// closes without waiting for the peer's close frame. Without that call within
    /// `handshakeTimeout` the edge closes with `rateLimitCloseCode`.
    public var onRateLimited: (@Sendable (EdgeWebSocket) -> Void)?

    /// A route; `accept` defaults to accepting without a subprotocol.
    public init(path: String,
                accept: @escaping @Sendable (WebSocketUpgradeRequest, SocketAddress) -> WebSocketAcceptance = { _, _ in .accept() },
                onOpen: @escaping @Sendable (EdgeWebSocket) -> Void = { _ in },
                onMessage: @escaping @Sendable (EdgeWebSocket, WebSocketMessage) -> Void,
                onClose: @escaping @Sendable (EdgeWebSocket, WebSocketClose) -> Void = { _, _ in },
                onRateLimited: (@Sendable (EdgeWebSocket) -> Void)? = nil) {
        self.path = path
        self.accept = accept
        self.onOpen = onOpen
        self.onMessage = onMessage
        self.onClose = onClose
        self.onRateLimited = onRateLimited
    }
}

/// Who sent an HTTP request.
public struct EdgeRequestContext: Sendable, Hashable {
    /// The client's address.
    public let remoteAddress: SocketAddress
    /// The address the client connected to.
    public let localAddress: SocketAddress
    /// Identifies the TCP connection within this server (stable over keep-alive requests).
    public let connectionID: UInt64
}

/// Answers one HTTP request later, from any thread, exactly once. Until it does, the
/// connection reads no further request (responses stay in request order); if it is never
/// called the connection is closed by the idle timeout.
public final class EdgeResponder: Sendable {
    private let deliver: @Sendable (HTTPResponse) -> Void
    private let used = Mutex(false)

    init(_ deliver: @escaping @Sendable (HTTPResponse) -> Void) { self.deliver = deliver }

    /// Sends the response; later calls do nothing.
    public func respond(_ response: HTTPResponse) {
        let first = used.withLock { used -> Bool in
            defer { used = true }
            return !used
        }
        if first { deliver(response) }
    }
}

/// The application side of an `EdgeServer`: a function answering HTTP requests (REST,
/// `/healthz`, `/metrics`) and an optional WebSocket route.
public struct EdgeHandlers: Sendable {
    enum HTTPHandler: Sendable {
        case immediate(@Sendable (HTTPRequest, EdgeRequestContext) -> HTTPResponse)
        case deferred(@Sendable (HTTPRequest, EdgeRequestContext, EdgeResponder) -> Void)
    }

    let http: HTTPHandler
    /// The WebSocket route, if any.
    public var webSocket: WebSocketRoute?

    /// Handlers answering each request at once, on the loop thread (it must not block);
    /// `http` defaults to `404 Not Found` for everything.
    public init(http: @escaping @Sendable (HTTPRequest, EdgeRequestContext) -> HTTPResponse = { _, _ in
                    HTTPResponse.text(status: 404, "not found\n")
                },
                webSocket: WebSocketRoute? = nil) {
        self.http = .immediate(http)
        self.webSocket = webSocket
    }

    /// Handlers answering requests later: `http` gets an `EdgeResponder` to call from any
    /// thread once the answer is ready (e.g. after asking the call actor or the store).
    public init(deferredHTTP http: @escaping @Sendable (HTTPRequest, EdgeRequestContext, EdgeResponder) -> Void,
                webSocket: WebSocketRoute? = nil) {
        self.http = .deferred(http)
        self.webSocket = webSocket
    }
}
