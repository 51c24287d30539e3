import ParleyEdgeIO
import ParleyWebSocket

/// What the call engine needs of one WebSocket on `/v1/ws`: its id, where it comes from
/// (for logs), sending a text frame and closing it. The edge's `EdgeWebSocket` is the
/// running one; a test can hand the engine its own, so the engine runs with no socket.
protocol SignalingSocket: AnyObject, Sendable {
    /// The edge's connection id, unique while the server runs.
    var id: UInt64 { get }
    /// The peer's address as logs show it.
    var remoteDescription: String { get }
    /// Queues a text frame (dropped if the socket is closing).
    func sendText(_ text: String)
    /// Sends a close frame with `code` and `reason`, then closes.
    func close(code: UInt16, reason: String)
}

extension EdgeWebSocket: SignalingSocket {
    var remoteDescription: String { remoteAddress.description }

    func sendText(_ text: String) {
        _ = send(.text(text))
    }

    func close(code: UInt16, reason: String) {
        close(code: WebSocketCloseCode(rawValue: code), reason: reason)
    }
}
