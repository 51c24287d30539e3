import ParleyHTTP
import ParleyWireCore
/// An HTTP/1.1 message head split into its start line and header fields
/// (RFC 9112 §2.1, §5), with every byte checked against the grammar.
///
/// The head must end with the empty line (CRLF CRLF) and nothing may follow it; the body,
/// if any, is not this type's business. Errors name the 1-based line and byte offset.
struct HTTPHead: Sendable {
    /// Most header fields a head may carry; browsers send about 15.
    static let maxFieldCount = 100

    var startLine: String
    var headers: WebSocketHTTPHeaders

    init(parsing bytes: [UInt8]) throws(WebSocketError) {
        guard let end = Self.endOfHead(in: bytes) else {
            var lines = 1
            for byte in bytes where byte == UInt8(ascii: "\n") { lines += 1 }
            throw WebSocketError(.truncated, offset: bytes.count, line: lines,
                                 "HTTP head ends after \(bytes.count) bytes, before the empty line (CRLF CRLF)")
        }
        guard end == bytes.count else {
            var lines = 1
            for byte in bytes[..<end] where byte == UInt8(ascii: "\n") { lines += 1 }
            throw WebSocketError(.trailingBytes, offset: end, line: lines, "\(bytes.count - end) bytes after the end of the HTTP head")
        }
        var lineNumber = 0
        var lineStart = 0
        var startLine: String? = nil
        var headers = WebSocketHTTPHeaders()
        // The head ends with CRLF CRLF, so the last line (the empty one) ends at end - 2.
        while lineStart < end - 2 {
            lineNumber += 1
            var lineEnd = lineStart
            while bytes[lineEnd] != UInt8(ascii: "\r") && bytes[lineEnd] != UInt8(ascii: "\n") { lineEnd += 1 }
            guard bytes[lineEnd] == UInt8(ascii: "\r"), bytes[lineEnd + 1] == UInt8(ascii: "\n") else {
                throw WebSocketError(.malformedHTTP, offset: lineEnd, line: lineNumber, "bare CR or LF; lines must end with CRLF")
            }
            let line = bytes[lineStart..<lineEnd]
            if startLine == nil {
                guard !line.isEmpty, line.allSatisfy({ $0 >= 0x20 && $0 < 0x7f }) else {
                    throw WebSocketError(.malformedHTTP, offset: lineStart, line: lineNumber, "start line is empty or holds control characters")
                }
                startLine = String(decoding: line, as: UTF8.self)
            } else {
                try Self.parseField(line, offset: lineStart, lineNumber: lineNumber, into: &headers)
            }
            lineStart = lineEnd + 2
        }
        guard let startLine else {
            throw WebSocketError(.malformedHTTP, offset: 0, line: 1, "HTTP head has no start line")
        }
        self.startLine = startLine
        self.headers = headers
    }

    /// Index just past the first CRLF CRLF, if there is one.
    static func endOfHead(in bytes: [UInt8], from start: Int = 0) -> Int? {
        var index = max(start, 0)
        while index + 4 <= bytes.count {
            if bytes[index + 3] != UInt8(ascii: "\n") { index += 1; continue }
            if bytes[index] == UInt8(ascii: "\r"), bytes[index + 1] == UInt8(ascii: "\n"), bytes[index + 2] == UInt8(ascii: "\r") {
                return index + 4
            }
            index += 1
        }
        return nil
    }

    private static func parseField(_ line: ArraySlice<UInt8>, offset: Int, lineNumber: Int,
                                   into headers: inout WebSocketHTTPHeaders) throws(WebSocketError) {
        guard headers.fields.count < maxFieldCount else {
            throw WebSocketError(.headTooLarge, offset: offset, line: lineNumber, "more than \(maxFieldCount) header fields")
        }
        if let first = line.first, first == 0x20 || first == 0x09 {
            // RFC 9112 §5.2: obsolete line folding; a server may reject it with 400.
            throw WebSocketError(.malformedHTTP, offset: offset, line: lineNumber, "folded header line (obs-fold) is not accepted")
        }
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else {
            throw WebSocketError(.malformedHTTP, offset: offset, line: lineNumber, "header line has no colon")
        }
        let name = line[line.startIndex..<colon]
        // RFC 9112 §5.1: no whitespace between the name and the colon.
        guard !name.isEmpty, name.allSatisfy(HTTPGrammar.isTokenCharacter) else {
            throw WebSocketError(.malformedHTTP, offset: offset, line: lineNumber, "header name is empty or not a token")
        }
        let value = HTTPGrammar.trimmed(line[(colon + 1)...])
        if let bad = value.firstIndex(where: { !HTTPGrammar.isFieldValueCharacter($0) }) {
            throw WebSocketError(.malformedHTTP, offset: offset + (bad - line.startIndex), line: lineNumber,
                                 "control character 0x\(String(line[bad], radix: 16)) in header value")
        }
        var validator = UTF8Validator()
        if let bad = validator.validate(value) {
            throw WebSocketError(.malformedHTTP, offset: offset + (value.startIndex - line.startIndex) + bad, line: lineNumber,
                                 "header value is not valid UTF-8")
        }
        guard validator.isAtBoundary else {
            throw WebSocketError(.malformedHTTP, offset: offset + line.count, line: lineNumber, "header value ends inside a UTF-8 sequence")
        }
        headers.addUnchecked(name: String(decoding: name, as: UTF8.self), value: String(decoding: value, as: UTF8.self))
    }
}
