/// A SIP request or response (RFC 3261 §7): start line, every header field in order as
/// written (`SIPHeaders`), and the body's bytes.
///
/// Parsing is sans-I/O and bounded by `SIPLimits`: `init(datagram:)` reads one UDP
/// datagram, `SIPStreamFramer` cuts messages out of a TCP or TLS byte stream. A parsed
/// message is well-formed line by line; `validate()` then checks what RFC 3261 requires
/// of a request or response before it is processed (mandatory headers, CSeq, Via...), and
/// the typed accessors (`vias()`, `from()`, `cseq()`...) read header values on demand.
/// Every error is a `SIPError` saying whether to answer (and with what) or drop.
///
/// `serialized()` writes the message back with each field as `name: value` on one line
/// and the Content-Length set to the body's length.
public struct SIPMessage: Sendable, Hashable {
    /// The first line: a request's method and Request-URI, or a response's status.
    public enum StartLine: Sendable, Hashable {
        case request(method: SIPMethod, uri: SIPURI)
        case response(statusCode: Int, reasonPhrase: String)
    }

    /// The start line.
    public private(set) var startLine: StartLine
    /// The version of the start line (validation answers any but 2.0 with 505).
    public private(set) var version: SIPVersion
    /// The header fields in order.
    public var headers: SIPHeaders
    /// The body (its length is written as Content-Length by `serialized()`).
    public var body: [UInt8]

    init(startLine: StartLine, version: SIPVersion, headers: SIPHeaders, body: [UInt8]) {
        self.startLine = startLine
        self.version = version
        self.headers = headers
        self.body = body
    }

    /// A request. Throws `invalidArgument` when the method is not a token.
    public init(request method: SIPMethod, uri: SIPURI, headers: SIPHeaders = SIPHeaders(), body: [UInt8] = []) throws(SIPError) {
        guard SIPGrammar.isToken(method.token) else {
            throw SIPError(.invalidArgument, "method \(SIPGrammar.quote(method.token)) is not a token")
        }
        self.init(startLine: .request(method: method, uri: uri), version: .sip20, headers: headers, body: body)
    }

    /// A response; the reason phrase defaults to RFC 3261's for the code. Throws
    /// `invalidArgument` for a code outside 100-699 or a reason phrase with control
    /// characters.
    public init(response statusCode: Int, reasonPhrase: String? = nil, headers: SIPHeaders = SIPHeaders(), body: [UInt8] = []) throws(SIPError) {
        guard (100...699).contains(statusCode) else { throw SIPError(.invalidArgument, "status code \(statusCode) is not 100-699") }
        let phrase = reasonPhrase ?? Self.reasonPhrase(for: statusCode)
        guard phrase.utf8.allSatisfy({ $0 == SIPGrammar.tab || ($0 >= 0x20 && $0 != 0x7f) }) else {
            throw SIPError(.invalidArgument, "reason phrase holds a control character")
        }
        self.init(startLine: .response(statusCode: statusCode, reasonPhrase: phrase), version: .sip20, headers: headers, body: body)
    }

    /// Parses one message received in a UDP datagram (RFC 3261 §18.3): the body is the
    /// Content-Length bytes after the head and anything after them is ignored; without a
    /// Content-Length it is the rest of the datagram. Line breaks before the start line are
    /// skipped. Throws a `SIPError` saying whether to answer or drop.
    public init(datagram: some Collection<UInt8>, limits: SIPLimits = .default) throws(SIPError) {
        self = try SIPMessageParser.parseDatagram(Array(datagram)[...], limits: limits)
    }

    // MARK: Start line

    /// Whether this is a request.
    public var isRequest: Bool {
        if case .request = startLine { return true }
        return false
    }

    /// A request's method; nil for a response.
    public var method: SIPMethod? {
        if case .request(let method, _) = startLine { return method }
        return nil
    }

    /// A request's Request-URI; nil for a response.
    public var requestURI: SIPURI? {
        if case .request(_, let uri) = startLine { return uri }
        return nil
    }

    /// A response's status code; nil for a request.
    public var statusCode: Int? {
        if case .response(let code, _) = startLine { return code }
        return nil
    }

    /// A response's reason phrase; nil for a request.
    public var reasonPhrase: String? {
        if case .response(_, let phrase) = startLine { return phrase }
        return nil
    }

    /// Replaces a request's Request-URI (a proxy retargeting, or a strict router's route).
    public mutating func setRequestURI(_ uri: SIPURI) throws(SIPError) {
        guard case .request(let method, _) = startLine else { throw SIPError(.invalidArgument, "a response has no Request-URI") }
        startLine = .request(method: method, uri: uri)
    }

    // MARK: Writing

    /// The message as bytes: the start line, every field as `name: value` in order, a
    /// Content-Length holding the body's length (written in place of the first
    /// Content-Length field, whose name form is kept, or appended), the empty line, the body.
    public func serialized() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(512 + body.count)
        switch startLine {
        case .request(let method, let uri):
            out += method.token.utf8
            out.append(SIPGrammar.space)
            out += uri.description.utf8
            out.append(SIPGrammar.space)
            out += version.description.utf8
        case .response(let code, let phrase):
            out += version.description.utf8
            out.append(SIPGrammar.space)
            out += String(code).utf8
            out.append(SIPGrammar.space)
            out += phrase.utf8
        }
        out += [SIPGrammar.cr, SIPGrammar.lf]
        var wroteLength = false
        for field in headers.fields {
            let isLength = field.canonicalName == "content-length"
            if isLength && wroteLength { continue }
            out += field.name.utf8
            out += [UInt8(ascii: ":"), SIPGrammar.space]
            if isLength {
                out += String(body.count).utf8
                wroteLength = true
            } else {
                out += field.value.utf8
            }
            out += [SIPGrammar.cr, SIPGrammar.lf]
        }
        if !wroteLength { out += "Content-Length: \(body.count)\r\n".utf8 }
        out += [SIPGrammar.cr, SIPGrammar.lf]
        out += body
        return out
    }
}
