internal import ParleyWireCore

/// What a `WebSocketConnection` tells its owner after reading bytes: messages to deliver
/// and frames to send. The owner carries these out; the connection does no I/O.
public enum WebSocketEvent: Sendable, Hashable, Encodable, CustomStringConvertible {
    /// A complete text message (validated UTF-8).
    case text(String)
    /// A complete binary message.
    case binary([UInt8])
    /// A pong arrived with this payload.
    case pong([UInt8])
    /// A ping arrived: send a pong with this payload (§5.5.2).
    case sendPong([UInt8])
    /// The peer started the close handshake: send a close frame with this content
    /// (§5.5.1, echoing the peer's code). A server then closes the transport; a client
    /// waits for the server to (§7.1.1).
    case sendClose(WebSocketClose)
    /// The close handshake is over (or the transport ended, code 1006): what the peer
    /// sent. No more messages follow.
    case closed(WebSocketClose)
    /// The peer broke the protocol: send a close frame with `error.close` (code 1002,
    /// 1007 or 1009) and close the transport (§7.1.7). No more events follow.
    case failConnection(WebSocketError)

    public var description: String {
        switch self {
        case .text(let text): return "text \(text.utf8.count) bytes"
        case .binary(let bytes): return "binary \(bytes.count) bytes"
        case .pong(let bytes): return "pong \(bytes.count) bytes"
        case .sendPong(let bytes): return "send pong \(bytes.count) bytes"
        case .sendClose(let close): return "send \(close)"
        case .closed(let close): return "closed by peer: \(close)"
        case .failConnection(let error): return "fail connection: \(error)"
        }
    }

    private enum CodingKeys: String, CodingKey { case event, text, payload, close, error }

    /// `{"event": "text", "text": "..."}`, `{"event": "binary"|"pong"|"sendPong", "payload": "<hex>"}`,
    /// `{"event": "sendClose"|"closed", "close": {...}}`, `{"event": "failConnection", "error": {...}}`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .text(let text):
            try container.encode("text", forKey: .event)
            try container.encode(text, forKey: .text)
        case .binary(let bytes):
            try container.encode("binary", forKey: .event)
            try container.encode(Hex.encode(bytes), forKey: .payload)
        case .pong(let bytes):
            try container.encode("pong", forKey: .event)
            try container.encode(Hex.encode(bytes), forKey: .payload)
        case .sendPong(let bytes):
            try container.encode("sendPong", forKey: .event)
            try container.encode(Hex.encode(bytes), forKey: .payload)
        case .sendClose(let close):
            try container.encode("sendClose", forKey: .event)
            try container.encode(close, forKey: .close)
        case .closed(let close):
            try container.encode("closed", forKey: .event)
            try container.encode(close, forKey: .close)
        case .failConnection(let error):
            try container.encode("failConnection", forKey: .event)
            try container.encode(error, forKey: .error)
        }
    }
}

/// Which end of the connection this is; decides the masking rules (§5.1).
public enum WebSocketRole: String, Sendable, Hashable, Encodable {
    /// Reads masked frames, sends unmasked ones.
    case server
    /// Reads unmasked frames, sends masked ones.
    case client
}
