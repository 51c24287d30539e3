import ParleyCrypto

/// The digests this module needs, over `[UInt8]`, calling ParleyCrypto's raw-buffer entry
/// points. ParleyCrypto's generic `Digest.hmac`, `Digest.hash` and
/// `Digest.constantTimeEqual` are not specialized across the module boundary, and their
/// generic metadata lookups cost more than the HMAC itself (about 60 % of a token
/// verification in a profile), so the concrete versions live here.
enum AuthCrypto {
    static func hmacSHA256(key: [UInt8], _ message: [UInt8]) throws(AuthError) -> [UInt8] {
        let result: Result<[UInt8], CryptoError> = key.withUnsafeBytes { keyBytes in
            message.withUnsafeBytes { messageBytes in
                do throws(CryptoError) {
                    return .success(try Digest.hmac(.sha256, rawKey: keyBytes, raw: messageBytes))
                } catch {
                    return .failure(error)
                }
            }
        }
        do { return try result.get() } catch { throw AuthError(.cryptoFailure, "HMAC-SHA256 failed: \(error)") }
    }

    static func sha256(_ bytes: [UInt8]) throws(AuthError) -> [UInt8] {
        let result: Result<[UInt8], CryptoError> = bytes.withUnsafeBytes { buffer in
            do throws(CryptoError) {
                return .success(try Digest.hash(.sha256, raw: buffer))
            } catch {
                return .failure(error)
            }
        }
        do { return try result.get() } catch { throw AuthError(.cryptoFailure, "SHA-256 failed: \(error)") }
    }

    /// True if `a` and `b` are equal, in time that depends only on their lengths: every
    /// byte is compared, with no early exit.
    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in 0..<a.count { difference |= a[index] ^ b[index] }
        return difference == 0
    }
}
