/// Base64 with the standard alphabet and padding (RFC 4648 §4), as the opening handshake
/// uses it for Sec-WebSocket-Key and Sec-WebSocket-Accept (RFC 6455 §4.1, §4.2.2).
enum Base64 {
    private static let alphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// Value of each alphabet character, 0xff for anything else.
    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xff, count: 256)
        for (index, character) in alphabet.enumerated() { table[Int(character)] = UInt8(index) }
        return table
    }()

    static func encode(_ bytes: some Collection<UInt8>) -> String {
        let input = Array(bytes: bytes)
        var out: [UInt8] = []
        out.reserveCapacity((input.count + 2) / 3 * 4)
        var index = 0
        while index + 3 <= input.count {
            let group = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8 | UInt32(input[index + 2])
            out.append(alphabet[Int(group >> 18 & 0x3f)])
            out.append(alphabet[Int(group >> 12 & 0x3f)])
            out.append(alphabet[Int(group >> 6 & 0x3f)])
            out.append(alphabet[Int(group & 0x3f)])
            index += 3
        }
        switch input.count - index {
        case 1:
            let group = UInt32(input[index]) << 16
            out.append(alphabet[Int(group >> 18 & 0x3f)])
            out.append(alphabet[Int(group >> 12 & 0x3f)])
            out.append(UInt8(ascii: "="))
            out.append(UInt8(ascii: "="))
        case 2:
            let group = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8
            out.append(alphabet[Int(group >> 18 & 0x3f)])
            out.append(alphabet[Int(group >> 12 & 0x3f)])
            out.append(alphabet[Int(group >> 6 & 0x3f)])
            out.append(UInt8(ascii: "="))
        default:
            break
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Strict decoding: a multiple of four characters, padding only at the end, no
    /// whitespace, and zero bits in the unused part of the last group (RFC 4648 §3.5,
    /// so every value has exactly one encoding). Nil for anything else.
    static func decode(_ text: some StringProtocol) -> [UInt8]? {
        let input = Array(text.utf8)
        guard input.count % 4 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(input.count / 4 * 3)
        var index = 0
        while index < input.count {
            let isLast = index + 4 == input.count
            var group: UInt32 = 0
            var padding = 0
            for offset in 0..<4 {
                let character = input[index + offset]
                if character == UInt8(ascii: "=") {
                    // Padding only in the last two places of the last group.
                    guard isLast, offset >= 2 else { return nil }
                    padding += 1
                    group <<= 6
                    continue
                }
                guard padding == 0 else { return nil }
                let value = values[Int(character)]
                guard value != 0xff else { return nil }
                group = group << 6 | UInt32(value)
            }
            switch padding {
            case 0:
                out.append(UInt8(truncatingIfNeeded: group >> 16))
                out.append(UInt8(truncatingIfNeeded: group >> 8))
                out.append(UInt8(truncatingIfNeeded: group))
            case 1:
                guard group & 0xff == 0 else { return nil }
                out.append(UInt8(truncatingIfNeeded: group >> 16))
                out.append(UInt8(truncatingIfNeeded: group >> 8))
            default:
                guard group & 0xffff == 0 else { return nil }
                out.append(UInt8(truncatingIfNeeded: group >> 16))
            }
            index += 4
        }
        return out
    }
}
