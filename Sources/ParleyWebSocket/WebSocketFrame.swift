internal import ParleyWireCore

/// One WebSocket frame (RFC 6455 §5.2), payload held unmasked.
///
/// ```
///  0                   1                   2                   3
///  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
/// +-+-+-+-+-------+-+-------------+-------------------------------+
/// |F|R|R|R| opcode|M| Payload len |    Extended payload length    |
/// |I|S|S|S|  (4)  |A|     (7)     |             (16/64)           |
/// |N|V|V|V|       |S|             |   (if payload len==126/127)   |
/// | |1|2|3|       |K|             |                               |
/// +-+-+-+-+-------+-+-------------+ - - - - - - - - - - - - - - - +
/// |     Extended payload length continued, if payload len == 127  |
/// + - - - - - - - - - - - - - - - +-------------------------------+
/// |                               |Masking-key, if MASK set to 1  |
/// +-------------------------------+-------------------------------+
/// | Masking-key (continued)       |          Payload Data         |
/// +-------------------------------- - - - - - - - - - - - - - - - +
/// ```
///
/// A frame with a `maskingKey` is a client frame and is masked when serialized; a server
/// frame has none (§5.1). Serialization always writes the length in the fewest bytes.
public struct WebSocketFrame: Sendable, Hashable, Encodable, CustomStringConvertible {
    /// Last frame of its message.
    public var fin: Bool
    /// Reserved bits; nonzero only under a negotiated extension.
    public var rsv1: Bool
    /// Reserved bit 2.
    public var rsv2: Bool
    /// Reserved bit 3.
    public var rsv3: Bool
    /// What the payload is.
    public var opcode: WebSocketOpcode
    /// The client's masking key; nil for server frames.
    public var maskingKey: WebSocketMaskingKey?
    /// Application data, unmasked.
    public var payload: [UInt8]

    /// A frame from its fields; defaults make a final, unmasked frame with no reserved bits.
    public init(fin: Bool = true, rsv1: Bool = false, rsv2: Bool = false, rsv3: Bool = false,
                opcode: WebSocketOpcode, maskingKey: WebSocketMaskingKey? = nil, payload: [UInt8] = []) {
        self.fin = fin
        self.rsv1 = rsv1
        self.rsv2 = rsv2
        self.rsv3 = rsv3
        self.opcode = opcode
        self.maskingKey = maskingKey
        self.payload = payload
    }

    // MARK: Building frames

    /// A single-frame text message.
    public static func text(_ text: String, maskingKey: WebSocketMaskingKey? = nil) -> WebSocketFrame {
        WebSocketFrame(opcode: .text, maskingKey: maskingKey, payload: Array(text.utf8))
    }

    /// A single-frame binary message.
    public static func binary(_ bytes: [UInt8], maskingKey: WebSocketMaskingKey? = nil) -> WebSocketFrame {
        WebSocketFrame(opcode: .binary, maskingKey: maskingKey, payload: bytes)
    }

    /// A ping; `payload` should be at most 125 bytes to be valid.
    public static func ping(_ payload: [UInt8] = [], maskingKey: WebSocketMaskingKey? = nil) -> WebSocketFrame {
        WebSocketFrame(opcode: .ping, maskingKey: maskingKey, payload: payload)
    }

    /// A pong, normally echoing a ping's payload (§5.5.3).
    public static func pong(_ payload: [UInt8] = [], maskingKey: WebSocketMaskingKey? = nil) -> WebSocketFrame {
        WebSocketFrame(opcode: .pong, maskingKey: maskingKey, payload: payload)
    }

    /// A close frame; its reason is cut to fit the 125-byte control frame limit.
    public static func close(_ close: WebSocketClose, maskingKey: WebSocketMaskingKey? = nil) -> WebSocketFrame {
        WebSocketFrame(opcode: .close, maskingKey: maskingKey, payload: close.payload)
    }

    // MARK: Serializing

    /// Bytes of the serialized frame: header, extended length, key, payload.
    public var serializedCount: Int {
        let count = payload.count
        let lengthBytes = count < 126 ? 0 : (count <= 0xffff ? 2 : 8)
        return 2 + lengthBytes + (maskingKey == nil ? 0 : 4) + count
    }

