public import ParleyHTTP
/// The client's opening handshake: an HTTP/1.1 GET asking to upgrade (RFC 6455 §4.1).
///
/// ```
/// GET /chat?room=7 HTTP/1.1
/// Host: server.example.com
/// Upgrade: websocket
/// Connection: Upgrade
/// Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==
/// Sec-WebSocket-Version: 13
/// Sec-WebSocket-Protocol: chat, superchat
/// ```
///
/// A server gets one from the request its HTTP parser already read, with
/// `init(validating:)`, which checks every requirement of §4.2.1 (the head is never
/// parsed a second time, by a second grammar); `parse(_:)` does the same for a head given
/// as bytes. A client builds one with `init(target:host:key:...)` and sends `serialized()`.
public struct WebSocketUpgradeRequest: Sendable, Hashable, Encodable {
    /// Always `GET` once parsed.
    public let method: String
    /// The request-target as sent, e.g. `/chat?room=7`.
    public let target: String
    /// Always `HTTP/1.1` once parsed.
    public let version: String
    /// Every header field as received (or as built), in order.
    public let headers: WebSocketHTTPHeaders

    /// The target up to `?`.
    public let path: String
    /// The target after the first `?`, undecoded; nil if there is no `?`.
    public let query: String?
    /// The Host header.
    public let host: String
    /// The Sec-WebSocket-Key header value, as sent (verified to be base64 of 16 bytes).
    public let key: String
    /// Offered subprotocols in preference order (Sec-WebSocket-Protocol, §4.1 item 10).
    public let subprotocols: [String]
    /// Offered extensions, each element as written with its parameters
    /// (Sec-WebSocket-Extensions, §9.1). This module accepts none of them.
    public let extensions: [String]
    /// The Origin header, sent by browsers (§4.1 item 8, §10.2).
    public let origin: String?

