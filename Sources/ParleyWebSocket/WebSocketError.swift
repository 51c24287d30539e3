/// Every failure the WebSocket module reports: framing, message assembly, close frames
/// and the HTTP opening handshake.
///
/// An error says *what* went wrong (`kind`), *where* (`offset` into the byte stream, and
/// `line` for the HTTP head) and what the connection should do about it: `closeCode` is
/// the RFC 6455 §7.4.1 status code to send before closing, `httpStatus` the response a
/// server should answer a bad upgrade request with.
///
///     reserved opcode at offset 12: opcode 0x3 is reserved and no extension was negotiated
public struct WebSocketError: Error, Sendable, Hashable, CustomStringConvertible, Encodable {
    /// A stable identifier for the kind of problem, for matching in code and tests.
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
        fileprivate enum Code: String, Sendable, Hashable {
            // Framing (RFC 6455 §5.2)
            case truncated, trailingBytes, reservedBits, reservedOpcode, fragmentedControlFrame,
                 controlFrameTooLong, unmaskedFrame, maskedFrame, nonMinimalLength, invalidLength, frameTooLarge
            // Messages and closing (§5.4, §5.5.1, §7.4, §8.1)
            case unexpectedContinuation, expectedContinuation, messageTooLarge, invalidUTF8,
                 invalidClosePayload, invalidCloseCode, invalidCloseReason
            // Opening handshake (§4)
            case headTooLarge, malformedHTTP, methodNotAllowed, unsupportedHTTPVersion, missingHeader,
                 invalidHeader, unsupportedVersion, invalidKey, upgradeRejected, acceptMismatch,
                 unexpectedSubprotocol, unexpectedExtension, invalidArgument, cryptoFailure
        }

        fileprivate let code: Code
        private init(_ code: Code) { self.code = code }

        /// The stream ended inside a frame or an HTTP head.
        public static let truncated = Kind(.truncated)
        /// Bytes follow a value that was expected to fill the input.
        public static let trailingBytes = Kind(.trailingBytes)
        /// RSV1-3 set with no extension negotiated (§5.2).
        public static let reservedBits = Kind(.reservedBits)
        /// Opcode 0x3-0x7 or 0xB-0xF (§5.2).
        public static let reservedOpcode = Kind(.reservedOpcode)
        /// A control frame without FIN (§5.5).
        public static let fragmentedControlFrame = Kind(.fragmentedControlFrame)
        /// A control frame with more than 125 payload bytes (§5.5).
        public static let controlFrameTooLong = Kind(.controlFrameTooLong)
        /// A server received an unmasked frame (§5.1).
        public static let unmaskedFrame = Kind(.unmaskedFrame)
        /// A client received a masked frame (§5.1).
        public static let maskedFrame = Kind(.maskedFrame)
        /// A payload length not written in the fewest bytes (§5.2).
        public static let nonMinimalLength = Kind(.nonMinimalLength)
        /// A 64-bit payload length with its most significant bit set (§5.2).
        public static let invalidLength = Kind(.invalidLength)
        /// A frame longer than the configured limit.
        public static let frameTooLarge = Kind(.frameTooLarge)
        /// A continuation frame with no fragmented message open (§5.4).
        public static let unexpectedContinuation = Kind(.unexpectedContinuation)
        /// A new text or binary frame while a fragmented message is open (§5.4).
        public static let expectedContinuation = Kind(.expectedContinuation)
        /// A message longer than the configured limit.
        public static let messageTooLarge = Kind(.messageTooLarge)
        /// A text message that is not valid UTF-8 (§8.1).
        public static let invalidUTF8 = Kind(.invalidUTF8)
        /// A close frame with a one-byte payload (§5.5.1).
        public static let invalidClosePayload = Kind(.invalidClosePayload)
        /// A close status code that may not be sent on the wire (§7.4).
        public static let invalidCloseCode = Kind(.invalidCloseCode)
        /// A close reason that is not valid UTF-8 (§5.5.1).
        public static let invalidCloseReason = Kind(.invalidCloseReason)
        /// No end of the HTTP head within the size limit.
        public static let headTooLarge = Kind(.headTooLarge)
        /// An HTTP start line or header line that does not parse.
        public static let malformedHTTP = Kind(.malformedHTTP)
        /// An upgrade request whose method is not GET (§4.1).
        public static let methodNotAllowed = Kind(.methodNotAllowed)
        /// An HTTP version other than HTTP/1.1 (§4.1).
        public static let unsupportedHTTPVersion = Kind(.unsupportedHTTPVersion)
        /// A header the handshake requires is absent.
        public static let missingHeader = Kind(.missingHeader)
        /// A header is present but its value is not acceptable.
        public static let invalidHeader = Kind(.invalidHeader)
        /// Sec-WebSocket-Version is missing or not 13 (§4.4).
        public static let unsupportedVersion = Kind(.unsupportedVersion)
        /// Sec-WebSocket-Key is not base64 of 16 bytes (§4.1).
        public static let invalidKey = Kind(.invalidKey)
        /// The server answered the upgrade with a status other than 101.
        public static let upgradeRejected = Kind(.upgradeRejected)
        /// Sec-WebSocket-Accept does not match the key sent (§4.2.2).
        public static let acceptMismatch = Kind(.acceptMismatch)
        /// The server chose a subprotocol the client did not offer (§4.1).
        public static let unexpectedSubprotocol = Kind(.unexpectedSubprotocol)
        /// The server named an extension the client did not offer (§4.1).
        public static let unexpectedExtension = Kind(.unexpectedExtension)
        /// A value handed to a builder cannot be written (CR/LF in a header, wrong key size).
        public static let invalidArgument = Kind(.invalidArgument)
        /// SHA-1 through OpenSSL failed while computing Sec-WebSocket-Accept.
        public static let cryptoFailure = Kind(.cryptoFailure)

