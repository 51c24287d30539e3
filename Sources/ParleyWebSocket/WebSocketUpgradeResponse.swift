internal import ParleyWireCore
import ParleyHTTP

/// The server's answer to an upgrade request (RFC 6455 §4.2.2): `101 Switching Protocols`
/// with Sec-WebSocket-Accept, or an error status.
///
/// ```
/// HTTP/1.1 101 Switching Protocols
/// Upgrade: websocket
/// Connection: Upgrade
/// Sec-WebSocket-Accept: s3pPLMBiTxaQ9EK+oHfc6cAW+PA=
/// ```
///
/// A server builds one with `accepting(_:subprotocol:)` or `rejecting(_:)`; a client
/// parses the head it received and checks it with `validate(for:)`.
public struct WebSocketUpgradeResponse: Sendable, Hashable, Encodable {
    /// The status code: 101 to accept.
    public let status: Int
    /// The reason phrase, e.g. `Switching Protocols`.
    public let reason: String
    /// `HTTP/1.1`.
    public let version: String
    /// Header fields in order.
    public let headers: WebSocketHTTPHeaders
    /// Body of an error response (a line of text naming the problem); empty for 101 and
    /// for parsed responses, whose body is not read.
    public let body: [UInt8]

    private init(status: Int, reason: String, version: String = "HTTP/1.1", headers: WebSocketHTTPHeaders, body: [UInt8] = []) {
        self.status = status
        self.reason = reason
        self.version = version
        self.headers = headers
        self.body = body
    }

    /// Sec-WebSocket-Accept, if present.
    public var accept: String? { headers.first("Sec-WebSocket-Accept") }

    /// The subprotocol the server chose (Sec-WebSocket-Protocol), if any.
    public var subprotocol: String? { headers.first("Sec-WebSocket-Protocol") }

    // MARK: Server side

    /// The 101 response accepting `request` (§4.2.2 item 5). `subprotocol` must be one the
    /// client offered, or nil to choose none; extensions are never accepted.
    /// Throws `invalidArgument` for a subprotocol not offered or an unwritable extra
    /// header, `cryptoFailure` if SHA-1 fails.
    public static func accepting(_ request: WebSocketUpgradeRequest, subprotocol: String? = nil,
                                 additionalHeaders: [(name: String, value: String)] = []) throws(WebSocketError) -> WebSocketUpgradeResponse {
        var headers = WebSocketHTTPHeaders()
        headers.addUnchecked(name: "Upgrade", value: "websocket")
        headers.addUnchecked(name: "Connection", value: "Upgrade")
        headers.addUnchecked(name: "Sec-WebSocket-Accept", value: try WebSocketKey.acceptValue(forKey: request.key))
        if let subprotocol {
            guard request.subprotocols.contains(subprotocol) else {
                throw WebSocketError(.invalidArgument, "subprotocol \"\(subprotocol)\" was not offered by the client")
            }
            headers.addUnchecked(name: "Sec-WebSocket-Protocol", value: subprotocol)
        }
        for header in additionalHeaders { try headers.add(name: header.name, value: header.value) }
        return WebSocketUpgradeResponse(status: 101, reason: "Switching Protocols", headers: headers)
    }

    /// The error response for a request `WebSocketUpgradeRequest.parse` rejected: the
    /// error's `httpStatus` (400 if it has none), `Sec-WebSocket-Version: 13` on 426
    /// (§4.4), `Allow: GET` on 405, `Connection: close`, and the error's summary as a
    /// plain-text body.
    public static func rejecting(_ error: WebSocketError) -> WebSocketUpgradeResponse {
        let status = error.httpStatus ?? 400
        var headers = WebSocketHTTPHeaders()
        if status == 426 { headers.addUnchecked(name: "Sec-WebSocket-Version", value: "13") }
        if status == 405 { headers.addUnchecked(name: "Allow", value: "GET") }
        return errorResponse(status: status, message: error.kind.summary, headers: headers)
    }

    /// An error response with any status (403 for a bad token, 503 when overloaded):
    /// `Connection: close`, a plain-text body of `message`, and `additionalHeaders`.
    /// Throws `invalidArgument` for a status outside 100-999 or an unwritable header.
    public static func rejecting(status: Int, message: String,
                                 additionalHeaders: [(name: String, value: String)] = []) throws(WebSocketError) -> WebSocketUpgradeResponse {
        guard (100...999).contains(status) else { throw WebSocketError(.invalidArgument, "HTTP status \(status) is not three digits") }
        let headers = try WebSocketHTTPHeaders(additionalHeaders)
        return errorResponse(status: status, message: message, headers: headers)
    }

    private static func errorResponse(status: Int, message: String, headers extra: WebSocketHTTPHeaders) -> WebSocketUpgradeResponse {
        let body = Array((message + "\n").utf8)
        var headers = extra
        headers.addUnchecked(name: "Connection", value: "close")
        headers.addUnchecked(name: "Content-Type", value: "text/plain; charset=utf-8")
        headers.addUnchecked(name: "Content-Length", value: String(body.count))
        return WebSocketUpgradeResponse(status: status, reason: reasonPhrase(for: status), headers: headers, body: body)
    }

