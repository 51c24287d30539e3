import ParleyHTTP

/// The opening handshake reads its HTTP heads with ParleyHTTP's grammar (the same one
/// the server's request parser uses); these helpers state that grammar's verdicts in
/// this module's error kinds, with the line each problem is on.
extension WebSocketError {
    /// Most header fields a head may carry; browsers send about 15.
    static let maxHeadFieldCount = 100

    /// Throws `truncated` unless `bytes` end with the empty line of an HTTP head, and
    /// `trailingBytes` if anything follows it: the parse functions take exactly one head,
    /// as `WebSocketHandshakeReader` returns it.
    static func checkCompleteHead(_ bytes: [UInt8]) throws(WebSocketError) {
        guard let end = HTTPGrammar.endOfHead(in: bytes) else {
            throw WebSocketError(.truncated, offset: bytes.count, line: line(at: bytes.count, in: bytes) + 1,
                                 "HTTP head ends after \(bytes.count) bytes, before the empty line (CRLF CRLF)")
        }
        guard end == bytes.count else {
            throw WebSocketError(.trailingBytes, offset: end, line: line(at: end, in: bytes),
                                 "\(bytes.count - end) bytes after the end of the HTTP head")
        }
    }

    /// The HTTP grammar's error about `bytes`, as a handshake error: the same verdict and
    /// detail; 400, 431 and 505 stay what they were.
    init(http error: HTTPError, in bytes: [UInt8]) {
        let kind: Kind
        switch error.kind {
        case .headTooLarge, .tooManyHeaders, .requestLineTooLong: kind = .headTooLarge
        case .unsupportedVersion: kind = .unsupportedHTTPVersion
        case .missingHost: kind = error.hostCount == 0 ? .missingHeader : .invalidHeader
        default: kind = .malformedHTTP
        }
        let offset = error.offset.map { min(max($0, 0), bytes.count) }
        self.init(kind, offset: offset, line: offset.map { Self.line(at: $0, in: bytes) }, error.detail)
    }

    /// The 1-based line holding byte `offset`.
    private static func line(at offset: Int, in bytes: [UInt8]) -> Int {
        1 + bytes[..<min(offset, bytes.count)].reduce(0) { $0 + ($1 == UInt8(ascii: "\n") ? 1 : 0) }
    }
}
