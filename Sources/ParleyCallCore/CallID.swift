/// Call ids: random (version 4) UUIDs in canonical lower-case form, e.g.
/// `6f1c2a9e-3b7d-4c55-9a41-0e8f5d2b7c13` (docs/protocol.md, "Field formats").
///
/// Devices choose the id of the calls they place (`call.start.callId`); the server makes
/// one with `random(using:)` for calls it places itself.
public enum CallID {
    /// A new random version 4 UUID (RFC 9562 §5.4) from `generator`: the caller's, so that
    /// a core drawing ids stays reproducible under a seeded generator. Outside tests pass
    /// `SystemRandomNumberGenerator` (cryptographically secure): a call id is not a secret
    /// (calls are checked against the device's session), but it must not be guessable in
    /// advance either.
    public static func random<Generator: RandomNumberGenerator>(using generator: inout Generator) -> String {
        var bytes: [UInt8] = []
        for _ in 0..<2 {
            var word = generator.next()
            for _ in 0..<8 {
                bytes.append(UInt8(truncatingIfNeeded: word))
                word >>= 8
            }
        }
        bytes[6] = (bytes[6] & 0x0F) | 0x40  // version 4
        bytes[8] = (bytes[8] & 0x3F) | 0x80  // variant 10 (RFC 9562 §4.1)
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        for (index, byte) in bytes.enumerated() {
            if index == 4 || index == 6 || index == 8 || index == 10 { text.append(UInt8(ascii: "-")) }
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// Whether `text` is a UUID in canonical lower-case form (any version).
    public static func isValid(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count == 36 else { return false }
        for (index, byte) in bytes.enumerated() {
            if index == 8 || index == 13 || index == 18 || index == 23 {
                guard byte == UInt8(ascii: "-") else { return false }
            } else {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte) else { return false }
            }
        }
        return true
    }
}
