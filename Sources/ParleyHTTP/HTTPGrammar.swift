/// Character classes of HTTP/1.1 (RFC 9110 §5.5, §5.6.2) and small list helpers, shared
/// by the request parser and the WebSocket opening handshake. (Field lines themselves
/// are parsed in one place, `HTTPFieldLines`.)
public enum HTTPGrammar {
    /// tchar (RFC 9110 §5.6.2).
    public static func isTokenCharacter(_ byte: UInt8) -> Bool {
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

    public static func isToken(_ text: some StringProtocol) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy(isTokenCharacter)
    }

    /// field-vchar, SP, HTAB and obs-text (RFC 9110 §5.5): no CR, LF, NUL or other controls.
    public static func isFieldValueCharacter(_ byte: UInt8) -> Bool {
        byte == 0x09 || (byte >= 0x20 && byte != 0x7f)
    }

    public static func lowercase(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
    }

    /// ASCII case-insensitive equality, as header names and tokens compare.
    public static func equalsIgnoringCase(_ a: some StringProtocol, _ b: some StringProtocol) -> Bool {
        // Native strings expose their UTF-8 directly, which makes this a plain byte loop.
        let fast: Bool?? = a.utf8.withContiguousStorageIfAvailable { x in
            b.utf8.withContiguousStorageIfAvailable { y in
                guard x.count == y.count else { return false }
                for index in 0..<x.count where lowercase(x[index]) != lowercase(y[index]) { return false }
                return true
            }
        }
        if let fast, let fast { return fast }
        return a.utf8.count == b.utf8.count && a.utf8.elementsEqual(b.utf8) { lowercase($0) == lowercase($1) }
    }

    /// Whether every byte is a field-value character.
    public static func isFieldValue(_ text: some StringProtocol) -> Bool {
        text.utf8.allSatisfy(isFieldValueCharacter)
    }

    public static func isWhitespace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 }

    public static func trimmed(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        var slice = bytes
        while let first = slice.first, isWhitespace(first) { slice = slice.dropFirst() }
        while let last = slice.last, isWhitespace(last) { slice = slice.dropLast() }
        return slice
    }

    /// Elements of a comma-separated list (RFC 9110 §5.6.1), trimmed, empty ones dropped;
    /// commas inside quoted strings do not split.
    public static func listElements(_ value: String) -> [String] {
        var elements: [String] = []
        var current: [UInt8] = []
        var quoted = false
        var escaped = false
        for byte in value.utf8 {
            if quoted {
                if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") { quoted = false }
                current.append(byte)
            } else if byte == UInt8(ascii: ",") {
                let element = trimmed(current[...])
                if !element.isEmpty { elements.append(String(decoding: element, as: UTF8.self)) }
                current.removeAll(keepingCapacity: true)
            } else {
                if byte == UInt8(ascii: "\"") { quoted = true }
                current.append(byte)
            }
        }
        let element = trimmed(current[...])
        if !element.isEmpty { elements.append(String(decoding: element, as: UTF8.self)) }
        return elements
    }

    /// Index just past the first CRLF CRLF (the empty line ending an HTTP head) at or
    /// after `start`, or nil.
    public static func endOfHead(in bytes: [UInt8], from start: Int = 0) -> Int? {
        var index = max(start, 0)
        while index + 4 <= bytes.count {
            if bytes[index + 3] == 0x0a, bytes[index] == 0x0d, bytes[index + 1] == 0x0a, bytes[index + 2] == 0x0d {
                return index + 4
            }
            index += 1
        }
        return nil
    }

    /// Index of the first CRLF at or after `start` (of the CR), or nil.
    public static func findCRLF(in bytes: [UInt8], from start: Int) -> Int? {
        var index = start
        while index + 1 < bytes.count {
            if bytes[index] == 0x0d && bytes[index + 1] == 0x0a { return index }
            index += 1
        }
        return nil
    }
}
