/// Incremental HTTP/1.1 request parser (RFC 9112): bytes in as they arrive, complete
/// requests out, one at a time, so pipelined requests are answered in order and the
/// bytes after a request stay buffered for the next one (or, after an upgrade, for the
/// new protocol: `takeBufferedBytes()`).
///
/// ```swift
/// var parser = HTTPRequestParser()
/// parser.append(bytesRead)
/// do {
///     while let request = try parser.next() { respond(to: request) }
/// } catch {
///     send(HTTPResponse.error(error)); close()   // error.status: 400/413/414/431/501/505
/// }
/// ```
///
/// It is strict where leniency enables request smuggling: lines end with CRLF only,
/// obs-fold is refused, whitespace before a header's colon is refused, Content-Length
/// together with Transfer-Encoding is refused, differing Content-Length values are
/// refused, and Transfer-Encoding in an HTTP/1.0 request is refused (all 400). After an
/// error the parser stays failed: the connection must be closed.
public struct HTTPRequestParser: Sendable {
    /// Size and count limits; exceeding one fails with the status RFC 9110 §15 names.
    public struct Limits: Sendable, Hashable {
        /// Longest request line, CRLF excluded (414 beyond).
        public var maxRequestLineLength: Int
        /// Longest head (request line, headers, final empty line), and longest trailer
        /// section (431 beyond).
        public var maxHeadSize: Int
        /// Most header fields, and most trailer fields (431 beyond).
        public var maxHeaderCount: Int
        /// Largest body after decoding (413 beyond).
        public var maxBodySize: Int
        /// Longest chunk-size line with its extensions (400 beyond).
        public var maxChunkLineLength: Int

        /// 8 KiB request line, 16 KiB head, 100 fields, 1 MiB body, 1 KiB chunk line.
        public init(maxRequestLineLength: Int = 8192, maxHeadSize: Int = 16384, maxHeaderCount: Int = 100,
                    maxBodySize: Int = 1 << 20, maxChunkLineLength: Int = 1024) {
            self.maxRequestLineLength = maxRequestLineLength
            self.maxHeadSize = maxHeadSize
            self.maxHeaderCount = maxHeaderCount
            self.maxBodySize = maxBodySize
            self.maxChunkLineLength = maxChunkLineLength
        }
    }

    private struct Head: Sendable {
        var method: String
        var target: String
        var version: HTTPVersion
        var headers: HTTPHeaders
        var keepAlive: Bool
        var streamOffset: Int
    }

    private enum Phase: Sendable {
        case head
        case fixedBody(remaining: Int)
        case chunkSize
        case chunkData(remaining: Int)
        case chunkDataEnd
        case trailers
    }

    /// The limits given at creation.
    public let limits: Limits

    private var buffer: [UInt8] = []
    private var readIndex = 0
    /// Stream offset of `buffer[0]`.
    private var base = 0
    /// Where the search for the end of the head resumes.
    private var searchFrom = 0
    /// Whether the CRLF ending the current request line has arrived.
    private var requestLineSeen = false
    private var phase = Phase.head
    private var head: Head?
    private var body: [UInt8] = []
    private var trailers = HTTPHeaders()
    private var trailerBytes = 0
    private var failure: HTTPError?
    private var continueRequested = false

    /// A parser with the given limits.
    public init(limits: Limits = Limits()) {
        self.limits = limits
    }

    /// Adds bytes read from the connection.
    public mutating func append(_ bytes: some Sequence<UInt8>) {
        buffer.append(contentsOf: bytes)
    }

    /// Bytes received and not yet part of a returned request.
    public var bufferedByteCount: Int { buffer.count - readIndex }

    /// True while a request has begun (some of its bytes arrived) but is not complete:
    /// the time a client may take here is the handshake (slowloris) timeout, not the
    /// idle timeout.
    public var isMidRequest: Bool {
        if case .head = phase { return bufferedByteCount > 0 }
        return true
    }

