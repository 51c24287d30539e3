/// The random identifiers SIP needs, drawn from the caller's generator
/// (`SystemRandomNumberGenerator` in parleyd, a seeded one in tests).
///
/// Each carries 128 random bits, written as lowercase hex: far past RFC 3261 §19.3's 32
/// bits for tags, and enough that an off-path attacker cannot guess the Call-ID and tags
/// an in-dialog request (a forged BYE) needs.
public enum SIPIdentifier {
    /// A Via branch: the RFC 3261 magic cookie `z9hG4bK` and 32 hex digits (§8.1.1.7).
    public static func branch(using generator: inout some RandomNumberGenerator) -> String {
        "z9hG4bK" + hex(using: &generator)
    }

    /// A From or To tag (§19.3).
    public static func tag(using generator: inout some RandomNumberGenerator) -> String {
        hex(using: &generator)
    }

    /// A Call-ID (§8.1.1.4): 32 hex digits, `@host` appended when given.
    public static func callID(host: String? = nil, using generator: inout some RandomNumberGenerator) -> String {
        let id = hex(using: &generator)
        guard let host, !host.isEmpty else { return id }
        return id + "@" + host
    }

    private static func hex(using generator: inout some RandomNumberGenerator) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(32)
        for _ in 0..<2 {
            let word = generator.next()
            for shift in stride(from: 60, through: 0, by: -4) {
                out.append(digits[Int((word >> UInt64(shift)) & 0xf)])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
