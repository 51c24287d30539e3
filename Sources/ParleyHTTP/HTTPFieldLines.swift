internal import ParleyWireCore

/// The one grammar of HTTP/1.1 header and trailer field lines in Parley (RFC 9112 §5):
/// the request parser, the trailer section and the response heads a WebSocket client
/// reads all go through it, so no two parsers can disagree about where a header ends or
/// what it says.
enum HTTPFieldLines {
    /// field-line = field-name ":" OWS field-value OWS, for the line `buffer[range]`
    /// (without its CRLF), appended to `headers`. `base` is the stream offset of
    /// `buffer[0]`, for errors.
    ///
    /// Strict where leniency lets two readers disagree: obs-fold, whitespace before the
    /// colon, control characters in the value, and a value that is not UTF-8 (a `String`
    /// could not carry its bytes faithfully) are each a 400.
    static func parse(_ buffer: [UInt8], _ range: Range<Int>, base: Int, into headers: inout HTTPHeaders) throws(HTTPError) {
        let line = buffer[range]
        let offset = base + range.lowerBound
        if let first = line.first, HTTPGrammar.isWhitespace(first) {
            // §5.2: obs-fold; a server may reject it with 400, and does here.
            throw HTTPError(.malformed, offset: offset, "folded header line (obs-fold)")
        }
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else {
            throw HTTPError(.malformed, offset: offset, "header line has no colon")
        }
        let name = line[range.lowerBound..<colon]
        // §5.1: no whitespace between name and colon (a server MUST reject with 400).
        guard !name.isEmpty, name.allSatisfy(HTTPGrammar.isTokenCharacter) else {
            throw HTTPError(.malformed, offset: offset, "header name is empty, not a token, or followed by whitespace")
        }
        let value = HTTPGrammar.trimmed(line[(colon + 1)...])
        if let bad = value.firstIndex(where: { !HTTPGrammar.isFieldValueCharacter($0) }) {
            throw HTTPError(.malformed, offset: base + bad, "control character 0x\(String(buffer[bad], radix: 16)) in a header value")
        }
        var validator = UTF8Validator()
        if let bad = validator.validate(value) {
            throw HTTPError(.malformed, offset: base + value.startIndex + bad, "header value is not valid UTF-8")
        }
        guard validator.isAtBoundary else {
            throw HTTPError(.malformed, offset: base + value.endIndex, "header value ends inside a UTF-8 sequence")
        }
        headers.addUnchecked(name: String(decoding: name, as: UTF8.self), value: String(decoding: value, as: UTF8.self))
    }
}
