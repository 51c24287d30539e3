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
