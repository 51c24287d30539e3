internal import ParleyWireCore

/// A response to serialize (RFC 9112 §4, §6): status line, headers, body framed by
/// Content-Length, or a head announcing a chunked body that `HTTPChunkedEncoder` frames.
///
/// ```swift
/// let response = HTTPResponse.json(status: 200, body: Array(#"{"ok":true}"#.utf8))
/// send(response.serialized(for: request))
/// ```
public struct HTTPResponse: Sendable, Hashable, Encodable {
    /// The status code, 100-999.
    public var status: Int
    /// The reason phrase; the standard one for the status by default.
    public var reason: String
    /// Header fields in order. `Content-Length`, `Transfer-Encoding` and `Connection` are
    /// written by the serializer; ones set here are replaced.
    public var headers: HTTPHeaders
    /// The body (ignored by `serializedHead(chunked:keepAlive:)`).
    public var body: [UInt8]

    /// A response; throws `invalidArgument` for a status outside 100-999 or a reason
    /// holding CR, LF or other controls.
    public init(status: Int, reason: String? = nil, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = []) throws(HTTPError) {
        guard (100...999).contains(status) else {
            throw HTTPError(.invalidArgument, offset: nil, "HTTP status \(status) is not three digits")
        }
        let reason = reason ?? Self.reasonPhrase(for: status)
        guard reason.utf8.allSatisfy(HTTPGrammar.isFieldValueCharacter) else {
            throw HTTPError(.invalidArgument, offset: nil, "reason phrase contains control characters")
        }
        self.status = status
        self.reason = reason
        self.headers = headers
        self.body = body
    }

    private init(trusted status: Int, headers: HTTPHeaders, body: [UInt8]) {
        self.status = status
        reason = Self.reasonPhrase(for: status)
        self.headers = headers
        self.body = body
    }

    /// A `text/plain; charset=utf-8` response; `status` is clamped to 100-999.
    public static func text(status: Int, _ text: String) -> HTTPResponse {
        var headers = HTTPHeaders()
        headers.addUnchecked(name: "Content-Type", value: "text/plain; charset=utf-8")
        return HTTPResponse(trusted: min(max(status, 100), 999), headers: headers, body: Array(text.utf8))
    }

    /// An `application/json` response with `body` as given; `status` is clamped to 100-999.
    public static func json(status: Int, body: [UInt8]) -> HTTPResponse {
        var headers = HTTPHeaders()
        headers.addUnchecked(name: "Content-Type", value: "application/json")
        return HTTPResponse(trusted: min(max(status, 100), 999), headers: headers, body: body)
    }

    /// The answer to a request the parser refused: `error.status` with a JSON body
    /// `{"code":"...","message":"..."}` (the same shape as every REST error), the code
    /// naming the status (`bad_request`, `too_large`, `uri_too_long`,
    /// `headers_too_large`, `not_implemented`, `http_version_not_supported`) and the
    /// message the error's description. The server closes the connection after sending it.
    public static func error(_ error: HTTPError) -> HTTPResponse {
        jsonError(status: error.status, message: error.description)
    }

    /// A JSON error body `{"code":..., "message":...}` with the code for `status`.
    public static func jsonError(status: Int, message: String) -> HTTPResponse {
        let code: String
        switch status {
        case 408: code = "request_timeout"
        case 413: code = "too_large"
        case 414: code = "uri_too_long"
        case 431: code = "headers_too_large"
        case 501: code = "not_implemented"
        case 505: code = "http_version_not_supported"
        case 503: code = "unavailable"
        default: code = "bad_request"
        }
        var body = JSONObject()
        body.append("code", code)
        body.append("message", message)
        return json(status: status, body: JSONWriter.serialize(.object(body)))
    }

    /// Whether the status forbids a body (1xx, 204, 304: RFC 9110 §6.4.1).
    public var forbidsBody: Bool { status < 200 || status == 204 || status == 304 }

