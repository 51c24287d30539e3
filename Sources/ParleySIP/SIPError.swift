/// Every problem the SIP module finds, with what a receiver should do about it.
///
/// A request that cannot be accepted is answered (`disposition == .respond(...)`: 400 with
/// a reason naming the problem, 416 for a Request-URI scheme we do not serve, 505 for
/// another SIP version, 501 for an unknown method whose CSeq disagrees, 513 for a message
/// past the size limit) when it has a usable top Via to answer along; anything else is
/// dropped: a bad response (RFC 3261 §18.1.2 leaves nothing to answer), a request
/// without a usable Via, or input past a limit that was never read. Over a stream,
/// `closesConnection` says the framing is lost (the Content-Length is missing or wrong, a
/// limit was passed): answer if told to, then close.
///
/// `makeResponse(toTag:)` builds the suggested answer from the header fields of the
/// request that were read (§8.2.6: Via, From, To, Call-ID, CSeq).
public struct SIPError: Error, Sendable, Hashable, CustomStringConvertible {
    enum Code: String, Sendable, Hashable {
        case messageTooLarge, limitExceeded, emptyMessage, invalidText
        case malformedStartLine, malformedHeaderLine, unsupportedVersion
        case invalidContentLength, missingContentLength
        case missingHeader, duplicateHeader, malformedHeader
        case malformedURI, unsupportedURIScheme, methodMismatch, malformedBody
        case invalidArgument
    }

    /// The category of a problem; compare with the static members (`.missingHeader`...).
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
        let code: Code
        init(_ code: Code) { self.code = code }

        /// The message is longer than `SIPLimits.maxMessageBytes` (513 when its head was
        /// read, else dropped).
        public static let messageTooLarge = Kind(.messageTooLarge)
        /// Too many header fields, or a line or value past its limit (dropped).
        public static let limitExceeded = Kind(.limitExceeded)
        /// Nothing but line breaks (a keepalive), or no bytes at all (dropped).
        public static let emptyMessage = Kind(.emptyMessage)
        /// The head is not UTF-8, or holds a CR or LF outside a line break (400).
        public static let invalidText = Kind(.invalidText)
        /// The Request-Line or Status-Line does not follow §7.1/§7.2 (400).
        public static let malformedStartLine = Kind(.malformedStartLine)
        /// A header line without a colon, with a name that is not a token, or a folded line
        /// before the first header (400).
        public static let malformedHeaderLine = Kind(.malformedHeaderLine)
        /// A SIP version other than 2.0 (505).
        public static let unsupportedVersion = Kind(.unsupportedVersion)
        /// Content-Length is not a number, appears twice, or promises more bytes than a
        /// datagram holds (400).
        public static let invalidContentLength = Kind(.invalidContentLength)
        /// No Content-Length on a stream transport, where it frames the message (400).
        public static let missingContentLength = Kind(.missingContentLength)
        /// A mandatory header field (§8.1.1) is absent (400; dropped without Via).
        public static let missingHeader = Kind(.missingHeader)
        /// A header that may appear once appears more than once (400).
        public static let duplicateHeader = Kind(.duplicateHeader)
        /// A header value that does not follow its grammar (400).
        public static let malformedHeader = Kind(.malformedHeader)
        /// A URI that does not follow RFC 3261 §25.1 (400 when it is the Request-URI).
        public static let malformedURI = Kind(.malformedURI)
        /// A Request-URI whose scheme is not sip, sips or tel (416).
        public static let unsupportedURIScheme = Kind(.unsupportedURIScheme)
        /// The CSeq method differs from the request's method (400; 501 for a method we do
        /// not know, as RFC 4475 §3.1.2.18 advises).
        public static let methodMismatch = Kind(.methodMismatch)
        /// A multipart body that does not follow RFC 2046 (400).
        public static let malformedBody = Kind(.malformedBody)
        /// A value handed to a builder cannot be written safely (local input, not received).
        public static let invalidArgument = Kind(.invalidArgument)