    /// True once per request whose head asked `Expect: 100-continue` (RFC 9110 §10.1.1)
    /// and whose body has not fully arrived: the server should send `100 Continue` now.
    public mutating func takeContinueRequest() -> Bool {
        defer { continueRequested = false }
        return continueRequested
    }

    /// Hands over every buffered byte not yet consumed and empties the buffer: after a
    /// protocol upgrade they belong to the new protocol.
    public mutating func takeBufferedBytes() -> [UInt8] {
        let rest = Array(buffer[readIndex...])
        base += buffer.count
        buffer = []
        readIndex = 0
        searchFrom = 0
        requestLineSeen = false
        return rest
    }

    /// The next complete request, or nil when more bytes are needed. Throws `HTTPError`
    /// (with `status` to answer); once thrown, every later call throws the same error.
    public mutating func next() throws(HTTPError) -> HTTPRequest? {
        if let failure { throw failure }
        do throws(HTTPError) {
            let request = try step()
            compact()
            return request
        } catch {
            failure = error
            throw error
        }
    }

    private mutating func compact() {
        if readIndex >= buffer.count {
            base += buffer.count
            searchFrom = max(0, searchFrom - buffer.count)
            buffer.removeAll(keepingCapacity: buffer.capacity <= 65536)
            readIndex = 0
        } else if readIndex > 4096 && readIndex * 2 > buffer.count {
            buffer.removeFirst(readIndex)
            base += readIndex
            searchFrom = max(0, searchFrom - readIndex)
            readIndex = 0
        }
    }

    private mutating func step() throws(HTTPError) -> HTTPRequest? {
        while true {
            switch phase {
            case .head:
                guard try parseHead() else { return nil }
            case .fixedBody(let remaining):
                let take = min(remaining, buffer.count - readIndex)
                body.append(contentsOf: buffer[readIndex..<(readIndex + take)])
                readIndex += take
                if take < remaining {
                    phase = .fixedBody(remaining: remaining - take)
                    return nil
                }
                return finish(chunked: false)
            case .chunkSize:
                guard try parseChunkSize() else { return nil }
            case .chunkData(let remaining):
                let take = min(remaining, buffer.count - readIndex)
                body.append(contentsOf: buffer[readIndex..<(readIndex + take)])
                readIndex += take
                if take < remaining {
                    phase = .chunkData(remaining: remaining - take)
                    return nil
                }
                phase = .chunkDataEnd
            case .chunkDataEnd:
                guard buffer.count - readIndex >= 2 else { return nil }
                guard buffer[readIndex] == 0x0d, buffer[readIndex + 1] == 0x0a else {
                    throw HTTPError(.malformed, offset: base + readIndex, "chunk data is not followed by CRLF")
                }
                readIndex += 2
                phase = .chunkSize
            case .trailers:
                guard try parseTrailerLine() else { return nil }
                if case .head = phase { return finish(chunked: true) }
            }
        }
    }

    private mutating func finish(chunked: Bool) -> HTTPRequest? {
        guard let head else { return nil }
        let request = HTTPRequest(method: head.method, target: head.target, version: head.version, headers: head.headers,
                                  body: body, trailers: trailers, keepAlive: head.keepAlive, isChunked: chunked,
                                  streamOffset: head.streamOffset)
        self.head = nil
        continueRequested = false
        body = []
        trailers = HTTPHeaders()
        trailerBytes = 0
        phase = .head
        return request
    }

    // MARK: Head (RFC 9112 §2-§5)