    /// The response on the wire with a Content-Length body. `keepAlive` false adds
    /// `Connection: close`; `headRequest` true (a HEAD request) keeps the length but
    /// omits the body (RFC 9110 §9.3.2).
    public func serialized(keepAlive: Bool = true, headRequest: Bool = false) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(128 + headers.count * 32 + body.count)
        writeHead(into: &out, keepAlive: keepAlive, framing: forbidsBody ? nil : "Content-Length")
        if !forbidsBody && !headRequest { out.append(contentsOf: body) }
        return out
    }

    /// The response as the answer to `request`: keeps the connection if the request
    /// allows it, omits the body for HEAD.
    public func serialized(for request: HTTPRequest) -> [UInt8] {
        serialized(keepAlive: request.keepAlive, headRequest: request.method == "HEAD")
    }

    /// Only the head, announcing `Transfer-Encoding: chunked` (when `chunked`) for a body
    /// that follows in `HTTPChunkedEncoder` chunks. Chunked responses need HTTP/1.1.
    public func serializedHead(chunked: Bool, keepAlive: Bool = true) -> [UInt8] {
        var out: [UInt8] = []
        writeHead(into: &out, keepAlive: keepAlive, framing: chunked ? "Transfer-Encoding" : "Content-Length")
        return out
    }

    private func writeHead(into out: inout [UInt8], keepAlive: Bool, framing: String?) {
        out.append(contentsOf: "HTTP/1.1 \(status) \(reason)\r\n".utf8)
        for field in headers.fields {
            if HTTPGrammar.equalsIgnoringCase(field.name, "Content-Length")
                || HTTPGrammar.equalsIgnoringCase(field.name, "Transfer-Encoding")
                || HTTPGrammar.equalsIgnoringCase(field.name, "Connection") { continue }
            out.append(contentsOf: field.name.utf8)
            out.append(contentsOf: ": ".utf8)
            out.append(contentsOf: field.value.utf8)
            out.append(contentsOf: "\r\n".utf8)
        }
        switch framing {
        case "Content-Length": out.append(contentsOf: "Content-Length: \(body.count)\r\n".utf8)
        case "Transfer-Encoding": out.append(contentsOf: "Transfer-Encoding: chunked\r\n".utf8)
        default: break
        }
        if !keepAlive { out.append(contentsOf: "Connection: close\r\n".utf8) }
        out.append(contentsOf: "\r\n".utf8)
    }

    /// Standard reason phrases (RFC 9110 §15).
    public static func reasonPhrase(for status: Int) -> String {
        switch status {
        case 100: return "Continue"
        case 101: return "Switching Protocols"
        case 200: return "OK"
        case 201: return "Created"
        case 202: return "Accepted"
        case 204: return "No Content"
        case 301: return "Moved Permanently"
        case 302: return "Found"
        case 304: return "Not Modified"
        case 400: return "Bad Request"
        case 401: return "Unauthorized"
        case 403: return "Forbidden"
        case 404: return "Not Found"
        case 405: return "Method Not Allowed"
        case 408: return "Request Timeout"
        case 409: return "Conflict"
        case 413: return "Content Too Large"
        case 414: return "URI Too Long"
        case 426: return "Upgrade Required"
        case 429: return "Too Many Requests"
        case 431: return "Request Header Fields Too Large"
        case 500: return "Internal Server Error"
        case 501: return "Not Implemented"
        case 503: return "Service Unavailable"
        case 505: return "HTTP Version Not Supported"
        default: return "Status \(status)"
        }
    }

    private enum CodingKeys: String, CodingKey { case status, reason, headers, body }

    /// `{"status", "reason", "headers", "body"}` with the body as lowercase hex.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(status, forKey: .status)
        try container.encode(reason, forKey: .reason)
        try container.encode(headers, forKey: .headers)
        try container.encode(Hex.encode(body), forKey: .body)
    }
}

/// Frames a body as chunks (RFC 9112 §7.1) after `HTTPResponse.serializedHead(chunked: true)`.
public enum HTTPChunkedEncoder {
    /// One chunk: hex size, CRLF, data, CRLF. An empty `bytes` yields nothing (an empty
    /// chunk would end the body).
    public static func chunk(_ bytes: some Collection<UInt8>) -> [UInt8] {
        guard !bytes.isEmpty else { return [] }
        var out = Array(String(bytes.count, radix: 16).utf8)
        out.append(contentsOf: [0x0d, 0x0a])
        out.append(contentsOf: bytes)
        out.append(contentsOf: [0x0d, 0x0a])
        return out
    }

    /// The last chunk, optional trailer fields, and the final CRLF.
    public static func end(trailers: HTTPHeaders = HTTPHeaders()) -> [UInt8] {
        var out = Array("0\r\n".utf8)
        trailers.serialize(into: &out)
        out.append(contentsOf: [0x0d, 0x0a])
        return out
    }
}
