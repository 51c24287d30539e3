public import ParleyNetCore
public import ParleyWebSocket
public import ParleyCrypto

/// Every failure a `WebSocketClient` reports: connecting, the TLS and WebSocket
/// handshakes, sending or receiving.
public struct WebSocketClientError: Error, Sendable, CustomStringConvertible {
    private enum Code: Sendable {
        case network(NetError)
        case handshake(WebSocketError)
        case rejected(status: Int, reason: String)
        case timedOut(String)
        case closed
        case invalidArgument(String)
        case tls(CryptoError)
    }

    private let code: Code
    private init(_ code: Code) { self.code = code }

    static func network(_ error: NetError) -> WebSocketClientError { WebSocketClientError(.network(error)) }
    static func handshake(_ error: WebSocketError) -> WebSocketClientError { WebSocketClientError(.handshake(error)) }
    static func rejected(status: Int, reason: String) -> WebSocketClientError {
        WebSocketClientError(.rejected(status: status, reason: reason))
    }
    static func timedOut(_ what: String) -> WebSocketClientError { WebSocketClientError(.timedOut(what)) }
    static var closed: WebSocketClientError { WebSocketClientError(.closed) }
    static func invalidArgument(_ what: String) -> WebSocketClientError { WebSocketClientError(.invalidArgument(what)) }
    static func tls(_ error: CryptoError) -> WebSocketClientError { WebSocketClientError(.tls(error)) }

    /// The TLS error, if TLS failed: a handshake that failed, or a server certificate
    /// that did not verify (`tlsError?.kind == .certificateRejected`).
    public var tlsError: CryptoError? {
        if case .tls(let error) = code { return error }
        return nil
    }

    /// The socket error underneath, if that is what failed.
    public var networkError: NetError? {
        if case .network(let error) = code { return error }
        return nil
    }

    /// The WebSocket handshake error, if the server's answer was not a valid 101.
    public var handshakeError: WebSocketError? {
        if case .handshake(let error) = code { return error }
        return nil
    }

    /// The HTTP status when the server refused the upgrade (e.g. 403, 404, 503).
    public var rejectedStatus: Int? {
        if case .rejected(let status, _) = code { return status }
        return nil
    }

    /// True when an operation gave up after its timeout.
    public var isTimedOut: Bool {
        switch code {
        case .timedOut: return true
        case .network(let error): return error.isTimedOut
        default: return false
        }
    }

    /// True when the connection is already closed.
    public var isClosed: Bool {
        if case .closed = code { return true }
        return false
    }

    public var description: String {
        switch code {
        case .network(let error): return "network: \(error)"
        case .handshake(let error): return "WebSocket handshake: \(error)"
        case .rejected(let status, let reason): return "server refused the upgrade: \(status) \(reason)"
        case .timedOut(let what): return "\(what) timed out"
        case .closed: return "connection is closed"
        case .invalidArgument(let what): return "invalid argument: \(what)"
        case .tls(let error): return "TLS: \(error)"
        }
    }
}
