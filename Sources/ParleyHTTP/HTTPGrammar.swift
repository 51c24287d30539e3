/// Character classes of HTTP/1.1 (RFC 9110 §5.5, §5.6.2) and small list helpers.
enum HTTPGrammar {
    /// tchar (RFC 9110 §5.6.2).
    static func isTokenCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"), UInt8(ascii: "'"),
             UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "^"), UInt8(ascii: "_"),
             UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }

    static func isToken(_ text: some StringProtocol) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy(isTokenCharacter)
    }

    /// field-vchar, SP, HTAB and obs-text (RFC 9110 §5.5): no CR, LF, NUL or other controls.
    static func isFieldValueCharacter(_ byte: UInt8) -> Bool {
        byte == 0x09 || (byte >= 0x20 && byte != 0x7f)
    }

    static func lowercase(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
    }

    static func equalsIgnoringCase(_ a: some StringProtocol, _ b: some StringProtocol) -> Bool {
        a.utf8.count == b.utf8.count && a.utf8.elementsEqual(b.utf8) { lowercase($0) == lowercase($1) }
    }

    static func isWhitespace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 }

    static func trimmed(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        var slice = bytes
        while let first = slice.first, isWhitespace(first) { slice = slice.dropFirst() }
        while let last = slice.last, isWhitespace(last) { slice = slice.dropLast() }
        return slice
    }

    /// Elements of a comma-separated list (RFC 9110 §5.6.1), trimmed, empty ones dropped.
    static func listElements(_ value: String) -> [Substring] {
        value.split(separator: ",", omittingEmptySubsequences: true)
            .map { element in
                var slice = element[...]
                while let first = slice.first, first == " " || first == "\t" { slice = slice.dropFirst() }
                while let last = slice.last, last == " " || last == "\t" { slice = slice.dropLast() }
                return slice
            }
            .filter { !$0.isEmpty }
    }

    /// Index of the first CRLF at or after `start` (of the CR), or nil.
    static func findCRLF(in bytes: [UInt8], from start: Int) -> Int? {
        var index = start
        while index + 1 < bytes.count {
            if bytes[index] == 0x0d && bytes[index + 1] == 0x0a { return index }
            index += 1
        }
        return nil
    }
}
