/// The head of an HTTP/1.1 response as a client reads it: status line and header fields
/// (RFC 9112 §4, §5), parsed with the same field-line grammar as requests. Package-wide:
/// the WebSocket client checks its server's 101 with it; the public surface for that is
/// `WebSocketUpgradeResponse.parse`.
package struct HTTPResponseHead: Sendable, Hashable {
    /// `HTTP/` DIGIT `.` DIGIT, as sent.
    package let version: String
    /// The three-digit status code.
    package let status: Int
    /// The reason phrase, possibly empty.
    package let reason: String
    /// Header fields in order.
    package let headers: HTTPHeaders

    /// Parses `bytes`, which must be exactly one head: the status line, the field lines and
    /// the empty line, nothing after. Errors carry the byte offset into `bytes`; more than
    /// `maxHeaderCount` fields is `tooManyHeaders`.
    package static func parse(_ bytes: [UInt8], maxHeaderCount: Int = 100) throws(HTTPError) -> HTTPResponseHead {
        guard let end = HTTPGrammar.endOfHead(in: bytes) else {
            throw HTTPError(.malformed, offset: bytes.count, "the head does not end with an empty line (CRLF CRLF)")
        }
        guard end == bytes.count else {
            throw HTTPError(.malformed, offset: end, "\(bytes.count - end) bytes after the end of the head")
        }
        guard let lineEnd = HTTPGrammar.findCRLF(in: bytes, from: 0), lineEnd > 0 else {
            throw HTTPError(.malformed, offset: 0, "the head has no status line")
        }
        let (version, status, reason) = try parseStatusLine(bytes[0..<lineEnd])
        var headers = HTTPHeaders()
        var lineStart = lineEnd + 2
        // The head ends with CRLF CRLF: the empty line starts at end - 2.
        while lineStart < end - 2 {
            guard let next = HTTPGrammar.findCRLF(in: bytes, from: lineStart), next < end else {
                throw HTTPError(.malformed, offset: lineStart, "header line does not end with CRLF")
            }
            guard headers.count < maxHeaderCount else {
                throw HTTPError(.tooManyHeaders, offset: lineStart, "more than \(maxHeaderCount) header fields")
            }
            try HTTPFieldLines.parse(bytes, lineStart..<next, base: 0, into: &headers)
            lineStart = next + 2
        }
        return HTTPResponseHead(version: version, status: status, reason: reason, headers: headers)
    }

    /// status-line = HTTP-version SP status-code SP [ reason-phrase ]; a missing final SP
    /// is tolerated (§4: a client SHOULD accept it).
    private static func parseStatusLine(_ line: ArraySlice<UInt8>) throws(HTTPError) -> (String, Int, String) {
        let start = line.startIndex
        let digit: (UInt8) -> Bool = { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
        guard line.count >= 12, line[start..<(start + 5)].elementsEqual("HTTP/".utf8),
              digit(line[start + 5]), line[start + 6] == UInt8(ascii: "."), digit(line[start + 7]),
              line[start + 8] == UInt8(ascii: " "), line[(start + 9)..<(start + 12)].allSatisfy(digit),
              line.count == 12 || line[start + 12] == UInt8(ascii: " ") else {
            throw HTTPError(.malformed, offset: start, "status line is not HTTP/x.y SP 3-digit code SP reason")
        }
        let reason = line.count > 13 ? line[(start + 13)...] : []
        // reason-phrase = *( HTAB / SP / VCHAR / obs-text ); obs-text is refused too, so
        // the phrase is plain text with one reading.
        if let bad = reason.firstIndex(where: { !($0 == 0x09 || ($0 >= 0x20 && $0 < 0x7f)) }) {
            throw HTTPError(.malformed, offset: bad, "control character 0x\(String(line[bad], radix: 16)) in the reason phrase")
        }
        let status = line[(start + 9)..<(start + 12)].reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
        return (String(decoding: line[start..<(start + 8)], as: UTF8.self), status, String(decoding: reason, as: UTF8.self))
    }
}
