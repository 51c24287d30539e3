/// Why an SRTP operation failed: a readable kind (authentication failure, replay, ...), the
/// operation and packet length it concerned, and libsrtp's own status code when libsrtp said it.
public struct SRTPError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong, as a small closed set that callers can match on (`error.kind == .authFailure`).
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
        fileprivate enum Code: String, Sendable, Hashable {
            case authFailure, replayOld, replayFail, badParameter, truncated, bufferTooSmall,
                 wrongDirection, keyExpired, cipherFailure, noContext, allocationFailure,
                 initFailure, libraryFailure
        }

        fileprivate let code: Code

        /// The authentication tag did not verify: forged, corrupted, or protected with other keys.
        public static let authFailure = Kind(code: .authFailure)
        /// The packet index is older than the replay window (RFC 3711 §3.3.2).
        public static let replayOld = Kind(code: .replayOld)
        /// The packet index was already seen inside the replay window (a replayed packet); on the
        /// sending side, the same sequence number was protected twice.
        public static let replayFail = Kind(code: .replayFail)
        /// A parameter libsrtp refused: key material length, replay window size, a malformed header.
        public static let badParameter = Kind(code: .badParameter)
        /// The packet is shorter than its header (and, when unprotecting, its tag) requires.
        public static let truncated = Kind(code: .truncated)
        /// An in-place call's buffer has no room for the trailer `protect` appends.
        public static let bufferTooSmall = Kind(code: .bufferTooSmall)
        /// Protect on an inbound session or unprotect on an outbound one.
        public static let wrongDirection = Kind(code: .wrongDirection)
        /// The master key reached its packet limit (RFC 3711 §9.2): rekey.
        public static let keyExpired = Kind(code: .keyExpired)
        /// The cipher itself failed.
        public static let cipherFailure = Kind(code: .cipherFailure)
        /// libsrtp found no stream context for the packet.
        public static let noContext = Kind(code: .noContext)
        /// libsrtp could not allocate memory.
        public static let allocationFailure = Kind(code: .allocationFailure)
        /// libsrtp could not initialise (srtp_init or its crypto kernel self-tests failed).
        public static let initFailure = Kind(code: .initFailure)
        /// Any other libsrtp status; `SRTPError.libsrtpStatus` holds its number.
        public static let libraryFailure = Kind(code: .libraryFailure)

        /// The kind's name, e.g. `authFailure`.
        public var description: String { code.rawValue }

        /// Whether this kind counts as an authentication failure, a replay, or another failure.
        var counter: WritableKeyPath<SRTPCounters, UInt64> {
            switch code {
            case .authFailure: \.authFailures
            case .replayOld, .replayFail: \.replays
            default: \.otherFailures
            }
        }
    }

    /// The operation that failed.
    public enum Operation: String, Sendable, Hashable, Codable {
        case create, protect, unprotect, protectRTCP, unprotectRTCP
    }

    /// What went wrong.
    public let kind: Kind
    /// Which operation failed.
    public let operation: Operation
    /// Length in bytes of the packet (or key material, for `create`) the operation was given.
    public let length: Int
    /// libsrtp's `srtp_err_status_t` value, or nil when the check failed in Swift before libsrtp ran.
    public let libsrtpStatus: Int32?
    /// One line saying what was wrong, e.g. `need 22 bytes for header and tag, have 15`.
    public let detail: String

    init(_ kind: Kind, _ operation: Operation, length: Int, libsrtpStatus: Int32? = nil, detail: String) {
        self.kind = kind
        self.operation = operation
        self.length = length
        self.libsrtpStatus = libsrtpStatus
        self.detail = detail
    }

    /// Maps a libsrtp status (never `srtp_err_status_ok`) to an error.
    init(libsrtpStatus status: Int32, operation: Operation, length: Int) {
        // Numbers from srtp_err_status_t in srtp2/srtp.h (libsrtp 2.x keeps them stable).
        let kind: Kind
        let detail: String
        switch status {
        case 2: (kind, detail) = (.badParameter, "libsrtp refused a parameter or a malformed packet")
        case 3: (kind, detail) = (.allocationFailure, "libsrtp could not allocate memory")
        case 5: (kind, detail) = (.initFailure, "libsrtp failed to initialise")
        case 7: (kind, detail) = (.authFailure, "authentication tag did not verify")
        case 8: (kind, detail) = (.cipherFailure, "cipher failure")
        case 9: (kind, detail) = (.replayFail, "packet index already seen (replay)")
        case 10: (kind, detail) = (.replayOld, "packet index older than the replay window")
        case 13: (kind, detail) = (.noContext, "no stream context for this SSRC")
        case 15: (kind, detail) = (.keyExpired, "master key reached its packet limit")
        default: (kind, detail) = (.libraryFailure, "libsrtp status \(status)")
        }
        self.init(kind, operation, length: length, libsrtpStatus: status, detail: detail)
    }

    /// `unprotect of 40 bytes: authFailure: authentication tag did not verify (libsrtp status 7)`.
    public var description: String {
        let status = libsrtpStatus.map { " (libsrtp status \($0))" } ?? ""
        return "\(operation.rawValue) of \(length) bytes: \(kind): \(detail)\(status)"
    }
}
