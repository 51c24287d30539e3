import ParleyCrypto
import ParleyWireCore

/// The signed-request scheme Sinch uses for callbacks and REST requests, in one place so
/// the signer and the verifier cannot disagree:
///
///     StringToSign = VERB "\n" Content-MD5 "\n" Content-Type "\n" "x-timestamp:" TIMESTAMP "\n" PATH
///     Signature    = Base64(HMAC-SHA256(Base64Decode(secret), UTF-8(StringToSign)))
///     Authorization: Application {key}:{Signature}
///
/// Content-MD5 is Base64 of the body's MD5; for a request without a body it and
/// Content-Type are empty lines.
enum SinchSignature {
    /// The `Authorization` scheme; matched without regard to case on receipt (Sinch's
    /// pages write both `Application` and `application`).
    static let scheme = "Application"

    static func stringToSign(method: String, contentMD5: String, contentType: String, timestamp: String, path: String) -> String {
        "\(method)\n\(contentMD5)\n\(contentType)\nx-timestamp:\(timestamp)\n\(path)"
    }

    static func contentMD5(of body: [UInt8]) throws(VoiceAPIError) -> String {
        do throws(CryptoError) {
            return Base64.encode(try Digest.hash(.md5, body))
        } catch {
            throw VoiceAPIError(.cryptoFailure, "MD5 of the body failed: \(error)")
        }
    }

    static func signature(_ stringToSign: String, secret: [UInt8]) throws(VoiceAPIError) -> [UInt8] {
        do throws(CryptoError) {
            return try Digest.hmac(.sha256, key: secret, Array(stringToSign.utf8))
        } catch {
            throw VoiceAPIError(.cryptoFailure, "HMAC-SHA256 failed: \(error)")
        }
    }

    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        Digest.constantTimeEqual(a, b)
    }

    /// Whether `text` may stand in a header line and on a line of the string to sign:
    /// visible ASCII and spaces, no line breaks or other control characters.
    static func isHeaderSafe(_ text: String) -> Bool {
        text.utf8.allSatisfy { $0 >= 0x20 && $0 < 0x7F }
    }
}