    /// Standard reason phrases (RFC 9110 §15) for the statuses this module uses.
    static func reasonPhrase(for status: Int) -> String {
        switch status {
        case 101: return "Switching Protocols"
        case 400: return "Bad Request"
        case 401: return "Unauthorized"
        case 403: return "Forbidden"
        case 404: return "Not Found"
        case 405: return "Method Not Allowed"
        case 426: return "Upgrade Required"
        case 429: return "Too Many Requests"
        case 431: return "Request Header Fields Too Large"
        case 500: return "Internal Server Error"
        case 503: return "Service Unavailable"
        case 505: return "HTTP Version Not Supported"
        default: return "Error"
        }
    }

    /// The response on the wire: status line, headers, empty line, body.
    public func serialized() -> [UInt8] {
        var out: [UInt8] = []
        out.append(contentsOf: "\(version) \(status) \(reason)\r\n".utf8)
        headers.serialize(into: &out)
        out.append(contentsOf: "\r\n".utf8)
        out.append(contentsOf: body)
        return out
    }

    // MARK: Client side

    /// Parses a response head as `WebSocketHandshakeReader` returns it, with ParleyHTTP's
    /// grammar (status line, then the same field-line rules as requests). Only the syntax
    /// is checked (any status parses); `validate(for:)` judges it.
    public static func parse(_ head: some Sequence<UInt8>) throws(WebSocketError) -> WebSocketUpgradeResponse {
        let bytes = Array(bytes: head)
        try WebSocketError.checkCompleteHead(bytes)
        let parsed: HTTPResponseHead
        do {
            parsed = try HTTPResponseHead.parse(bytes, maxHeaderCount: WebSocketError.maxHeadFieldCount)
        } catch {
            throw WebSocketError(http: error, in: bytes)
        }
        guard parsed.version == "HTTP/1.1" else {
            throw WebSocketError(.unsupportedHTTPVersion, offset: 0, line: 1, "\(parsed.version); a WebSocket upgrade needs HTTP/1.1")
        }
        return WebSocketUpgradeResponse(status: parsed.status, reason: parsed.reason, version: parsed.version,
                                        headers: WebSocketHTTPHeaders(parsed.headers))
    }

    /// Checks this response answers `request` (§4.1, client requirements 1-6): status
    /// 101, Upgrade websocket, Connection upgrade, the Sec-WebSocket-Accept for the key
    /// sent, no extension, and a subprotocol only if it was offered. Returns the chosen
    /// subprotocol.
    public func validate(for request: WebSocketUpgradeRequest) throws(WebSocketError) -> String? {
        guard status == 101 else {
            throw WebSocketError(.upgradeRejected, line: 1, "server answered \(status) \(reason)")
        }
        guard headers.containsToken("websocket", in: "Upgrade") else {
            throw WebSocketError(headers.first("Upgrade") == nil ? .missingHeader : .invalidHeader, "Upgrade does not name websocket")
        }
        guard headers.containsToken("upgrade", in: "Connection") else {
            throw WebSocketError(headers.first("Connection") == nil ? .missingHeader : .invalidHeader,
                                 "Connection does not contain the upgrade token")
        }
        let accepts = headers["Sec-WebSocket-Accept"]
        guard let accept = accepts.first else {
            throw WebSocketError(.missingHeader, "no Sec-WebSocket-Accept header")
        }
        let expected = try WebSocketKey.acceptValue(forKey: request.key)
        guard accepts.count == 1, accept == expected else {
            throw WebSocketError(.acceptMismatch, "Sec-WebSocket-Accept \(accepts.joined(separator: ", ")) does not match \(expected)")
        }
        let extensions = headers.listElements("Sec-WebSocket-Extensions")
        guard extensions.isEmpty else {
            throw WebSocketError(.unexpectedExtension, "server named extension \(extensions.joined(separator: ", ")), none was offered")
        }
        let chosen = headers.listElements("Sec-WebSocket-Protocol")
        guard !chosen.isEmpty else { return nil }
        guard chosen.count == 1, let subprotocol = chosen.first, request.subprotocols.contains(subprotocol) else {
            throw WebSocketError(.unexpectedSubprotocol,
                                 "server chose subprotocol \(chosen.joined(separator: ", ")), offered \(request.subprotocols.joined(separator: ", "))")
        }
        return subprotocol
    }

    private enum CodingKeys: String, CodingKey { case version, status, reason, accept, subprotocol, headers, body }

    /// Every field; `accept` and `subprotocol` are null when absent, `body` is hex.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(version, forKey: .version)
        try container.encode(status, forKey: .status)
        try container.encode(reason, forKey: .reason)
        try container.encode(accept, forKey: .accept)
        try container.encode(subprotocol, forKey: .subprotocol)
        try container.encode(headers, forKey: .headers)
        try container.encode(Hex.encode(body), forKey: .body)
    }
}