    /// Parses a head if it is complete; sets the body phase. False: need more bytes.
    private mutating func parseHead() throws(HTTPError) -> Bool {
        // §2.2: a server SHOULD ignore at least one empty line before the request line.
        while buffer.count - readIndex >= 2, buffer[readIndex] == 0x0d, buffer[readIndex + 1] == 0x0a {
            readIndex += 2
        }
        let start = readIndex
        guard start < buffer.count else { return false }
        // The same checks run in the same order whether the head arrived whole or in
        // pieces, so a request gets the same verdict however the network split it.
        try scanRequestLine(from: start)
        guard let end = endOfHead(from: start) else {
            if buffer.count - start > limits.maxHeadSize { throw headTooLarge(start) }
            searchFrom = buffer.count
            return false
        }
        searchFrom = 0
        requestLineSeen = false
        guard end - start <= limits.maxHeadSize else { throw headTooLarge(start) }
        guard let lineEnd = HTTPGrammar.findCRLF(in: buffer, from: start) else { return false }
        let (method, target, version) = try parseRequestLine(start..<lineEnd)
        var headers = HTTPHeaders()
        var lineStart = lineEnd + 2
        // The head ends with CRLF CRLF: the empty line starts at end - 2.
        while lineStart < end - 2 {
            guard let next = HTTPGrammar.findCRLF(in: buffer, from: lineStart), next < end else {
                throw HTTPError(.malformed, offset: base + lineStart, "header line does not end with CRLF")
            }
            guard headers.count < limits.maxHeaderCount else {
                throw HTTPError(.tooManyHeaders, offset: base + lineStart, "more than \(limits.maxHeaderCount) header fields")
            }
            try parseField(lineStart..<next, into: &headers)
            lineStart = next + 2
        }
        readIndex = end
        try applySemantics(method: method, target: target, version: version, headers: headers, start: start)
        return true
    }

    private func endOfHead(from start: Int) -> Int? {
        HTTPGrammar.endOfHead(in: buffer, from: max(start, searchFrom - 3))
    }

    private func headTooLarge(_ start: Int) -> HTTPError {
        HTTPError(.headTooLarge, offset: base + start + limits.maxHeadSize, "no end of the head within \(limits.maxHeadSize) bytes")
    }

    /// Checks the request line as its bytes arrive, so a hopeless one fails early: bytes
    /// no request line may hold (400; e.g. a TLS ClientHello on a plain port), a bare CR
    /// (400), or no CRLF within the length limit (414). Looks only at the first
    /// `maxRequestLineLength + 2` bytes, in order.
    private mutating func scanRequestLine(from start: Int) throws(HTTPError) {
        guard !requestLineSeen else { return }
        let limit = limits.maxRequestLineLength
        // Resume one byte back: a CR at the end may meet its LF now.
        var index = max(start, searchFrom - 1)
        while index < buffer.count && index - start <= limit {
            let byte = buffer[index]
            if byte == 0x0d {
                guard index + 1 < buffer.count else { return }
                guard buffer[index + 1] == 0x0a else {
                    throw HTTPError(.malformed, offset: base + index, "bare CR in the request line")
                }
                requestLineSeen = true
                return
            }
            guard byte >= 0x20 && byte < 0x7f else {
                throw HTTPError(.malformed, offset: base + index, "byte 0x\(String(byte, radix: 16)) in the request line")
            }
            index += 1
        }
        if buffer.count - start > limit + 1 {
            throw HTTPError(.requestLineTooLong, offset: base + start + limit, "no end of the request line within \(limit) bytes")
        }
    }

