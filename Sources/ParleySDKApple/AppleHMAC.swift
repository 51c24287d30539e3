#if canImport(CryptoKit)
import CryptoKit

/// HMAC-SHA256 on Apple platforms, from CryptoKit: what the portable core takes through
/// `ParleyEngines.hmacSHA256` and the push queries.
enum AppleHMAC {
    static let sha256: @Sendable ([UInt8], [UInt8]) -> [UInt8]? = { key, message in
        Array(HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: key)))
    }
}
#endif