        public var description: String { code.rawValue }
    }

    /// What a receiver does with the message.
    public enum Disposition: Sendable, Hashable {
        /// Answer with this status and reason phrase (then carry on, unless
        /// `closesConnection`).
        case respond(statusCode: Int, reasonPhrase: String)
        /// Discard the message without an answer.
        case drop
    }

    /// What went wrong.
    public let kind: Kind
    /// The specifics, for logs: `CSeq number 36893488147419103232 is out of range`.
    public let detail: String
    /// Byte offset of the problem from the start of the message, when known.
    public internal(set) var offset: Int?
    /// The lowercase full name of the header concerned (`"cseq"`), when there is one.
    public internal(set) var headerName: String?
    /// What a receiver does with the message.
    public internal(set) var disposition: Disposition
    /// Over a stream: the message's end is unknown, so the connection must be closed.
    public internal(set) var closesConnection: Bool
    /// The Via, From, To, Call-ID, CSeq and Timestamp fields of the rejected request, in
    /// order, for building the answer (empty when dropping).
    public internal(set) var requestHeaders: SIPHeaders

    /// The status a request would be answered with if it has a usable Via.
    private(set) var answer: (statusCode: Int, reasonPhrase: String)?

    init(_ kind: Kind, offset: Int? = nil, header: String? = nil, status: (Int, String)? = nil, _ detail: String) {
        self.kind = kind
        self.detail = detail
        self.offset = offset
        self.headerName = header
        self.closesConnection = false
        self.requestHeaders = SIPHeaders()
        let answer: (Int, String)? = status ?? Self.defaultAnswer(kind.code, header: header)
        if let answer {
            self.answer = (statusCode: answer.0, reasonPhrase: answer.1)
            self.disposition = Disposition.respond(statusCode: answer.0, reasonPhrase: answer.1)
        } else {
            self.answer = nil
            self.disposition = Disposition.drop
        }
    }

    private static func defaultAnswer(_ code: Code, header: String?) -> (Int, String)? {
        let name = header.map(SIPHeaderName.display) ?? "Header"
        switch code {
        case .messageTooLarge: return (513, "Message Too Large")
        case .limitExceeded, .emptyMessage, .invalidArgument: return nil
        case .invalidText: return (400, "Invalid Text")
        case .malformedStartLine: return (400, "Malformed Request-Line")
        case .malformedHeaderLine: return (400, "Malformed Header Line")
        case .unsupportedVersion: return (505, "Version Not Supported")
        case .invalidContentLength: return (400, "Bad Content-Length")
        case .missingContentLength: return (400, "Missing Content-Length")
        case .missingHeader: return (400, "Missing \(name)")
        case .duplicateHeader: return (400, "Duplicate \(name)")
        case .malformedHeader: return (400, "Bad \(name)")
        case .malformedURI: return (400, "Bad Request-URI")
        case .unsupportedURIScheme: return (416, "Unsupported URI Scheme")
        case .methodMismatch: return (400, "CSeq Method Mismatch")
        case .malformedBody: return (400, "Bad Message Body")
        }
    }

    /// The same error as it concerns a received message: dropped when the message is a
    /// response or has no usable top Via, else answered with the fields needed for §8.2.6.
    func placed(isResponse: Bool, headers: SIPHeaders, offset: Int? = nil, closesConnection: Bool = false) -> SIPError {
        var error = self
        if error.offset == nil { error.offset = offset }
        error.closesConnection = error.closesConnection || closesConnection
        if !isResponse, let answer, SIPVia.hasUsableTopVia(headers) {
            error.disposition = .respond(statusCode: answer.statusCode, reasonPhrase: answer.reasonPhrase)
            error.requestHeaders = SIPHeaders(fields: headers.fields.filter {
                Self.copiedIntoResponses.contains($0.canonicalName)
            })
        } else {
            error.disposition = .drop
            error.requestHeaders = SIPHeaders()
        }
        return error
    }

    /// The same error, never answered: input that was not read.
    func dropped(closesConnection: Bool = false) -> SIPError {
        var error = self
        error.answer = nil
        error.disposition = .drop
        error.requestHeaders = SIPHeaders()
        error.closesConnection = closesConnection
        return error
    }

    /// The same error concerning header `name` (a typed parser does not know which header
    /// its text came from), so the reason names it: `400 Bad Contact`.
    func about(header name: String) -> SIPError {
        SIPError(kind == .malformedURI ? .malformedHeader : kind, offset: offset, header: name, detail)
    }

    /// The fields RFC 3261 §8.2.6 copies from a request into its responses.
    static let copiedIntoResponses: Set<String> = ["via", "from", "to", "call-id", "cseq", "timestamp"]

    /// The answer `disposition` suggests, built from `requestHeaders` as RFC 3261 §8.2.6.2
    /// says (Via, From, To, Call-ID and CSeq copied; `toTag` added to a To without a tag),
    /// to be sent to the top Via's address (§18.2.2). Nil when the message is to be
    /// dropped; throws `invalidArgument` when `toTag` is not a token.
    public func makeResponse(toTag: String? = nil) throws(SIPError) -> SIPMessage? {
        guard case .respond(let statusCode, let reasonPhrase) = disposition else { return nil }
        if let toTag, !SIPGrammar.isToken(toTag) { throw SIPError(.invalidArgument, "To tag \(SIPGrammar.quote(toTag)) is not a token") }
        return SIPMessage.response(statusCode: statusCode, reasonPhrase: reasonPhrase, copying: requestHeaders, toTag: toTag)
    }

    public var description: String {
        var text = "\(kind)"
        if let offset { text += " at offset \(offset)" }
        text += ": " + detail
        switch disposition {
        case .respond(let statusCode, let reasonPhrase): text += " -> \(statusCode) \(reasonPhrase)"
        case .drop: text += " -> drop"
        }
        if closesConnection { text += ", close the connection" }
        return text
    }

    public static func == (lhs: SIPError, rhs: SIPError) -> Bool {
        lhs.kind == rhs.kind && lhs.detail == rhs.detail && lhs.offset == rhs.offset && lhs.headerName == rhs.headerName
            && lhs.disposition == rhs.disposition && lhs.closesConnection == rhs.closesConnection
            && lhs.requestHeaders == rhs.requestHeaders
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(kind)
        hasher.combine(detail)
        hasher.combine(offset)
        hasher.combine(disposition)
    }
}
