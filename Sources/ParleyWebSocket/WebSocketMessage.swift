/// A complete WebSocket message, as delivered and as sent: what the edge server's routes
/// and the `WebSocketClient` both hand over, once fragments are assembled.
public enum WebSocketMessage: Sendable, Hashable {
    /// A text message (valid UTF-8).
    case text(String)
    /// A binary message.
    case binary([UInt8])
}