    /// The frame on the wire, masked with `maskingKey` if there is one.
    public func serialized() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(serializedCount)
        serialize(into: &out)
        return out
    }

    /// Appends the frame on the wire to `out`.
    ///
    /// Any field value is written as given (a 200-byte ping, a reserved opcode) so that
    /// invalid frames can be produced to test a peer; the parser is the one that judges.
    public func serialize(into out: inout [UInt8]) {
        var first = opcode.rawValue
        if fin { first |= 0x80 }
        if rsv1 { first |= 0x40 }
        if rsv2 { first |= 0x20 }
        if rsv3 { first |= 0x10 }
        out.append(first)
        let maskBit: UInt8 = maskingKey == nil ? 0 : 0x80
        let count = payload.count
        // §5.2: the minimal number of bytes MUST be used to encode the length.
        if count < 126 {
            out.append(maskBit | UInt8(count))
        } else if count <= 0xffff {
            out.append(maskBit | 126)
            out.appendUInt16(UInt16(count))
        } else {
            out.append(maskBit | 127)
            out.appendUInt64(UInt64(count))
        }
        if let maskingKey {
            out.appendUInt32(maskingKey.rawValue)
            let start = out.count
            out.append(contentsOf: payload)
            maskingKey.apply(to: &out, range: start..<out.count, phase: 0)
        } else {
            out.append(contentsOf: payload)
        }
    }

    // MARK: Parsing whole buffers

    /// Parses exactly one complete frame filling `bytes`.
    ///
    /// Throws `truncated` when `bytes` ends inside the frame, `trailingBytes` when bytes
    /// follow it, and any framing error the configuration makes one. The default
    /// configuration accepts masked and unmasked frames, for inspecting captures.
    public static func parse(_ bytes: some Sequence<UInt8>,
                             configuration: WebSocketFrameParser.Configuration = .inspecting) throws(WebSocketError) -> WebSocketFrame {
        var parser = WebSocketFrameParser(configuration: configuration)
        parser.append(bytes)
        guard let frame = try parser.nextFrame() else { throw parser.truncationError() }
        if parser.bufferedByteCount > 0 {
            throw WebSocketError(.trailingBytes, offset: parser.streamOffset,
                                 "\(parser.bufferedByteCount) bytes after the end of the frame")
        }
        return frame
    }

    /// Parses a run of complete frames filling `bytes` (for example a captured stream
    /// after the handshake). Throws `truncated` if the last frame is cut short.
    public static func parseAll(_ bytes: some Sequence<UInt8>,
                                configuration: WebSocketFrameParser.Configuration = .inspecting) throws(WebSocketError) -> [WebSocketFrame] {
        var parser = WebSocketFrameParser(configuration: configuration)
        parser.append(bytes)
        var frames: [WebSocketFrame] = []
        while let frame = try parser.nextFrame() { frames.append(frame) }
        try parser.finish()
        return frames
    }

    // MARK: Description and JSON

    public var description: String {
        var text = "\(opcode)\(fin ? "" : " (fin=0)") \(payload.count) bytes"
        if rsv1 || rsv2 || rsv3 { text += " rsv=\(rsv1 ? 1 : 0)\(rsv2 ? 1 : 0)\(rsv3 ? 1 : 0)" }
        if let maskingKey { text += " masked \(maskingKey)" }
        return text
    }

    private enum CodingKeys: String, CodingKey {
        case fin, rsv1, rsv2, rsv3, opcode, opcodeName, masked, maskingKey, payloadLength, payload, text, close, closeError
    }

    /// The JSON form printed by `parley inspect` (see docs/wire/websocket.md):
    /// every header field, the payload as lowercase hex, and for text frames `text`
    /// (null if the payload is not complete UTF-8), for close frames `close` (null if
    /// the payload is not a valid close body) and `closeError` (why it is not, else null),
    /// so a person debugging a peer sees the code the peer actually sent.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(fin, forKey: .fin)
        try container.encode(rsv1, forKey: .rsv1)
        try container.encode(rsv2, forKey: .rsv2)
        try container.encode(rsv3, forKey: .rsv3)
        try container.encode(opcode.rawValue, forKey: .opcode)
        try container.encode(opcode.description, forKey: .opcodeName)
        try container.encode(maskingKey != nil, forKey: .masked)
        try container.encode(maskingKey?.description, forKey: .maskingKey)
        try container.encode(payload.count, forKey: .payloadLength)
        try container.encode(Hex.encode(payload), forKey: .payload)
        if opcode == .text {
            var validator = UTF8Validator()
            let valid = validator.validate(payload) == nil && validator.isAtBoundary
            try container.encode(valid ? String(decoding: payload, as: UTF8.self) : nil, forKey: .text)
        }
        if opcode == .close {
            let parsed: Result<WebSocketClose, WebSocketError>
            do throws(WebSocketError) { parsed = .success(try WebSocketClose.parse(payload: payload)) } catch { parsed = .failure(error) }
            switch parsed {
            case .success(let close):
                try container.encode(close, forKey: .close)
                try container.encodeNil(forKey: .closeError)
            case .failure(let error):
                try container.encodeNil(forKey: .close)
                try container.encode(error, forKey: .closeError)
            }
        }
    }
}
