import ParleyHTTP

/// What `parley inspect ws` shows for a capture: an opening handshake head (request or
/// response) if the bytes start with one, then every frame after it.
///
/// Frames are parsed leniently about masking (both directions may be in a capture) and
/// without a size limit beyond the bytes given; every other rule of RFC 6455 §5.2
/// applies, so a broken frame is reported with its offset.
public struct WebSocketInspection: Sendable, Hashable, Encodable {
    /// The upgrade request, if the input starts with one.
    public let request: WebSocketUpgradeRequest?
    /// The upgrade response, if the input starts with one.
    public let response: WebSocketUpgradeResponse?
    /// Frames after the head (or from the start if there is none).
    public let frames: [WebSocketFrame]

    /// Decodes `bytes`. Throws the first problem: a truncated or invalid head, a frame
    /// error, or a last frame cut short. Offsets of frame errors count from the start of
    /// `bytes`, head included.
    public static func inspect(_ bytes: [UInt8]) throws(WebSocketError) -> WebSocketInspection {
        let kind = headKind(bytes)
        guard kind != .none else {
            return WebSocketInspection(request: nil, response: nil, frames: try WebSocketFrame.parseAll(bytes))
        }
        guard let end = HTTPGrammar.endOfHead(in: bytes) else {
            try WebSocketError.checkCompleteHead(bytes)  // throws the truncation error with its line
            return WebSocketInspection(request: nil, response: nil, frames: [])
        }
        let head = Array(bytes[..<end])
        var request: WebSocketUpgradeRequest? = nil
        var response: WebSocketUpgradeResponse? = nil
        if kind == .response {
            response = try WebSocketUpgradeResponse.parse(head)
        } else {
            request = try WebSocketUpgradeRequest.parse(head)
        }
        var parser = WebSocketFrameParser(configuration: .inspecting)
        parser.append(bytes[end...])
        var frames: [WebSocketFrame] = []
        do {
            while let frame = try parser.nextFrame() { frames.append(frame) }
            try parser.finish()
        } catch {
            throw error.shifted(by: end)
        }
        return WebSocketInspection(request: request, response: response, frames: frames)
    }

    private enum HeadKind { case none, request, response }

    /// A response starts `HTTP/`; a request with an upper-case method and a space.
    private static func headKind(_ bytes: [UInt8]) -> HeadKind {
        if bytes.starts(with: "HTTP/".utf8) { return .response }
        var index = 0
        while index < bytes.count, bytes[index] >= UInt8(ascii: "A"), bytes[index] <= UInt8(ascii: "Z") { index += 1 }
        return index > 0 && index < bytes.count && bytes[index] == UInt8(ascii: " ") ? .request : .none
    }

    private enum CodingKeys: String, CodingKey { case request, response, frames }

    /// `{"request": {...}|null, "response": {...}|null, "frames": [...]}`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(request, forKey: .request)
        try container.encode(response, forKey: .response)
        try container.encode(frames, forKey: .frames)
    }
}

extension WebSocketError {
    /// The same error with its offset moved by `delta` (frames parsed after a head).
    func shifted(by delta: Int) -> WebSocketError {
        WebSocketError(kind, offset: offset.map { $0 + delta }, line: line, detail)
    }
}
