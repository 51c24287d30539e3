/// Small text helpers shared by the line and attribute parsers. Everything here is
/// total: no input makes these trap.
enum SDPText {
    /// Splits on single spaces. An empty field (two spaces, or a space at either end)
    /// yields an empty element, which callers reject, so what parses re-serializes to
    /// the same text.
    static func fields(_ text: Substring) -> [Substring] {
        split(text, on: UInt8(ascii: " "))
    }

    /// Splits on every `separator` byte (ASCII), keeping empty pieces. Works on the
    /// UTF-8 view: Character-level splitting costs grapheme breaking for nothing.
    static func split(_ text: String, on separator: UInt8) -> [Substring] {
        split(Substring(text), on: separator)
    }

    static func split(_ text: Substring, on separator: UInt8) -> [Substring] {
        var pieces: [Substring] = []
        let utf8 = text.utf8
        var start = utf8.startIndex
        var index = start
        while index != utf8.endIndex {
            if utf8[index] == separator {
                pieces.append(text[start..<index])
                start = utf8.index(after: index)
            }
            index = utf8.index(after: index)
        }
        pieces.append(text[start..<utf8.endIndex])
        return pieces
    }

    /// Everything after the ASCII byte at `index`, exactly (no Character rounding:
    /// `:` followed by a combining mark must not swallow the mark).
    static func after(_ index: String.Index, in text: Substring) -> Substring {
        Substring(text.utf8[text.utf8.index(after: index)...])
    }

    static func after(_ index: String.Index, in text: String) -> Substring {
        after(index, in: Substring(text))
    }

    /// Everything before `index`, exactly.
    static func before(_ index: String.Index, in text: Substring) -> Substring {
        Substring(text.utf8[..<index])
    }

    static func before(_ index: String.Index, in text: String) -> Substring {
        before(index, in: Substring(text))
    }

    /// `text` without leading and trailing spaces.
    static func trimmingSpaces(_ text: Substring) -> Substring {
        let utf8 = text.utf8
        guard let first = utf8.firstIndex(where: { $0 != UInt8(ascii: " ") }),
              let last = utf8.lastIndex(where: { $0 != UInt8(ascii: " ") }) else { return text[text.endIndex...] }
        return Substring(utf8[first...last])
    }

    /// The first position of an ASCII byte.
    static func firstIndex(of byte: UInt8, in text: some StringProtocol) -> String.Index? {
        text.utf8.firstIndex(of: byte)
    }

    /// Fields split on runs of spaces and tabs, for attribute values whose senders are
    /// known to be loose about spacing.
    static func looseFields(_ text: Substring) -> [Substring] {
        var pieces: [Substring] = []
        let utf8 = text.utf8
        var start: String.Index? = nil
        var index = utf8.startIndex
        while index != utf8.endIndex {
            let byte = utf8[index]
            if byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") {
                if let begin = start { pieces.append(text[begin..<index]); start = nil }
            } else if start == nil {
                start = index
            }
            index = utf8.index(after: index)
        }
        if let begin = start { pieces.append(text[begin..<utf8.endIndex]) }
        return pieces
    }

    /// A decimal number of type `T`: digits only (at least one), no sign, no overflow.
    static func decimal<T: FixedWidthInteger & UnsignedInteger>(_ text: Substring, as type: T.Type = T.self) -> T? {
        guard !text.isEmpty, text.utf8.count <= 40 else { return nil }
        var value: T = 0
        for byte in text.utf8 {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            let (shifted, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = shifted.addingReportingOverflow(T(byte - UInt8(ascii: "0")))
            if overflow1 || overflow2 { return nil }
            value = sum
        }
        return value
    }

    /// True when `text` is one or more digits (any length).
    static func isDigits(_ text: Substring) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
    }

    /// RFC 8866 §9 `token-char`: visible ASCII except `"(),/:;<=>?@[\]{}` and space.
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x21, 0x23...0x27, 0x2A, 0x2B, 0x2D, 0x2E, 0x30...0x39, 0x41...0x5A, 0x5E...0x7E: return true
        default: return false
        }
    }

    static func isHexDigit(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"), UInt8(ascii: "A")...UInt8(ascii: "F"): return true
        default: return false
        }
    }

    static func isToken(_ text: Substring) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy(isTokenByte)
    }

    /// Visible, non-space text (no control characters): for fields that are not
    /// strictly tokens but must not hold spaces, like addresses and protocol names.
    static func isNonSpaceText(_ text: Substring) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy { $0 > 0x20 && $0 != 0x7F }
    }

    /// Quotes a piece of input for an error message, shortened so one hostile line
    /// cannot make a huge error.
    static func quote(_ text: some StringProtocol, limit: Int = 40) -> String {
        var out = "\""
        var count = 0
        for character in text {
            if count == limit { out += "..."; break }
            out.append(character)
            count += 1
        }
        return out + "\""
    }
}
