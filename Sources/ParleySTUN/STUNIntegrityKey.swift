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

/// An integrity attribute for `STUNMessage.encoded(addingIntegrity:fingerprint:)` to compute
/// and append.
public enum STUNIntegrity: Sendable, Hashable {
    /// MESSAGE-INTEGRITY: HMAC-SHA1, 20 bytes (RFC 8489 §14.5).
    case sha1(key: STUNIntegrityKey)
    /// MESSAGE-INTEGRITY-SHA256: HMAC-SHA256 truncated to `length` bytes, 16...32 in steps
    /// of 4 (RFC 8489 §14.6).
    case sha256(key: STUNIntegrityKey, length: Int = 32)
}

/// The outcome of checking MESSAGE-INTEGRITY, MESSAGE-INTEGRITY-SHA256 or FINGERPRINT.
/// Anything but `.valid` means the check did not pass.
public enum STUNVerdict: String, Sendable, Hashable, Encodable, CustomStringConvertible {
    /// Present and correct.
    case valid
    /// Present but wrong (or of the wrong size).
    case invalid
    /// Not in the message (or only where a receiver ignores it).
    case absent
    /// FINGERPRINT present but not the last attribute (RFC 8489 §14.7).
    case misplaced
    /// Present, but no key was given to check it with.
    case unchecked

    public var description: String { rawValue }
}

/// All three checks at once, for `parley inspect`:
/// `{"messageIntegrity": "valid", "messageIntegritySHA256": "absent", "fingerprint": "valid"}`.
public struct STUNVerification: Sendable, Hashable, Encodable {
    public var messageIntegrity: STUNVerdict
    public var messageIntegritySHA256: STUNVerdict
    public var fingerprint: STUNVerdict

    public init(messageIntegrity: STUNVerdict, messageIntegritySHA256: STUNVerdict, fingerprint: STUNVerdict) {
        self.messageIntegrity = messageIntegrity
        self.messageIntegritySHA256 = messageIntegritySHA256
        self.fingerprint = fingerprint
    }
}
