/// A JSON value as the push code reads it: strict (RFC 8259, no duplicate keys, strings
/// must be valid UTF-8, depth-limited), with integers kept exact.
/// Foundation's parser is not used because on Linux it keeps the first of duplicate keys
/// and reports `1` and `true` alike as `Bool`.
enum PushJSON: Sendable, Hashable {
    case object([String: PushJSON])
    case array([PushJSON])
    case string(String)
    case integer(Int64)
    /// A number with a fraction or exponent, or an integer too large for `Int64`.
    case otherNumber
    case bool(Bool)
    case null

    struct ParseError: Error, Sendable, Hashable, CustomStringConvertible {
        let offset: Int
        let reason: String
        var description: String { "invalid JSON at byte \(offset): \(reason)" }
    }

    static let maxDepth = 16

    /// Parses one JSON value taking all of `bytes` (surrounding whitespace allowed).
    static func parse(_ bytes: [UInt8]) throws(ParseError) -> PushJSON {
        var reader = Reader(bytes: bytes)
        let value = try reader.value(depth: 0)
        reader.skipWhitespace()
        guard reader.index == bytes.count else { throw ParseError(offset: reader.index, reason: "data after the value") }
        return value
    }

    subscript(key: String) -> PushJSON? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    var stringValue: String? { if case .string(let s) = self { s } else { nil } }
    var integerValue: Int64? { if case .integer(let i) = self { i } else { nil } }
    var boolValue: Bool? { if case .bool(let b) = self { b } else { nil } }

    private struct Reader {
        let bytes: [UInt8]
        var index = 0

        func fail(_ reason: String) -> ParseError { ParseError(offset: index, reason: reason) }

        mutating func skipWhitespace() {
            while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
        }

        mutating func value(depth: Int) throws(ParseError) -> PushJSON {
            guard depth < PushJSON.maxDepth else { throw fail("nested deeper than \(PushJSON.maxDepth)") }
            skipWhitespace()
            guard index < bytes.count else { throw fail("unexpected end") }
            switch bytes[index] {
            case UInt8(ascii: "{"): return try object(depth: depth)
            case UInt8(ascii: "["): return try array(depth: depth)
            case UInt8(ascii: "\""): return .string(try string())
            case UInt8(ascii: "t"): try literal("true"); return .bool(true)
            case UInt8(ascii: "f"): try literal("false"); return .bool(false)
            case UInt8(ascii: "n"): try literal("null"); return .null
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
            default: throw fail("unexpected character")
            }
        }

        mutating func literal(_ word: String) throws(ParseError) {
            let expected = Array(word.utf8)
            guard index + expected.count <= bytes.count, Array(bytes[index..<(index + expected.count)]) == expected else {
                throw fail("expected \(word)")
            }
            index += expected.count
        }

        mutating func object(depth: Int) throws(ParseError) -> PushJSON {
            index += 1
            var members: [String: PushJSON] = [:]
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "}") { index += 1; return .object(members) }
            while true {
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw fail("expected a member name") }
                let keyOffset = index
                let key = try string()
                guard members[key] == nil else { throw ParseError(offset: keyOffset, reason: "duplicate member \"\(key)\"") }
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw fail("expected ':'") }
                index += 1
                members[key] = try value(depth: depth + 1)
                skipWhitespace()
                guard index < bytes.count else { throw fail("unexpected end in an object") }
                if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                if bytes[index] == UInt8(ascii: "}") { index += 1; return .object(members) }
                throw fail("expected ',' or '}'")
            }
        }

        mutating func array(depth: Int) throws(ParseError) -> PushJSON {
            index += 1
            var items: [PushJSON] = []
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "]") { index += 1; return .array(items) }
            while true {
                items.append(try value(depth: depth + 1))
                skipWhitespace()
                guard index < bytes.count else { throw fail("unexpected end in an array") }
                if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                if bytes[index] == UInt8(ascii: "]") { index += 1; return .array(items) }
                throw fail("expected ',' or ']'")
            }
        }

        mutating func number() throws(ParseError) -> PushJSON {
            let start = index
            if bytes[index] == UInt8(ascii: "-") { index += 1 }
            let digitsStart = index
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
            guard index > digitsStart else { throw fail("expected a digit") }
            guard bytes[digitsStart] != UInt8(ascii: "0") || index - digitsStart == 1 else {
                throw ParseError(offset: digitsStart, reason: "leading zero")
            }
            var isInteger = true
            if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
                isInteger = false
                index += 1
                let fractionStart = index
                while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
                guard index > fractionStart else { throw fail("expected a digit after '.'") }
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
                isInteger = false
                index += 1
                if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
                let exponentStart = index
                while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
                guard index > exponentStart else { throw fail("expected a digit in the exponent") }
            }
            guard isInteger, let value = Int64(String(decoding: bytes[start..<index], as: UTF8.self)) else { return .otherNumber }
            return .integer(value)
        }

        mutating func string() throws(ParseError) -> String {
            index += 1
            var out: [UInt8] = []
            while index < bytes.count {
                let byte = bytes[index]
                switch byte {
                case UInt8(ascii: "\""):
                    index += 1
                    // Swift repairs invalid UTF-8 silently; refuse it instead.
                    guard let text = String(validating: out, as: UTF8.self) else { throw fail("invalid UTF-8 in a string") }
                    return text
                case UInt8(ascii: "\\"):
                    index += 1
                    guard index < bytes.count else { throw fail("unexpected end in an escape") }
                    let escape = bytes[index]
                    index += 1
                    switch escape {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(escape)
                    case UInt8(ascii: "b"): out.append(0x08)
                    case UInt8(ascii: "f"): out.append(0x0C)
                    case UInt8(ascii: "n"): out.append(0x0A)
                    case UInt8(ascii: "r"): out.append(0x0D)
                    case UInt8(ascii: "t"): out.append(0x09)
                    case UInt8(ascii: "u"):
                        var scalar = try hex4()
                        if (0xD800...0xDBFF).contains(scalar) {
                            guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                                throw fail("a high surrogate without its low surrogate")
                            }
                            index += 2
                            let low = try hex4()
                            guard (0xDC00...0xDFFF).contains(low) else { throw fail("invalid low surrogate") }
                            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                        } else if (0xDC00...0xDFFF).contains(scalar) {
                            throw fail("a lone low surrogate")
                        }
                        guard let unicode = Unicode.Scalar(scalar) else { throw fail("invalid code point") }
                        out.append(contentsOf: Array(String(Character(unicode)).utf8))
                    default: throw fail("invalid escape")
                    }
                case 0x00..<0x20:
                    throw fail("control character in a string")
                default:
                    out.append(byte)
                    index += 1
                }
            }
            throw fail("unterminated string")
        }

        mutating func hex4() throws(ParseError) -> UInt32 {
            guard index + 4 <= bytes.count, bytes[index..<(index + 4)].allSatisfy({ Character(UnicodeScalar($0)).isHexDigit }),
                  let value = UInt32(String(decoding: bytes[index..<(index + 4)], as: UTF8.self), radix: 16) else {
                throw fail("expected four hex digits")
            }
            index += 4
            return value
        }
    }
}
