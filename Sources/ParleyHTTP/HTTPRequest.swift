internal import ParleyWireCore

/// The HTTP versions a server speaks (RFC 9112 §2.3).
public enum HTTPVersion: String, Sendable, Hashable, Encodable {
    /// `HTTP/1.0`: connections close after each response unless `Connection: keep-alive`.
    case http10 = "HTTP/1.0"
    /// `HTTP/1.1`: persistent connections unless `Connection: close`.
    case http11 = "HTTP/1.1"
}

/// One complete request as `HTTPRequestParser` produced it: head, decoded body, trailers.
public struct HTTPRequest: Sendable, Hashable, Encodable {
    /// The method token as sent (case-sensitive, RFC 9110 §9.1), e.g. `GET`.
    public let method: String
    /// The request-target as sent, e.g. `/v1/calls?user=alice`.
    public let target: String
    /// The target up to `?`.
    public let path: String
    /// The target after the first `?`, undecoded; nil without `?`.
    public let query: String?
    /// HTTP/1.0 or HTTP/1.1.
    public let version: HTTPVersion
    /// Header fields in order.
    public let headers: HTTPHeaders
    /// The body after transfer decoding (empty when there is none).
    public let body: [UInt8]
    /// Trailer fields of a chunked body (RFC 9112 §7.1.2); empty otherwise.
    public let trailers: HTTPHeaders
    /// Whether the connection stays open after the response (RFC 9112 §9.3): HTTP/1.1
    /// unless `Connection: close`, HTTP/1.0 only with `Connection: keep-alive`.
    public let keepAlive: Bool
    /// Whether the body came chunked.
    public let isChunked: Bool
    /// Offset of the request's first byte in the connection's stream.
    public let streamOffset: Int

    init(method: String, target: String, version: HTTPVersion, headers: HTTPHeaders, body: [UInt8], trailers: HTTPHeaders,
         keepAlive: Bool, isChunked: Bool, streamOffset: Int) {
        self.method = method
        self.target = target
        if let mark = target.firstIndex(of: "?") {
            path = String(target[..<mark])
            query = String(target[target.index(after: mark)...])
        } else {
            path = target
            query = nil
        }
        self.version = version
        self.headers = headers
        self.body = body
        self.trailers = trailers
        self.keepAlive = keepAlive
        self.isChunked = isChunked
        self.streamOffset = streamOffset
    }

    /// Whether the request asks to switch protocols (`Connection: upgrade` with an
    /// `Upgrade` header, RFC 9110 §7.8), e.g. a WebSocket opening handshake.
    public var isUpgrade: Bool {
        headers.contains("Upgrade") && headers.containsToken("upgrade", in: "Connection")
    }

    private enum CodingKeys: String, CodingKey {
        case method, target, path, query, version, headers, body, trailers, keepAlive, isChunked, streamOffset
    }

    /// Every field; `body` is lowercase hex, `query` null when absent.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(method, forKey: .method)
        try container.encode(target, forKey: .target)
        try container.encode(path, forKey: .path)
        try container.encode(query, forKey: .query)
        try container.encode(version, forKey: .version)
        try container.encode(headers, forKey: .headers)
        try container.encode(Hex.encode(body), forKey: .body)
        try container.encode(trailers, forKey: .trailers)
        try container.encode(keepAlive, forKey: .keepAlive)
        try container.encode(isChunked, forKey: .isChunked)
        try container.encode(streamOffset, forKey: .streamOffset)
    }
}
