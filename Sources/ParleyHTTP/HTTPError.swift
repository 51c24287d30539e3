/// Every problem the HTTP/1.1 parser finds in a request (or, inside the package, in the
/// response head a WebSocket client reads), with the byte offset (from the start of the
/// connection's byte stream) where it was found and the status code a server answers
/// before closing the connection.
///
/// ```
/// header section too large at offset 8192: no end of the head within 8192 bytes -> 431
/// ```
public struct HTTPError: Error, Sendable, Hashable, CustomStringConvertible, Encodable {
    /// The category of a problem; compare with the static members (`.malformed`, ...).
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
        enum Code: Sendable, Hashable {
            case malformed, requestLineTooLong, headTooLarge, tooManyHeaders, bodyTooLarge
            case unsupportedVersion, unsupportedTransferCoding, missingHost, conflictingLength
            case invalidArgument
        }
        let code: Code
        init(_ code: Code) { self.code = code }

        /// Syntax error in the request line, a header, a chunk or a trailer (400).
        public static let malformed = Kind(.malformed)
        /// The request line is longer than the limit (414).
        public static let requestLineTooLong = Kind(.requestLineTooLong)
        /// The head (request line and headers) or the trailer section is longer than the limit (431).
        public static let headTooLarge = Kind(.headTooLarge)
        /// More header (or trailer) fields than the limit (431).
        public static let tooManyHeaders = Kind(.tooManyHeaders)
        /// The body is longer than the limit, announced or received (413).
        public static let bodyTooLarge = Kind(.bodyTooLarge)
        /// An HTTP version other than 1.0 and 1.1 (505).
        public static let unsupportedVersion = Kind(.unsupportedVersion)
        /// A Transfer-Encoding other than `chunked` alone (501).
        public static let unsupportedTransferCoding = Kind(.unsupportedTransferCoding)
        /// An HTTP/1.1 request without exactly one Host header (400, RFC 9112 §3.2).
        public static let missingHost = Kind(.missingHost)
        /// Content-Length together with Transfer-Encoding, or differing Content-Length
        /// values: request smuggling territory (400, RFC 9112 §6.3).
        public static let conflictingLength = Kind(.conflictingLength)
        /// A value given to a builder (header name or value, status) cannot be written safely.
        public static let invalidArgument = Kind(.invalidArgument)

        /// A short phrase, e.g. `request line too long`.
        public var summary: String {
            switch code {
            case .malformed: return "malformed request"
            case .requestLineTooLong: return "request line too long"
            case .headTooLarge: return "header section too large"
            case .tooManyHeaders: return "too many header fields"
            case .bodyTooLarge: return "body too large"
            case .unsupportedVersion: return "unsupported HTTP version"
            case .unsupportedTransferCoding: return "unsupported transfer coding"
            case .missingHost: return "missing or repeated Host"
            case .conflictingLength: return "conflicting message length"
            case .invalidArgument: return "invalid argument"
            }
        }

        /// The camelCase name used in JSON, e.g. `requestLineTooLong`.
        public var description: String {
            switch code {
            case .malformed: return "malformed"
            case .requestLineTooLong: return "requestLineTooLong"
            case .headTooLarge: return "headTooLarge"
            case .tooManyHeaders: return "tooManyHeaders"
            case .bodyTooLarge: return "bodyTooLarge"
            case .unsupportedVersion: return "unsupportedVersion"
            case .unsupportedTransferCoding: return "unsupportedTransferCoding"
            case .missingHost: return "missingHost"
            case .conflictingLength: return "conflictingLength"
            case .invalidArgument: return "invalidArgument"
            }
        }
    }

    /// What went wrong.
    public let kind: Kind
    /// Byte offset of the problem from the start of the connection's stream; nil for
    /// builder errors.
    public let offset: Int?
    /// The specifics, e.g. `Content-Length 12 and 13 differ`.
    public let detail: String
    /// For `missingHost`: how many Host fields the request had (0, or more than one), so
    /// the WebSocket handshake can say "missing" or "repeated" from the same verdict.
    package let hostCount: Int?

    init(_ kind: Kind, offset: Int?, hostCount: Int? = nil, _ detail: String) {
        self.kind = kind
        self.offset = offset
        self.hostCount = hostCount
        self.detail = detail
    }

    /// The status to answer with (then close the connection): 400, 413, 414, 431, 501 or 505.
    public var status: Int {
        switch kind.code {
        case .malformed, .missingHost, .conflictingLength, .invalidArgument: return 400
        case .requestLineTooLong: return 414
        case .headTooLarge, .tooManyHeaders: return 431
        case .bodyTooLarge: return 413
        case .unsupportedVersion: return 505
        case .unsupportedTransferCoding: return 501
        }
    }

    public var description: String {
        var text = kind.summary
        if let offset { text += " at offset \(offset)" }
        return text + ": " + detail
    }

    private enum CodingKeys: String, CodingKey { case kind, offset, status, message }

    /// `{"kind", "offset", "status", "message"}`; `offset` is null for builder errors.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(kind.description, forKey: .kind)
        try container.encode(offset, forKey: .offset)
        try container.encode(status, forKey: .status)
        try container.encode(description, forKey: .message)
    }
}
