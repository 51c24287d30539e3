/// A nonce of ``SIPDigestServer``: stateless and self-verifying, so the server keeps
/// nothing per challenge it sends and a flood of requests costs it no memory.
///
/// The text is 64 lowercase hex digits: the issue time (Unix seconds, 8 bytes big-endian),
/// a random salt (8 bytes) and the first 16 bytes of HMAC-SHA256(secret, label, realm,
/// time, salt). Only the holder of the secret can make one, the time inside cannot be
/// moved, and the salt makes every challenge's nonce distinct, so two clients challenged
/// in the same second never share a nonce (and with it a replay window).
struct SIPDigestNonce: Hashable, Sendable {
    /// When the server issued it, Unix seconds.
    let issuedAt: Int64
    let salt: UInt64

    static let textLength = 64
    private static let macLength = 16
    private static let label = Array("parley-sip-digest-nonce-1".utf8)

    /// The nonce text for this issue time and salt.
    func text(realm: String, secret: [UInt8]) throws(SIPDigestError) -> String {
        var bytes = fields
        bytes += try mac(realm: realm, secret: secret)
        return SIPDigestHash.lowercaseHex(bytes)
    }

    /// The nonce `text` stands for, nil if it is not one this secret made for this realm
    /// (wrong length, not hex, or a MAC that does not match, compared in constant time).
    static func verified(_ text: String, realm: String, secret: [UInt8]) throws(SIPDigestError) -> SIPDigestNonce? {
        guard text.utf8.count == textLength, let bytes = SIPDigestHash.bytes(fromHex: text) else { return nil }
        var issued: UInt64 = 0
        var salt: UInt64 = 0
        for index in 0..<8 {
            issued = issued << 8 | UInt64(bytes[index])
            salt = salt << 8 | UInt64(bytes[8 + index])
        }
        let nonce = SIPDigestNonce(issuedAt: Int64(bitPattern: issued), salt: salt)
        let expected = try nonce.mac(realm: realm, secret: secret)
        guard SIPDigestHash.constantTimeEqual(Array(bytes[16...]), expected) else { return nil }
        return nonce
    }

    /// True once the nonce is `lifetime` seconds old, or when it claims to be issued more
    /// than `lifetime` seconds in the future (the wall clock was stepped back).
    func isExpired(now: Int64, lifetime: Int64) -> Bool {
        let (age, overflow) = now.subtractingReportingOverflow(issuedAt)
        return overflow || age >= lifetime || age < -lifetime
    }

    private var fields: [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(16)
        let issued = UInt64(bitPattern: issuedAt)
        for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: issued >> UInt64(shift))) }
        for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: salt >> UInt64(shift))) }
        return bytes
    }

    /// The realm is inside the MAC so a nonce of one realm is no good in another, even
    /// where two realms share a secret; the zero bytes keep the parts from running together.
    private func mac(realm: String, secret: [UInt8]) throws(SIPDigestError) -> [UInt8] {
        var message = Self.label
        message.append(0)
        message += Array(realm.utf8)
        message.append(0)
        message += fields
        return Array(try SIPDigestHash.hmacSHA256(key: secret, message).prefix(Self.macLength))
    }
}
