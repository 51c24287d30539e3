/// One `name: value` line as libcurl hands it to the header callback, CR LF included.
///
/// Read as bytes, not as a String: in a Swift String "\r\n" is one Character, so trimming
/// "\r" and "\n" one by one leaves the pair on every value (`retry-after` was "1\r\n" and
/// never parsed as a number).
struct HTTPHeaderLine {
    /// The field name in lowercase (HTTP/2 sends it so; HTTP/1.1 may not).
    var name: String
    /// The value without the line ending or surrounding spaces and tabs.
    var value: String

    init?(_ line: [UInt8]) {
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > 0 else { return nil }
        let name = line[..<colon]
        // A status line ("HTTP/2 429") has no colon before its first space; a field name
        // has no spaces at all (RFC 9110 §5.1: a token).
        guard !name.contains(where: { $0 <= 0x20 || $0 >= 0x7F }) else { return nil }
        var value = line[(colon + 1)...]
        let blank: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D || $0 == 0x0A }
        while let first = value.first, blank(first) { value = value.dropFirst() }
        while let last = value.last, blank(last) { value = value.dropLast() }
        self.name = String(decoding: name, as: UTF8.self).lowercased()
        self.value = String(decoding: value, as: UTF8.self)
    }
}
