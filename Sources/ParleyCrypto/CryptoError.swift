internal import COpenSSL

/// An error from a cryptographic operation, with OpenSSL's own reason where it gave one.
public struct CryptoError: Error, Sendable, Hashable, CustomStringConvertible {
    private enum Code: Hashable, Sendable { case openSSL }
    private let code: Code
    /// The OpenSSL function that failed.
    public let function: String
    /// OpenSSL's error queue, oldest first, as readable strings.
    public let reasons: [String]

    private init(code: Code, function: String, reasons: [String]) {
        self.code = code
        self.function = function
        self.reasons = reasons
    }

    /// Drains OpenSSL's thread-local error queue into an error naming `function`.
    static func openSSL(_ function: String) -> CryptoError {
        var reasons: [String] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            reasons.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return CryptoError(code: .openSSL, function: function, reasons: reasons)
    }

    public var description: String {
        reasons.isEmpty ? "\(function) failed" : "\(function) failed: \(reasons.joined(separator: "; "))"
    }
}
