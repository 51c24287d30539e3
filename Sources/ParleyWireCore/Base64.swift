/// Strict Base64 (RFC 4648 §4) and base64url (RFC 4648 §5) without Foundation.
///
/// Strict means one encoding per byte string: characters outside the alphabet (spaces and
/// line breaks included) are refused, standard Base64 needs its `=` padding and base64url
/// (as JWS uses it, RFC 7515 §2) must have none, and the unused low bits of the last
/// character must be zero (RFC 4648 §3.5), so `QQ==` decodes but `QR==` does not.
/// Decoding errors are ``Base64Error`` carrying the byte offset. The one Base64 of the
/// package: WebSocket keys, application secrets, HTTP Basic, JWT parts, SDES keys.
public enum Base64 {
    private static let standardAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    private static let urlAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// Value of each byte in the standard alphabet, 0xFF for bytes outside it.
    private static let standardValues: [UInt8] = table(standardAlphabet)
    private static let urlValues: [UInt8] = table(urlAlphabet)

    private static func table(_ alphabet: [UInt8]) -> [UInt8] {
        var values = [UInt8](repeating: 0xFF, count: 256)
        for (index, character) in alphabet.enumerated() { values[Int(character)] = UInt8(index) }
        return values
    }

    /// Standard Base64 with `=` padding: the form of application secrets and of HTTP Basic
    /// credentials.
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        String(decoding: encodeBytes(Array(bytes), alphabet: standardAlphabet, pad: true), as: UTF8.self)
    }

    /// base64url without padding: the form of each part of a JWT.
    public static func encodeURL(_ bytes: some Sequence<UInt8>) -> String {
        String(decoding: encodeBytes(Array(bytes), alphabet: urlAlphabet, pad: false), as: UTF8.self)
    }

    /// Decodes standard Base64 with padding, strictly (see the type's comment).
    public static func decode(_ text: some StringProtocol) throws(Base64Error) -> [UInt8] {
        try decode(Array(text.utf8)[...], url: false)
    }

    /// Decodes base64url without padding, strictly (see the type's comment).
    public static func decodeURL(_ text: some StringProtocol) throws(Base64Error) -> [UInt8] {
        try decode(Array(text.utf8)[...], url: true)
    }

    private static func encodeBytes(_ bytes: [UInt8], alphabet: [UInt8], pad: Bool) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index + 3 <= bytes.count {
            let group = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
            out.append(alphabet[Int(group >> 18 & 0x3F)])
            out.append(alphabet[Int(group >> 12 & 0x3F)])
            out.append(alphabet[Int(group >> 6 & 0x3F)])
            out.append(alphabet[Int(group & 0x3F)])
            index += 3
        }
        switch bytes.count - index {
        case 1:
            let group = UInt32(bytes[index]) << 16
            out.append(alphabet[Int(group >> 18 & 0x3F)])
            out.append(alphabet[Int(group >> 12 & 0x3F)])
            if pad { out.append(UInt8(ascii: "=")); out.append(UInt8(ascii: "=")) }
        case 2:
            let group = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8
            out.append(alphabet[Int(group >> 18 & 0x3F)])
            out.append(alphabet[Int(group >> 12 & 0x3F)])
            out.append(alphabet[Int(group >> 6 & 0x3F)])
            if pad { out.append(UInt8(ascii: "=")) }
        default:
            break
        }
        return out
    }

    /// Decodes `text` (standard with padding, or base64url without); offsets in errors are
    /// indices of `text`, so a slice of a larger buffer reports positions in that buffer.
    public static func decode(_ text: ArraySlice<UInt8>, url: Bool) throws(Base64Error) -> [UInt8] {
        let values = url ? urlValues : standardValues
        var end = text.endIndex
        if !url {
            guard text.count % 4 == 0 else {
                throw Base64Error(offset: text.endIndex,
                                "Base64 length \(text.count) is not a multiple of 4 (padding with '=' is required)")
            }
            // Up to two '=' at the very end, nowhere else.
            var padding = 0
            while padding < 2, end > text.startIndex, text[end - 1] == UInt8(ascii: "=") {
                end -= 1
                padding += 1
            }
        } else if text.count % 4 == 1 {
            throw Base64Error(offset: text.endIndex,
                            "base64url length \(text.count) leaves a single character over, which holds no whole byte")
        }
        let digits = end - text.startIndex
        var out: [UInt8] = []
        out.reserveCapacity(digits / 4 * 3 + 2)
        var accumulator: UInt32 = 0
        var bits = 0
        for index in text.startIndex..<end {
            let character = text[index]
            let value = values[Int(character)]
            guard value != 0xFF else {
                let what = character == UInt8(ascii: "=")
                    ? (url ? "padding '=' is not allowed in base64url" : "'=' is only allowed as padding at the end")
                    : "character \(describe(character)) is not in the \(url ? "base64url" : "Base64") alphabet"
                throw Base64Error(offset: index, what)
            }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
                accumulator &= (1 << UInt32(bits)) - 1
            }
        }
        // RFC 4648 §3.5: the leftover bits of the last character must be zero.
        if bits > 0, accumulator != 0 {
            throw Base64Error(offset: end - 1, "the last character has non-zero unused bits (not the canonical encoding)")
        }
        return out
    }

    private static func describe(_ byte: UInt8) -> String {
        if byte >= 0x21, byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
        return "0x" + String(byte, radix: 16)
    }
}

/// Why Base64 text was refused: where, and what was wrong.
public struct Base64Error: Error, Sendable, Hashable, CustomStringConvertible {
    /// Byte offset of the problem in the decoded text.
    public let offset: Int
    /// One line for people.
    public let reason: String

    public init(offset: Int, _ reason: String) {
        self.offset = offset
        self.reason = reason
    }

    public var description: String { "invalid Base64 at offset \(offset): \(reason)" }
}
