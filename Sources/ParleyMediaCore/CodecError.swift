/// The error type of ParleyMediaCore's audio layer: WAV parsing and writing, resampler
/// configuration, audio file I/O and the payload codecs (`AudioPayloadCodec`).
///
/// It says what went wrong (`kind`) and where (`offset`, in bytes from the start of the
/// parsed buffer; 0 when no byte position applies), and renders as one line such as
/// `truncated WAV chunk header at offset 36: need 8 bytes, 3 left`.
public struct CodecError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The class of problem, comparable with `==` against the static members.
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
        private enum Code: String, Sendable, Hashable {
            case truncated
            case invalidLength
            case malformed
            case unsupportedFormat
            case invalidArgument
            case fileError
            case codecFailure
        }

        private let code: Code
        private init(_ code: Code) { self.code = code }

        /// The input ended before a field or chunk it announced.
        public static let truncated = Kind(.truncated)
        /// A size field disagrees with the bytes present or with other fields.
        public static let invalidLength = Kind(.invalidLength)
        /// A structural rule is broken (missing RIFF/WAVE tag, missing or repeated chunk).
        public static let malformed = Kind(.malformed)
        /// Well-formed but not supported: non-PCM, not 16-bit, more than two channels,
        /// an unsupported sample rate.
        public static let unsupportedFormat = Kind(.unsupportedFormat)
        /// A value handed to an initializer or writer is out of range.
        public static let invalidArgument = Kind(.invalidArgument)
        /// Reading or writing a file failed (`detail` carries the errno text).
        public static let fileError = Kind(.fileError)
        /// libopus refused to set up, encode or decode (`detail` carries its error).
        public static let codecFailure = Kind(.codecFailure)

        public var description: String { code.rawValue }
    }

    /// What went wrong.
    public let kind: Kind
    /// Byte offset of the problem from the start of the parsed buffer (0 if not applicable).
    public let offset: Int
    /// What was being read or done, such as `WAV fmt chunk` or `resampler`.
    public let context: String
    /// The specifics, such as `need 16 bytes, 4 left`.
    public let detail: String

    init(_ kind: Kind, offset: Int = 0, _ context: String, _ detail: String) {
        self.kind = kind
        self.offset = offset
        self.context = context
        self.detail = detail
    }

    public var description: String {
        switch kind {
        case .truncated: "truncated \(context) at offset \(offset): \(detail)"
        case .invalidArgument, .fileError, .codecFailure: "\(context): \(detail)"
        case .unsupportedFormat: "unsupported \(context) at offset \(offset): \(detail)"
        default: "invalid \(context) at offset \(offset): \(detail)"
        }
    }
}
