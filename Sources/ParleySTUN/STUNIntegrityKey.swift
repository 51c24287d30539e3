/// The key for MESSAGE-INTEGRITY and MESSAGE-INTEGRITY-SHA256 HMACs (RFC 8489 §9).
///
/// Only short-term credentials are built here (ICE uses them: the key is the peer's ICE
/// password). Long-term credentials (key = MD5(username ":" realm ":" password), RFC 8489
/// §9.2.2) are not supported yet; a key computed elsewhere can still be given as `bytes`.
public struct STUNIntegrityKey: Sendable, Hashable, CustomStringConvertible {
    /// The HMAC key bytes.
    public let bytes: [UInt8]

    public init(bytes: [UInt8]) { self.bytes = bytes }

    /// RFC 8489 §9.1.1: the short-term key is the password's UTF-8 bytes. The OpaqueString
    /// (RFC 8265) preparation is not applied; ICE passwords are ASCII (RFC 8445 §5.3), where
    /// it changes nothing.
    public static func shortTerm(password: String) -> STUNIntegrityKey {
        STUNIntegrityKey(bytes: Array(password.utf8))
    }

    /// Says only how long the key is, so keys do not end up in logs.
    public var description: String { "STUNIntegrityKey(\(bytes.count) bytes)" }
}