    /// Builds a client request. `key` comes from 16 random bytes the caller drew.
    /// Throws `invalidArgument` if the target, host, a subprotocol or an extra header
    /// could not be written safely.
    public init(target: String, host: String, key: WebSocketKey, subprotocols: [String] = [], origin: String? = nil,
                additionalHeaders: [(name: String, value: String)] = []) throws(WebSocketError) {
        guard target.first == "/", target.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7f }) else {
            throw WebSocketError(.invalidArgument, "request target \"\(target)\" must start with / and hold only visible ASCII")
        }
        for proto in subprotocols where !HTTPGrammar.isToken(proto) {
            throw WebSocketError(.invalidArgument, "subprotocol \"\(proto)\" is not an HTTP token")
        }
        var headers = WebSocketHTTPHeaders()
        try headers.add(name: "Host", value: host)
        try headers.add(name: "Upgrade", value: "websocket")
        try headers.add(name: "Connection", value: "Upgrade")
        try headers.add(name: "Sec-WebSocket-Key", value: key.base64)
        try headers.add(name: "Sec-WebSocket-Version", value: "13")
        if !subprotocols.isEmpty { try headers.add(name: "Sec-WebSocket-Protocol", value: subprotocols.joined(separator: ", ")) }
        if let origin { try headers.add(name: "Origin", value: origin) }
        for header in additionalHeaders { try headers.add(name: header.name, value: header.value) }
        self = try WebSocketUpgradeRequest(method: "GET", target: target, version: "HTTP/1.1", headers: headers)
    }

    /// Checks that `request`, as `HTTPRequestParser` read it, is a WebSocket opening
    /// handshake (§4.2.1): a GET of a path over HTTP/1.1 with one Host, Upgrade websocket,
    /// Connection upgrade, Sec-WebSocket-Version 13 and a valid key. Throws with
    /// `httpStatus` set to the answer (`WebSocketUpgradeResponse.rejecting(_:)`): 400, 405
    /// for another method, 505 for HTTP/1.0, 426 for another WebSocket version.
    public init(validating request: HTTPRequest) throws(WebSocketError) {
        guard request.target.first == "/" else {
            // §4.1 item 3 / §3: the Request-URI is a path with an optional query.
            throw WebSocketError(.malformedHTTP, offset: request.streamOffset + request.method.utf8.count + 1, line: 1,
                                 "request target must be a path starting with /")
        }
        try self.init(method: request.method, target: request.target, version: request.version.rawValue,
                      headers: WebSocketHTTPHeaders(request.headers))
    }

    /// Checks the handshake rules of §4.2.1 and fills the derived fields.
    private init(method: String, target: String, version: String, headers: WebSocketHTTPHeaders) throws(WebSocketError) {
        // Errors found here have no byte position of their own; the line number of the
        // start line or of the offending header would be the most a reader could use.
        guard method == "GET" else {
            throw WebSocketError(.methodNotAllowed, line: 1, "method \(method); a WebSocket upgrade must be GET")
        }
        guard version == "HTTP/1.1" else {
            throw WebSocketError(.unsupportedHTTPVersion, line: 1, "\(version); a WebSocket upgrade needs HTTP/1.1")
        }
        let hosts = headers["Host"]
        guard hosts.count == 1, let host = hosts.first else {
            throw WebSocketError(hosts.isEmpty ? .missingHeader : .invalidHeader, line: Self.line(of: "Host", in: headers),
                                 hosts.isEmpty ? "no Host header" : "\(hosts.count) Host headers; exactly one is allowed")
        }
        guard headers.first("Upgrade") != nil else {
            throw WebSocketError(.missingHeader, "no Upgrade header")
        }
        guard headers.containsToken("websocket", in: "Upgrade") else {
            throw WebSocketError(.invalidHeader, line: Self.line(of: "Upgrade", in: headers), "Upgrade does not name websocket")
        }
        guard headers.first("Connection") != nil else {
            throw WebSocketError(.missingHeader, "no Connection header")
        }
        guard headers.containsToken("upgrade", in: "Connection") else {
            throw WebSocketError(.invalidHeader, line: Self.line(of: "Connection", in: headers), "Connection does not contain the upgrade token")
        }
        // §4.4: a version the server does not speak gets 426 naming the ones it does.
        let versions = headers["Sec-WebSocket-Version"]
        guard versions == ["13"] else {
            throw WebSocketError(.unsupportedVersion, line: Self.line(of: "Sec-WebSocket-Version", in: headers),
                                 versions.isEmpty ? "no Sec-WebSocket-Version header" : "Sec-WebSocket-Version \(versions.joined(separator: ", ")); only 13 is supported")
        }
        let keys = headers["Sec-WebSocket-Key"]
        guard keys.count == 1, let key = keys.first else {
            throw WebSocketError(keys.isEmpty ? .missingHeader : .invalidKey, line: Self.line(of: "Sec-WebSocket-Key", in: headers),
                                 keys.isEmpty ? "no Sec-WebSocket-Key header" : "\(keys.count) Sec-WebSocket-Key headers; exactly one is allowed")
        }
        guard WebSocketKey(base64: key) != nil else {
            throw WebSocketError(.invalidKey, line: Self.line(of: "Sec-WebSocket-Key", in: headers),
                                 "Sec-WebSocket-Key \"\(key)\" is not base64 of 16 bytes")
        }
        let subprotocols = headers.listElements("Sec-WebSocket-Protocol")
        if let bad = subprotocols.first(where: { !HTTPGrammar.isToken($0) }) {
            throw WebSocketError(.invalidHeader, line: Self.line(of: "Sec-WebSocket-Protocol", in: headers),
                                 "subprotocol \"\(bad)\" is not an HTTP token")
        }
        self.method = method
        self.target = target
        self.version = version
        self.headers = headers
        if let mark = target.firstIndex(of: "?") {
            path = String(target[..<mark])
            query = String(target[target.index(after: mark)...])
        } else {
            path = target
            query = nil
        }
        self.host = host
        self.key = key
        self.subprotocols = subprotocols
        extensions = headers.listElements("Sec-WebSocket-Extensions")
        origin = headers.first("Origin")
    }

    /// 1-based line of the first header named `name` (the start line is line 1).
    private static func line(of name: String, in headers: WebSocketHTTPHeaders) -> Int? {
        headers.fields.firstIndex { HTTPGrammar.equalsIgnoringCase($0.name, name) }.map { $0 + 2 }
    }

    /// Parses an upgrade request head given as bytes (as `WebSocketHandshakeReader`
    /// returns it: ending with CRLF CRLF, nothing after) with ParleyHTTP's request parser,
    /// then checks it as `init(validating:)` does.
    ///
    /// Throws with `httpStatus` set to what the server should answer: 400 for malformed
    /// heads, missing or bad headers and keys; 405 for a method other than GET; 505 for
    /// an HTTP version other than 1.1; 426 when Sec-WebSocket-Version is not 13; 431 for
    /// too many header fields. `WebSocketUpgradeResponse.rejecting(_:)` builds that answer.
    public static func parse(_ head: some Sequence<UInt8>) throws(WebSocketError) -> WebSocketUpgradeRequest {
        let bytes = Array(bytes: head)
        try WebSocketError.checkCompleteHead(bytes)
        let limits = HTTPRequestParser.Limits(maxRequestLineLength: max(8192, bytes.count), maxHeadSize: max(16384, bytes.count),
                                              maxHeaderCount: WebSocketError.maxHeadFieldCount)
        var parser = HTTPRequestParser(limits: limits)
        parser.append(bytes)
        let request: HTTPRequest?
        do { request = try parser.next() } catch { throw WebSocketError(http: error, in: bytes) }
        guard let request else {
            throw WebSocketError(.malformedHTTP, offset: 0, line: 1, parser.isMidRequest
                                 ? "the head announces a body; an upgrade request is a head alone"
                                 : "HTTP head has no request line")
        }
        return try WebSocketUpgradeRequest(validating: request)
    }

    /// The request on the wire: request line, headers, empty line.
    public func serialized() -> [UInt8] {
        var out: [UInt8] = []
        out.append(contentsOf: "\(method) \(target) \(version)\r\n".utf8)
        headers.serialize(into: &out)
        out.append(contentsOf: "\r\n".utf8)
        return out
    }

    private enum CodingKeys: String, CodingKey {
        case method, target, path, query, version, host, key, webSocketVersion, subprotocols, extensions, origin, headers
    }

    /// Every field; `query` and `origin` are null when absent (docs/wire/websocket.md).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(method, forKey: .method)
        try container.encode(target, forKey: .target)
        try container.encode(path, forKey: .path)
        try container.encode(query, forKey: .query)
        try container.encode(version, forKey: .version)
        try container.encode(host, forKey: .host)
        try container.encode(key, forKey: .key)
        try container.encode(headers.first("Sec-WebSocket-Version"), forKey: .webSocketVersion)
        try container.encode(subprotocols, forKey: .subprotocols)
        try container.encode(extensions, forKey: .extensions)
        try container.encode(origin, forKey: .origin)
        try container.encode(headers, forKey: .headers)
    }
}
