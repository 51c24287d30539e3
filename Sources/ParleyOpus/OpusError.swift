import COpus

/// The one error type of ParleyOpus: a libopus call failed, or a Swift-side argument check
/// refused a call before it reached libopus.
///
/// It names the operation (`opus_encode`, `opus_decode`, `OPUS_SET_BITRATE`, ...) and the
/// libopus return code, and renders as one line such as
/// `opus_decode failed: corrupted stream (OPUS_INVALID_PACKET, -4)`.
public struct OpusError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The class of failure, comparable with `==` against the static members.
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
        private enum Code: String, Sendable, Hashable {
            case badArgument = "OPUS_BAD_ARG"
            case bufferTooSmall = "OPUS_BUFFER_TOO_SMALL"
            case internalError = "OPUS_INTERNAL_ERROR"
            case invalidPacket = "OPUS_INVALID_PACKET"
            case unimplemented = "OPUS_UNIMPLEMENTED"
            case invalidState = "OPUS_INVALID_STATE"
            case allocationFailed = "OPUS_ALLOC_FAIL"
            case unknown = "unknown libopus error"
        }

        private let code: Code
        private init(_ code: Code) { self.code = code }

        /// An argument was out of range (sample rate, channel count, frame size, setting).
        public static let badArgument = Kind(.badArgument)
        /// The output buffer was too small for the result.
        public static let bufferTooSmall = Kind(.bufferTooSmall)
        /// libopus reported an internal error.
        public static let internalError = Kind(.internalError)
        /// The packet is corrupted or not an Opus packet.
        public static let invalidPacket = Kind(.invalidPacket)
        /// The request is not implemented by this libopus build.
        public static let unimplemented = Kind(.unimplemented)
        /// The codec state is invalid.
        public static let invalidState = Kind(.invalidState)
        /// libopus could not allocate memory.
        public static let allocationFailed = Kind(.allocationFailed)
        /// A negative return code this wrapper does not know.
        public static let unknown = Kind(.unknown)

        static func from(libopusCode code: Int32) -> Kind {
            switch code {
            case OPUS_BAD_ARG: .badArgument
            case OPUS_BUFFER_TOO_SMALL: .bufferTooSmall
            case OPUS_INTERNAL_ERROR: .internalError
            case OPUS_INVALID_PACKET: .invalidPacket
            case OPUS_UNIMPLEMENTED: .unimplemented
            case OPUS_INVALID_STATE: .invalidState
            case OPUS_ALLOC_FAIL: .allocationFailed
            default: .unknown
            }
        }

        public var description: String { code.rawValue }
    }

    /// What went wrong.
    public let kind: Kind
    /// The libopus function or request that failed, such as `opus_decode`.
    public let operation: String
    /// The libopus return code (negative), or 0 when the Swift wrapper refused the call
    /// before reaching libopus.
    public let libopusCode: Int32
    /// The specifics: libopus's own error string, or the wrapper's reason.
    public let detail: String

    /// An error for a negative libopus return code.
    init(operation: String, libopusCode: Int32) {
        self.kind = Kind.from(libopusCode: libopusCode)
        self.operation = operation
        self.libopusCode = libopusCode
        self.detail = String(cString: opus_strerror(libopusCode))
    }

    /// An error raised by the wrapper's own argument checks.
    init(_ kind: Kind, operation: String, detail: String) {
        self.kind = kind
        self.operation = operation
        self.libopusCode = 0
        self.detail = detail
    }

    public var description: String {
        libopusCode == 0
            ? "\(operation) failed: \(detail) (\(kind))"
            : "\(operation) failed: \(detail) (\(kind), \(libopusCode))"
    }
}

/// Throws for a negative libopus result; returns non-negative results unchanged.
@discardableResult
func check(_ result: Int32, _ operation: String) throws(OpusError) -> Int32 {
    if result < 0 { throw OpusError(operation: operation, libopusCode: result) }
    return result
}
