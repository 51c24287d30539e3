internal import COpenSSL

/// An error from a cryptographic operation or the DTLS layer, with OpenSSL's own reason
/// where it gave one.
///
/// Compare ``kind`` to tell errors apart (`error.kind == .fingerprintMismatch`); the
/// ``description`` is one line meant for logs and people.
public struct CryptoError: Error, Sendable, Hashable, CustomStringConvertible {
    fileprivate enum Code: Hashable, Sendable {
        case openSSL
        case fingerprintMismatch
        case srtpNotNegotiated
        case handshakeTimeout
        case invalidState
        case invalidKey
        case certificateRejected
    }

    /// What went wrong, without the details; compare with the static members.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        fileprivate let code: Code
        /// An OpenSSL call failed (see ``CryptoError/function`` and ``CryptoError/reasons``).
        public static let openSSL = Kind(code: .openSSL)
        /// The DTLS peer's certificate does not have the fingerprint signaled in SDP.
        public static let fingerprintMismatch = Kind(code: .fingerprintMismatch)
        /// The DTLS handshake completed without an SRTP protection profile (no `use_srtp`).
        public static let srtpNotNegotiated = Kind(code: .srtpNotNegotiated)
        /// The DTLS handshake did not complete within the configured total time.
        public static let handshakeTimeout = Kind(code: .handshakeTimeout)
        /// A DTLS call was made in a state that does not allow it.
        public static let invalidState = Kind(code: .invalidState)
        /// A key (PEM text, or a signature's shape) could not be used: wrong format, type or curve.
        public static let invalidKey = Kind(code: .invalidKey)
        /// A TLS peer's certificate failed verification (untrusted issuer, wrong host name
        /// or address, expired, ...); ``CryptoError/detail`` names the reason.
        public static let certificateRejected = Kind(code: .certificateRejected)

        public var description: String {
            switch code {
            case .openSSL: return "openSSL"
            case .fingerprintMismatch: return "fingerprintMismatch"
            case .srtpNotNegotiated: return "srtpNotNegotiated"
            case .handshakeTimeout: return "handshakeTimeout"
            case .invalidState: return "invalidState"
            case .invalidKey: return "invalidKey"
            case .certificateRejected: return "certificateRejected"
            }
        }
    }

    private let code: Code
    /// The OpenSSL function that failed, or the operation that was attempted.
    public let function: String
    /// OpenSSL's error queue, oldest first, as readable strings (empty for non-OpenSSL errors).
    public let reasons: [String]
    /// A one-line human explanation for errors that are not OpenSSL's own.
    public let detail: String?

    private init(code: Code, function: String, reasons: [String], detail: String? = nil) {
        self.code = code
        self.function = function
        self.reasons = reasons
        self.detail = detail
    }

    /// What kind of error this is.
    public var kind: Kind { Kind(code: code) }

    /// Drains OpenSSL's thread-local error queue into an error naming `function`.
    static func openSSL(_ function: String) -> CryptoError {
        CryptoError(code: .openSSL, function: function, reasons: drainErrorQueue())
    }

    /// Drains OpenSSL's error queue, adding `detail` (used when OpenSSL may have said nothing).
    static func openSSL(_ function: String, detail: String) -> CryptoError {
        CryptoError(code: .openSSL, function: function, reasons: drainErrorQueue(), detail: detail)
    }

    static func fingerprintMismatch(_ detail: String) -> CryptoError {
        CryptoError(code: .fingerprintMismatch, function: "DTLS peer verification", reasons: [], detail: detail)
    }

    static func srtpNotNegotiated(_ detail: String) -> CryptoError {
        CryptoError(code: .srtpNotNegotiated, function: "DTLS-SRTP", reasons: [], detail: detail)
    }

    static func handshakeTimeout(_ detail: String) -> CryptoError {
        CryptoError(code: .handshakeTimeout, function: "DTLS handshake", reasons: [], detail: detail)
    }

    static func invalidState(_ function: String, _ detail: String) -> CryptoError {
        CryptoError(code: .invalidState, function: function, reasons: [], detail: detail)
    }

    static func invalidKey(_ function: String, _ detail: String) -> CryptoError {
        CryptoError(code: .invalidKey, function: function, reasons: drainErrorQueue(), detail: detail)
    }

    static func certificateRejected(_ detail: String) -> CryptoError {
        CryptoError(code: .certificateRejected, function: "TLS certificate verification", reasons: drainErrorQueue(), detail: detail)
    }

    private static func drainErrorQueue() -> [String] {
        var reasons: [String] = []
        // Bounded: OpenSSL's queue holds at most 16 entries.
        for _ in 0..<64 {
            let code = ERR_get_error()
            if code == 0 { break }
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            reasons.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return reasons
    }

    public var description: String {
        var text = "\(function) failed"
        if let detail { text += ": \(detail)" }
        if !reasons.isEmpty { text += (detail == nil ? ": " : "; OpenSSL: ") + reasons.joined(separator: "; ") }
        return text
    }
}
