/// Hexadecimal text to and from bytes, for fixtures, logs and `parley inspect --hex`.
public enum Hex {
    /// Hex digits of `bytes`: lower case without separators by default; `uppercase` and
    /// `separator: ":"` give the RFC 8122 fingerprint form (`AB:CD:...`).
    public static func encode(_ bytes: some Sequence<UInt8>, uppercase: Bool = false, separator: UInt8? = nil) -> String {
        let digits = Array((uppercase ? "0123456789ABCDEF" : "0123456789abcdef").utf8)
        var out: [UInt8] = []
        for byte in bytes {
            if let separator, !out.isEmpty { out.append(separator) }
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Thrown for text that is not an even number of hex digits.
    public struct InvalidHex: Error, Sendable, Hashable, CustomStringConvertible {
        /// Character offset of the problem in the input.
        public let offset: Int
        public let reason: String
        public var description: String { "invalid hex at character \(offset): \(reason)" }
    }

    /// Decodes hex text. Whitespace, colons and a leading `0x` are ignored, so text
    /// copied from Wireshark, RFCs or `xxd -p` decodes as is.
    public static func decode(_ text: String) throws(InvalidHex) -> [UInt8] {
        var out: [UInt8] = []
        var high: UInt8? = nil
        var index = 0
        let scalars = Array(text.utf8)
        var position = 0
        if scalars.count >= 2, scalars[0] == UInt8(ascii: "0"), scalars[1] | 0x20 == UInt8(ascii: "x") { position = 2 }
        while position < scalars.count {
            let c = scalars[position]
            defer { position += 1; index += 1 }
            let value: UInt8
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): value = c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): value = c - UInt8(ascii: "A") + 10
            case UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"), UInt8(ascii: ":"):
                continue
            default:
                throw InvalidHex(offset: position, reason: "unexpected character")
            }
            if let h = high { out.append(h << 4 | value); high = nil } else { high = value }
        }
        if high != nil { throw InvalidHex(offset: position, reason: "odd number of hex digits") }
        return out
    }
}