    /// request-line = method SP request-target SP HTTP-version (§3).
    private func parseRequestLine(_ range: Range<Int>) throws(HTTPError) -> (String, String, HTTPVersion) {
        let line = buffer[range]
        guard let firstSpace = line.firstIndex(of: 0x20) else {
            throw HTTPError(.malformed, offset: base + range.lowerBound, "request line is not METHOD SP target SP version")
        }
        let method = line[range.lowerBound..<firstSpace]
        guard !method.isEmpty, method.allSatisfy(HTTPGrammar.isTokenCharacter) else {
            throw HTTPError(.malformed, offset: base + range.lowerBound, "method is empty or not a token")
        }
        let rest = line[(firstSpace + 1)...]
        guard let secondSpace = rest.firstIndex(of: 0x20) else {
            throw HTTPError(.malformed, offset: base + firstSpace + 1, "request line has no HTTP version")
        }
        let target = line[(firstSpace + 1)..<secondSpace]
        guard !target.isEmpty, target.allSatisfy({ $0 > 0x20 && $0 < 0x7f }) else {
            throw HTTPError(.malformed, offset: base + firstSpace + 1, "request target is empty or holds spaces or controls")
        }
        // §3.2: origin-form, absolute-form, authority-form (CONNECT) or asterisk-form (OPTIONS).
        let version = line[(secondSpace + 1)...]
        let versionOffset = base + secondSpace + 1
        let digit: (UInt8) -> Bool = { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
        guard version.count == 8, version.starts(with: "HTTP/".utf8),
              digit(version[version.startIndex + 5]), version[version.startIndex + 6] == UInt8(ascii: "."),
              digit(version[version.startIndex + 7]) else {
            throw HTTPError(.malformed, offset: versionOffset, "HTTP version is not HTTP/DIGIT.DIGIT")
        }
        let text = String(decoding: version, as: UTF8.self)
        guard let parsed = HTTPVersion(rawValue: text) else {
            throw HTTPError(.unsupportedVersion, offset: versionOffset, "\(text); this server speaks HTTP/1.0 and HTTP/1.1")
        }
        return (String(decoding: method, as: UTF8.self), String(decoding: target, as: UTF8.self), parsed)
    }

    private func parseField(_ range: Range<Int>, into headers: inout HTTPHeaders) throws(HTTPError) {
        try HTTPFieldLines.parse(buffer, range, base: base, into: &headers)
    }

    /// Message framing and connection semantics (§6.1, §6.3, §9.3, §3.2).
    private mutating func applySemantics(method: String, target: String, version: HTTPVersion, headers: HTTPHeaders,
                                         start: Int) throws(HTTPError) {
        let offset = base + start
        let hosts = headers["Host"]
        if version == .http11 ? hosts.count != 1 : hosts.count > 1 {
            throw HTTPError(.missingHost, offset: offset, hostCount: hosts.count,
                            "\(hosts.count) Host headers; \(version.rawValue) needs exactly one")
        }
        let connection = headers["Connection"].flatMap(HTTPGrammar.listElements)
        let hasToken: (String) -> Bool = { token in connection.contains { HTTPGrammar.equalsIgnoringCase($0, token) } }
        let keepAlive = version == .http11 ? !hasToken("close") : hasToken("keep-alive") && !hasToken("close")
        let transferEncodings = headers["Transfer-Encoding"]
        let contentLengths = headers["Content-Length"]
        head = Head(method: method, target: target, version: version, headers: headers, keepAlive: keepAlive,
                    streamOffset: offset)
        continueRequested = version == .http11 && headers.containsToken("100-continue", in: "Expect")
        body = []
        if !transferEncodings.isEmpty {
            guard version == .http11 else {
                throw HTTPError(.malformed, offset: offset, "Transfer-Encoding in an HTTP/1.0 request")
            }
            guard contentLengths.isEmpty else {
                throw HTTPError(.conflictingLength, offset: offset, "both Content-Length and Transfer-Encoding")
            }
            let codings = transferEncodings.flatMap(HTTPGrammar.listElements)
            guard let last = codings.last, HTTPGrammar.equalsIgnoringCase(last, "chunked") else {
                throw HTTPError(.malformed, offset: offset, "Transfer-Encoding does not end with chunked")
            }
            guard codings.count == 1 else {
                throw HTTPError(.unsupportedTransferCoding, offset: offset,
                                "Transfer-Encoding \(codings.joined(separator: ", ")); only chunked is supported")
            }
            phase = .chunkSize
            return
        }
        guard !contentLengths.isEmpty else {
            // §6.3 item 7: a request with neither has no body.
            phase = .fixedBody(remaining: 0)
            return
        }
        var length: Int? = nil
        for element in contentLengths.flatMap({ $0.split(separator: ",", omittingEmptySubsequences: false) }) {
            let digits = HTTPGrammar.trimmed(Array(element.utf8)[...])
            guard !digits.isEmpty, digits.count <= 18,
                  digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
                throw HTTPError(.malformed, offset: offset, "Content-Length \"\(element)\" is not a decimal number")
            }
            let value = digits.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
            if let length, length != value {
                throw HTTPError(.conflictingLength, offset: offset, "Content-Length values \(length) and \(value) differ")
            }
            length = value
        }
        let total = length ?? 0
        guard total <= limits.maxBodySize else {
            throw HTTPError(.bodyTooLarge, offset: offset, "Content-Length \(total) exceeds the limit of \(limits.maxBodySize)")
        }
        body.reserveCapacity(min(total, 65536))
        phase = .fixedBody(remaining: total)
    }

