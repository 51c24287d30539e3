import ParleyWireCore

/// An application's key and secret, as signed requests use them: the key names the
/// application in `Authorization`, the secret (Base64 text, as the dashboard and
/// `parleyd app` show it) is decoded and keys the HMAC.
public struct SinchApplicationCredentials: Sendable, Hashable {
    /// The application key, e.g. `669E367E-6BBA-48AB-AF15-266871C28135`.
    public let applicationKey: String
    /// The decoded secret: the HMAC-SHA256 key.
    let secret: [UInt8]

    /// Credentials from the key and the Base64 secret; refused when the key holds a space,
    /// a colon or a control character (it could not be read back from the header) or the
    /// secret is not strict Base64 of at least one byte.
    public init(applicationKey: String, applicationSecret: String) throws(VoiceAPIError) {
        guard !applicationKey.isEmpty, applicationKey.utf8.count <= VoiceAPILimits.maxIdentifierBytes,
              applicationKey.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: ":") }) else {
            throw VoiceAPIError(.invalidValue, field: "applicationKey",
                                "must be 1 to \(VoiceAPILimits.maxIdentifierBytes) visible ASCII characters without ':'")
        }
        let secret: [UInt8]
        do throws(Base64Error) {
            secret = try Base64.decode(applicationSecret)
        } catch {
            throw VoiceAPIError(.invalidValue, field: "applicationSecret", "is not Base64: \(error.reason)")
        }
        guard !secret.isEmpty else { throw VoiceAPIError(.invalidValue, field: "applicationSecret", "is empty") }
        self.applicationKey = applicationKey
        self.secret = secret
    }
}
