/// Every error the SDP module throws: parse failures (with the 1-based line number)
/// and offer/answer failures (with the line of the `m=` section when there is one).
///
/// Compare errors by `kind`; `reason` is the one-line human description, and
/// `description` puts both together, e.g.
/// `line 7: malformed m= line: port "99999" is out of range 0-65535`.
public struct SDPError: Error, Sendable, Hashable, CustomStringConvertible {
    fileprivate enum Code: String, Sendable, Hashable {
        case inputTooLarge, tooManyLines, tooManyMediaSections
        case invalidText, malformedLine, unknownLineType, lineOutOfOrder, duplicateLine, missingLine
        case malformedAttribute
        case missingICECredentials, missingFingerprint, noAudioMedia, noCommonCodec
        case unsupportedProtocol, noUsableCrypto, invalidAnswer, invalidCapabilities
    }

    /// What went wrong, without the where and the details.
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
        fileprivate let code: Code

        /// The input is longer than `SDPLimits.maxBytes`.
        public static let inputTooLarge = Kind(code: .inputTooLarge)
        /// More lines than `SDPLimits.maxLines`.
        public static let tooManyLines = Kind(code: .tooManyLines)
        /// More `m=` sections than `SDPLimits.maxMediaSections`.
        public static let tooManyMediaSections = Kind(code: .tooManyMediaSections)
        /// Invalid UTF-8, a NUL byte or a stray carriage return.
        public static let invalidText = Kind(code: .invalidText)
        /// A line that does not follow its grammar (`x=value`, or the fields of o/c/t/m/b...).
        public static let malformedLine = Kind(code: .malformedLine)
        /// A type letter that RFC 8866 does not define (the RFC says to reject these).
        public static let unknownLineType = Kind(code: .unknownLineType)
        /// A line in the wrong place (RFC 8866 §5 fixes the order).
        public static let lineOutOfOrder = Kind(code: .lineOutOfOrder)
        /// A line that may appear once appears twice.
        public static let duplicateLine = Kind(code: .duplicateLine)
        /// A required line (v=, o=, s=) is missing.
        public static let missingLine = Kind(code: .missingLine)
        /// An attribute whose value does not follow its RFC grammar (typed accessors).
        public static let malformedAttribute = Kind(code: .malformedAttribute)
        /// No `a=ice-ufrag`/`a=ice-pwd` for an accepted media section.
        public static let missingICECredentials = Kind(code: .missingICECredentials)
        /// No `a=fingerprint` for an accepted media section.
        public static let missingFingerprint = Kind(code: .missingFingerprint)
        /// The description has no usable `m=audio` section.
        public static let noAudioMedia = Kind(code: .noAudioMedia)
        /// No offered audio codec is one we can use.
        public static let noCommonCodec = Kind(code: .noCommonCodec)
        /// The audio section uses a transport protocol we do not speak.
        public static let unsupportedProtocol = Kind(code: .unsupportedProtocol)
        /// An `RTP/SAVP` audio section with no `a=crypto` line we can use (RFC 4568: no suite we
        /// run, an MKI, or session parameters we do not support). A SIP answerer says 488.
        public static let noUsableCrypto = Kind(code: .noUsableCrypto)
        /// An answer that does not fit the offer it answers (RFC 3264 §6).
        public static let invalidAnswer = Kind(code: .invalidAnswer)
        /// Local capabilities that cannot produce a valid description.
        public static let invalidCapabilities = Kind(code: .invalidCapabilities)

        public var description: String { code.rawValue }
    }

    private let code: Code
    /// 1-based line number the problem is on, or nil when it concerns the whole description.
    public let line: Int?
    /// One line saying what is wrong.
    public let reason: String

    /// The kind of problem, for matching: `error.kind == .noCommonCodec`.
    public var kind: Kind { Kind(code: code) }

    init(_ kind: Kind, line: Int?, _ reason: String) {
        self.code = kind.code
        self.line = line
        self.reason = reason
    }

    /// An attribute value that does not follow `T`'s grammar.
    static func malformed<T: SDPAttributeValue>(_ type: T.Type, _ reason: String) -> SDPError {
        SDPError(.malformedAttribute, line: nil, "malformed a=\(T.attributeName): \(reason)")
    }

    /// The same error placed on `line` (keeps an existing line number).
    func at(line: Int?) -> SDPError {
        SDPError(kind, line: self.line ?? line, reason)
    }

    public var description: String {
        if let line { return "line \(line): \(reason)" }
        return reason
    }
}