    // MARK: Chunked body (RFC 9112 §7.1)

    /// chunk-size [ chunk-ext ] CRLF. False: need more bytes.
    private mutating func parseChunkSize() throws(HTTPError) -> Bool {
        guard let lineEnd = HTTPGrammar.findCRLF(in: buffer, from: readIndex) else {
            if buffer.count - readIndex > limits.maxChunkLineLength {
                throw HTTPError(.malformed, offset: base + readIndex, "chunk-size line longer than \(limits.maxChunkLineLength) bytes")
            }
            return false
        }
        guard lineEnd - readIndex <= limits.maxChunkLineLength else {
            throw HTTPError(.malformed, offset: base + readIndex, "chunk-size line longer than \(limits.maxChunkLineLength) bytes")
        }
        var index = readIndex
        var size = 0
        while index < lineEnd, let digit = Self.hexValue(buffer[index]) {
            guard size <= (Int.max >> 4) - 16 else {
                throw HTTPError(.bodyTooLarge, offset: base + index, "chunk size overflows")
            }
            size = size << 4 | digit
            index += 1
        }
        guard index > readIndex else {
            throw HTTPError(.malformed, offset: base + readIndex, "chunk size is not hexadecimal")
        }
        // chunk-ext = *( BWS ";" BWS ext-name [ BWS "=" BWS ext-value ] ): checked for
        // stray bytes only, then ignored.
        while index < lineEnd, HTTPGrammar.isWhitespace(buffer[index]) { index += 1 }
        if index < lineEnd {
            guard buffer[index] == UInt8(ascii: ";"),
                  buffer[index..<lineEnd].allSatisfy(HTTPGrammar.isFieldValueCharacter) else {
                throw HTTPError(.malformed, offset: base + index, "unexpected byte after the chunk size")
            }
        }
        guard size <= limits.maxBodySize - body.count else {
            throw HTTPError(.bodyTooLarge, offset: base + readIndex,
                            "chunk of \(size) bytes takes the body over the limit of \(limits.maxBodySize)")
        }
        readIndex = lineEnd + 2
        phase = size == 0 ? .trailers : .chunkData(remaining: size)
        return true
    }

    /// One trailer line, or the empty line ending the message (§7.1.2). False: need more.
    private mutating func parseTrailerLine() throws(HTTPError) -> Bool {
        guard let lineEnd = HTTPGrammar.findCRLF(in: buffer, from: readIndex) else {
            if trailerBytes + buffer.count - readIndex > limits.maxHeadSize {
                throw HTTPError(.headTooLarge, offset: base + readIndex, "trailer section over \(limits.maxHeadSize) bytes")
            }
            return false
        }
        trailerBytes += lineEnd + 2 - readIndex
        guard trailerBytes <= limits.maxHeadSize else {
            throw HTTPError(.headTooLarge, offset: base + readIndex, "trailer section over \(limits.maxHeadSize) bytes")
        }
        if lineEnd == readIndex {
            readIndex += 2
            phase = .head
            return true
        }
        guard trailers.count < limits.maxHeaderCount else {
            throw HTTPError(.tooManyHeaders, offset: base + readIndex, "more than \(limits.maxHeaderCount) trailer fields")
        }
        try parseField(readIndex..<lineEnd, into: &trailers)
        readIndex = lineEnd + 2
        return true
    }

    private static func hexValue(_ byte: UInt8) -> Int? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return Int(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return Int(byte - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return Int(byte - UInt8(ascii: "A") + 10)
        default: return nil
        }
    }
}
