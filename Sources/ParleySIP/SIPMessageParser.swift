/// Turns a head read by `SIPHeadReader` and a body into a `SIPMessage`: the start line,
/// the Content-Length, the framing of a datagram. `SIPStreamFramer` frames streams with it.
enum SIPMessageParser {
    /// One datagram, one message (RFC 3261 §18.3).
    static func parseDatagram(_ bytes: ArraySlice<UInt8>, limits: SIPLimits) throws(SIPError) -> SIPMessage {
        guard bytes.count <= limits.maxMessageBytes else {
            // Not read at all, so there is nothing to answer along.
            throw SIPError(.messageTooLarge, "a datagram of \(bytes.count) bytes is longer than the limit of \(limits.maxMessageBytes)").dropped()
        }
        var start = bytes.startIndex
        while start + 1 < bytes.endIndex, bytes[start] == SIPGrammar.cr, bytes[start + 1] == SIPGrammar.lf { start += 2 }
        guard start < bytes.endIndex else { throw SIPError(.emptyMessage, "nothing but line breaks") }
        let reader = SIPHeadReader(limits: limits)
        guard let headEnd = SIPHeadReader.endOfHead(bytes, from: start, limit: bytes.endIndex) else {
            // Read what there is, to answer along its Via.
            var end = bytes.endIndex
            if end - start >= 2, bytes[end - 2] == SIPGrammar.cr, bytes[end - 1] == SIPGrammar.lf { end -= 2 }
            let head = reader.read(bytes, range: start..<end, startLine: true)
            if let problem = head.problem, problem.kind == .limitExceeded { throw problem.placed(isResponse: head.isResponse, headers: head.headers) }
            throw SIPError(.malformedHeaderLine, offset: bytes.count, "no empty line after the header fields")
                .placed(isResponse: head.isResponse, headers: head.headers)
        }
        let head = reader.read(bytes, range: start..<headEnd, startLine: true)
        let bodyStart = headEnd + 4
        let available = bytes.endIndex - bodyStart
        var bodyEnd = bytes.endIndex
        let message = try build(head, body: [])
        do throws(SIPError) {
            if let length = try contentLength(head) {
                guard length <= available else {
                    throw SIPError(.invalidContentLength, "Content-Length \(length) but the datagram holds \(available) bytes of body")
                }
                bodyEnd = bodyStart + length
            }
        } catch {
            throw error.placed(isResponse: head.isResponse, headers: head.headers)
        }
        var framed = message
        framed.body = Array(bytes[bodyStart..<bodyEnd])
        return framed
    }

    /// The message of a head whose framing is known; throws (placed) for a problem of the
    /// head or the start line. A limit passed while reading comes first: such a message is
    /// dropped whatever else is wrong with it.
    static func build(_ head: SIPHeadReader.Head, body: [UInt8]) throws(SIPError) -> SIPMessage {
        let headers = head.headers
        if let problem = head.problem, problem.kind == .limitExceeded {
            throw problem.placed(isResponse: head.isResponse, headers: headers)
        }
        let startLine: SIPMessage.StartLine
        let version: SIPVersion
        do throws(SIPError) {
            (startLine, version) = try parseStartLine(head.startLine, isResponse: head.isResponse)
        } catch {
            throw error.placed(isResponse: head.isResponse, headers: headers, offset: 0)
        }
        if let problem = head.problem {
            throw problem.placed(isResponse: head.isResponse, headers: headers)
        }
        return SIPMessage(startLine: startLine, version: version, headers: headers, body: body)
    }

    /// `Method SP Request-URI SP SIP-Version` with single spaces (RFC 4475 §3.1.2.9-10 say
    /// extra ones may be refused, and are here), or `SIP-Version SP Status-Code SP
    /// Reason-Phrase` (a missing space before an empty reason is tolerated).
    static func parseStartLine(_ line: ArraySlice<UInt8>, isResponse: Bool) throws(SIPError) -> (SIPMessage.StartLine, SIPVersion) {
        if isResponse {
            let space = line.firstIndex(of: SIPGrammar.space) ?? line.endIndex
            guard let version = SIPVersion.parse(line[..<space]) else {
                throw SIPError(.malformedStartLine, "bad version in the Status-Line \(SIPGrammar.quote(line))")
            }
            let codeStart = min(space + 1, line.endIndex)
            let codeEnd = line[codeStart...].firstIndex(of: SIPGrammar.space) ?? line.endIndex
            let codeBytes = line[codeStart..<codeEnd]
            guard codeBytes.count == 3, let code = SIPGrammar.decimal(codeBytes, as: UInt16.self), (100...699).contains(code) else {
                throw SIPError(.malformedStartLine, "bad status code \(SIPGrammar.quote(codeBytes))")
            }
            let reason = codeEnd < line.endIndex ? line[(codeEnd + 1)...] : []
            guard reason.allSatisfy({ $0 == SIPGrammar.tab || ($0 >= 0x20 && $0 != 0x7f) }) else {
                throw SIPError(.malformedStartLine, "control character in the reason phrase")
            }
            return (.response(statusCode: Int(code), reasonPhrase: String(decoding: reason, as: UTF8.self)), version)
        }
        let parts = line.split(separator: SIPGrammar.space, omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, !parts[1].isEmpty, !parts[2].isEmpty else {
            throw SIPError(.malformedStartLine, "the Request-Line \(SIPGrammar.quote(line)) is not Method SP Request-URI SP SIP-Version")
        }
        guard SIPGrammar.isToken(parts[0]) else {
            throw SIPError(.malformedStartLine, "method \(SIPGrammar.quote(parts[0])) is not a token")
        }
        guard let version = SIPVersion.parse(parts[2]) else {
            throw SIPError(.malformedStartLine, "bad version \(SIPGrammar.quote(parts[2]))")
        }
        let uri: SIPURI
        do throws(SIPError) {
            uri = try SIPURI.parse(parts[1])
        } catch {
            throw SIPError(.malformedURI, "bad Request-URI: \(error.detail)")
        }
        return (.request(method: SIPMethod(token: String(decoding: parts[0], as: UTF8.self)), uri: uri), version)
    }

    /// The Content-Length of a head: nil when absent; throws when it is not 1*DIGIT or
    /// appears more than once (RFC 4475 §3.1.2.3, §3.3.9).
    static func contentLength(_ head: SIPHeadReader.Head) throws(SIPError) -> Int? {
        let values = head.fields.filter { $0.canonicalName == "content-length" }
        guard let field = values.first else { return nil }
        guard values.count == 1 else {
            throw SIPError(.invalidContentLength, header: "content-length", "Content-Length appears \(values.count) times")
        }
        guard let length = SIPGrammar.decimal(field.value, as: UInt32.self, maxDigits: 10) else {
            throw SIPError(.invalidContentLength, header: "content-length", "Content-Length \(SIPGrammar.quote(field.value)) is not a number")
        }
        return Int(length)
    }
}