        /// The identifier, e.g. `reservedOpcode`; also the `kind` field of the JSON form.
        public var description: String { code.rawValue }

        /// A few words naming the problem; short enough for a close frame reason.
        public var summary: String {
            switch code {
            case .truncated: return "truncated input"
            case .trailingBytes: return "trailing bytes"
            case .reservedBits: return "reserved bits set"
            case .reservedOpcode: return "reserved opcode"
            case .fragmentedControlFrame: return "fragmented control frame"
            case .controlFrameTooLong: return "control frame too long"
            case .unmaskedFrame: return "unmasked client frame"
            case .maskedFrame: return "masked server frame"
            case .nonMinimalLength: return "non-minimal payload length"
            case .invalidLength: return "invalid payload length"
            case .frameTooLarge: return "frame too large"
            case .unexpectedContinuation: return "continuation frame without a message"
            case .expectedContinuation: return "data frame inside a fragmented message"
            case .messageTooLarge: return "message too large"
            case .invalidUTF8: return "invalid UTF-8 in text message"
            case .invalidClosePayload: return "invalid close payload"
            case .invalidCloseCode: return "invalid close code"
            case .invalidCloseReason: return "invalid UTF-8 in close reason"
            case .headTooLarge: return "HTTP head too large"
            case .malformedHTTP: return "malformed HTTP head"
            case .methodNotAllowed: return "method not allowed"
            case .unsupportedHTTPVersion: return "unsupported HTTP version"
            case .missingHeader: return "missing header"
            case .invalidHeader: return "invalid header"
            case .unsupportedVersion: return "unsupported WebSocket version"
            case .invalidKey: return "invalid Sec-WebSocket-Key"
            case .upgradeRejected: return "upgrade rejected"
            case .acceptMismatch: return "Sec-WebSocket-Accept mismatch"
            case .unexpectedSubprotocol: return "unexpected subprotocol"
            case .unexpectedExtension: return "unexpected extension"
            case .invalidArgument: return "invalid argument"
            case .cryptoFailure: return "SHA-1 failed"
            }
        }
    }

    /// What went wrong.
    public let kind: Kind
    /// Byte offset of the problem from the start of the stream (frames) or of the HTTP
    /// head (handshake); nil when the problem has no position (a missing header).
    public let offset: Int?
    /// 1-based line of the HTTP head the problem is on; nil for frames.
    public let line: Int?
    /// The specifics, e.g. `opcode 0x3 is reserved and no extension was negotiated`.
    public let detail: String

    init(_ kind: Kind, offset: Int? = nil, line: Int? = nil, _ detail: String) {
        self.kind = kind
        self.offset = offset
        self.line = line
        self.detail = detail
    }

    /// The status code to close the connection with (RFC 6455 §7.4.1): 1007 for invalid
    /// UTF-8, 1009 for size limits, 1002 for every other protocol error.
    public var closeCode: WebSocketCloseCode {
        switch kind.code {
        case .invalidUTF8, .invalidCloseReason: return .invalidPayloadData
        case .frameTooLarge, .messageTooLarge: return .messageTooBig
        default: return .protocolError
        }
    }

    /// The close frame content to send when failing the connection for this error.
    public var close: WebSocketClose { WebSocketClose(code: closeCode, reason: kind.summary) }

    /// For errors in an upgrade request: the HTTP status a server should reject it with
    /// (400, 405, 426, 431, 505, 500); nil for everything else.
    public var httpStatus: Int? {
        switch kind.code {
        case .headTooLarge: return 431
        case .truncated, .trailingBytes: return line != nil ? 400 : nil
        case .malformedHTTP, .missingHeader, .invalidHeader, .invalidKey: return 400
        case .methodNotAllowed: return 405
        case .unsupportedHTTPVersion: return 505
        case .unsupportedVersion: return 426
        case .cryptoFailure: return 500
        default: return nil
        }
    }

    public var description: String {
        var text = kind.summary
        if let line { text += " at line \(line)" } else if let offset { text += " at offset \(offset)" }
        return text + ": " + detail
    }

    private enum CodingKeys: String, CodingKey { case kind, offset, line, closeCode, httpStatus, message }

    /// `{"kind", "offset", "line", "closeCode", "httpStatus", "message"}`; absent values are null.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(kind.description, forKey: .kind)
        try container.encode(offset, forKey: .offset)
        try container.encode(line, forKey: .line)
        try container.encode(closeCode.rawValue, forKey: .closeCode)
        try container.encode(httpStatus, forKey: .httpStatus)
        try container.encode(description, forKey: .message)
    }
}
