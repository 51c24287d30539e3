/// The one error type of ParleyRTP: every parse or serialize failure of RTP, RTCP and
/// RFC 4733 telephone-event payloads.
///
/// It says what went wrong (`kind`) and where (`offset`, in bytes from the start of the
/// buffer that was handed to the parser), and renders as one readable line such as
/// `truncated RTP header at offset 0: need 12 bytes, 5 left`.
public struct RTPError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The class of problem, comparable with `==` against the static members.
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
        private enum Code: String, Sendable, Hashable {
            case truncated
            case unsupportedVersion
            case invalidPadding
            case invalidLength
            case invalidHeaderExtension
            case malformed
            case invalidValue
        }

        private let code: Code
        private init(_ code: Code) { self.code = code }

        /// The input ended before a field it announced.
        public static let truncated = Kind(.truncated)
        /// The version field is not 2.
        public static let unsupportedVersion = Kind(.unsupportedVersion)
        /// A padding count is zero, too large, or padding appears where it may not.
        public static let invalidPadding = Kind(.invalidPadding)
        /// A length or count field disagrees with the bytes present.
        public static let invalidLength = Kind(.invalidLength)
        /// An RFC 8285 header extension element list is malformed.
        public static let invalidHeaderExtension = Kind(.invalidHeaderExtension)
        /// Some other structural rule is broken (for example non-zero SDES padding).
        public static let malformed = Kind(.malformed)
        /// A value handed to a serializer or builder does not fit its field.
        public static let invalidValue = Kind(.invalidValue)

        public var description: String { code.rawValue }
    }

    /// What went wrong.
    public let kind: Kind
    /// Byte offset of the problem from the start of the parsed buffer (for serializer
    /// errors: where the bad field would go in the serialized message).
    public let offset: Int
    /// What was being read, such as `RTP header` or `SDES item`.
    public let context: String
    /// The specifics, such as `need 12 bytes, 5 left`.
    public let detail: String

    init(_ kind: Kind, offset: Int, _ context: String, _ detail: String) {
        self.kind = kind
        self.offset = offset
        self.context = context
        self.detail = detail
    }

    static func truncated(_ context: String, offset: Int, needed: Int, available: Int) -> RTPError {
        RTPError(.truncated, offset: offset, context, "need \(needed) bytes, \(max(available, 0)) left")
    }

    public var description: String {
        let prefix: String
        switch kind {
        case .truncated: prefix = "truncated "
        default: prefix = "invalid "
        }
        return "\(prefix)\(context) at offset \(offset): \(detail)"
    }
}
