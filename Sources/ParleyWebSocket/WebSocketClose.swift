import ParleyWireCore
/// The content of a close frame: an optional status code and a UTF-8 reason
/// (RFC 6455 §5.5.1).
///
/// ```
///  0                   1
/// +-------------------------------+-------------------- - - -
/// | status code (16 bits, BE)     | reason (UTF-8, up to 123 bytes)
/// +-------------------------------+-------------------- - - -
/// ```
/// An empty payload carries neither; then `code` is nil (reported locally as 1005).
public struct WebSocketClose: Sendable, Hashable, Encodable, CustomStringConvertible {
    /// The status code, nil when the close frame had an empty payload.
    public var code: WebSocketCloseCode?
    /// The reason text, possibly empty. Always empty when `code` is nil.
    public var reason: String

    /// Longest reason that fits a control frame next to the two-byte code.
    public static let maxReasonBytes = 123

    /// A close with `code` (nil for an empty close body) and `reason`.
    public init(code: WebSocketCloseCode?, reason: String = "") {
        self.code = code
        self.reason = reason
    }

    /// Parses a close frame payload. `offset` is the stream offset of the payload's first
    /// byte, for error positions.
    ///
    /// Throws `invalidClosePayload` for a one-byte payload, `invalidCloseCode` for a code
    /// not allowed on the wire (both map to 1002) and `invalidCloseReason` for a reason
    /// that is not UTF-8 (1007).
    public static func parse(payload: some Collection<UInt8>, offset: Int = 0) throws(WebSocketError) -> WebSocketClose {
        let bytes = Array(bytes: payload)
        if bytes.isEmpty { return WebSocketClose(code: nil) }
        guard bytes.count >= 2 else {
            throw WebSocketError(.invalidClosePayload, offset: offset,
                                 "a close payload is empty or starts with a 2-byte code, got 1 byte")
        }
        let code = WebSocketCloseCode(rawValue: UInt16(bytes[0]) << 8 | UInt16(bytes[1]))
        guard code.isAllowedOnWire else {
            throw WebSocketError(.invalidCloseCode, offset: offset, "close code \(code.rawValue) may not be sent in a close frame")
        }
        var validator = UTF8Validator()
        let reasonBytes = bytes[2...]
        if let bad = validator.validate(reasonBytes) {
            throw WebSocketError(.invalidCloseReason, offset: offset + 2 + bad, "invalid UTF-8 byte in close reason")
        }
        guard validator.isAtBoundary else {
            throw WebSocketError(.invalidCloseReason, offset: offset + bytes.count, "close reason ends inside a UTF-8 sequence")
        }
        return WebSocketClose(code: code, reason: String(decoding: reasonBytes, as: UTF8.self))
    }

    /// The close frame payload: empty when `code` is nil, else the code and the reason cut
    /// to at most 123 bytes at a character boundary so the frame stays a valid control
    /// frame.
    public var payload: [UInt8] {
        guard let code else { return [] }
        var out: [UInt8] = [UInt8(code.rawValue >> 8), UInt8(truncatingIfNeeded: code.rawValue)]
        let text = Array(reason.utf8)
        var cut = min(text.count, Self.maxReasonBytes)
        // Back off past continuation bytes (10xxxxxx) so no character is split.
        while cut < text.count, cut > 0, text[cut] & 0xc0 == 0x80 { cut -= 1 }
        out.append(contentsOf: text[0..<cut])
        return out
    }

    public var description: String {
        guard let code else { return "close (no status)" }
        return reason.isEmpty ? "close \(code)" : "close \(code): \(reason)"
    }

    private enum CodingKeys: String, CodingKey { case code, codeName, reason }

    /// `{"code": 1000, "codeName": "normalClosure", "reason": "bye"}`; code and codeName
    /// are null for an empty close payload.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(code?.rawValue, forKey: .code)
        try container.encode(code?.name, forKey: .codeName)
        try container.encode(reason, forKey: .reason)
    }
}
