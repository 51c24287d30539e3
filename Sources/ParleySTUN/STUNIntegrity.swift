/// An integrity attribute for `STUNMessage.encoded(addingIntegrity:fingerprint:)` to compute
/// and append.
public enum STUNIntegrity: Sendable, Hashable {
    /// MESSAGE-INTEGRITY: HMAC-SHA1, 20 bytes (RFC 8489 §14.5).
    case sha1(key: STUNIntegrityKey)
    /// MESSAGE-INTEGRITY-SHA256: HMAC-SHA256 truncated to `length` bytes, 16...32 in steps
    /// of 4 (RFC 8489 §14.6).
    case sha256(key: STUNIntegrityKey, length: Int = 32)
}
