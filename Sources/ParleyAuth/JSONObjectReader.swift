import ParleyWireCore

/// A JSON value as read from a JWT header or claims set.
enum JSONValue: Hashable, Sendable {
    case string(String)
    /// A number: its integer value when it has no fraction or exponent and fits Int64.
    case number(integer: Int64?)
    case bool(Bool)
    case null
    case array([JSONValue])
    case object([String: JSONValue])

    var typeName: String {
        switch self {
        case .string: return "a string"
        case .number: return "a number"
        case .bool: return "a boolean"
        case .null: return "null"
        case .array: return "an array"
        case .object: return "an object"
        }
    }
}

/// A strict RFC 8259 reader for the small JSON objects inside a JWT.
///
/// Written here rather than borrowed from ParleySignaling (a sibling layer) or Foundation
/// (whose `JSONSerialization` on Linux silently keeps one of two duplicate keys). A token
/// must mean the same to every verifier, so this reader refuses what parsers disagree on:
/// duplicate keys at any depth, invalid UTF-8 and unpaired surrogate escapes, a byte-order
/// mark, trailing bytes, and nesting deeper than ``maxDepth`` (checked before descending,
/// so the recursion is bounded). Errors are ``AuthError`` of kind `malformed` naming
/// `field` (`header` or `payload`) and the byte offset within the decoded JSON.
struct JSONObjectReader {
    static let maxDepth = 16

    private let bytes: [UInt8]
    private let field: String
    private var index = 0
    private var depth = 0

    private init(bytes: [UInt8], field: String) {
        self.bytes = bytes
        self.field = field
    }

    /// Reads `bytes` as exactly one JSON object and returns its members.
    static func readObject(_ bytes: [UInt8], field: String) throws(AuthError) -> [String: JSONValue] {
        var validator = UTF8Validator()
        if let bad = validator.validate(bytes) {
            throw AuthError(.malformed, field: field, offset: bad, "invalid UTF-8 in the decoded JSON")
        }
        guard validator.isAtBoundary else {
            throw AuthError(.malformed, field: field, offset: bytes.count, "the decoded JSON ends inside a UTF-8 sequence")
        }
        var reader = JSONObjectReader(bytes: bytes, field: field)
        if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF {
            throw reader.fail("byte-order mark is not allowed")
        }
        reader.skipWhitespace()
        guard reader.peek() == UInt8(ascii: "{") else { throw reader.fail("expected a JSON object") }
        let value = try reader.readValue()
        reader.skipWhitespace()
        guard reader.index == bytes.count else { throw reader.fail("unexpected bytes after the JSON object") }
        guard case .object(let members) = value else { throw reader.fail("expected a JSON object") }
        return members
    }

    private func fail(_ reason: String) -> AuthError {
        AuthError(.malformed, field: field, offset: index, "invalid JSON: " + reason)
    }

    private func peek() -> UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    private mutating func readValue() throws(AuthError) -> JSONValue {
        guard let byte = peek() else { throw fail("unexpected end, expected a value") }
        switch byte {
        case UInt8(ascii: "{"): return try readObjectValue()
        case UInt8(ascii: "["): return try readArray()
        case UInt8(ascii: "\""): return .string(try readString())
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try readNumber()
        default: throw fail("unexpected character, expected a value")
        }
    }

    private mutating func expectLiteral(_ literal: StaticString) throws(AuthError) {
        let count = literal.utf8CodeUnitCount
        guard bytes.count - index >= count else { throw fail("truncated literal") }
        let expected = UnsafeBufferPointer(start: literal.utf8Start, count: count)
        for offset in 0..<count where bytes[index + offset] != expected[offset] {
            index += offset
            throw fail("invalid literal")
        }
        index += count
    }

    private mutating func enter() throws(AuthError) {
        guard depth < Self.maxDepth else { throw fail("nesting deeper than \(Self.maxDepth) levels") }
        depth += 1
    }

    private mutating func readObjectValue() throws(AuthError) -> JSONValue {
        try enter()
        index += 1
        var members: [String: JSONValue] = [:]
        skipWhitespace()
        if peek() == UInt8(ascii: "}") {
            index += 1
            depth -= 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard peek() == UInt8(ascii: "\"") else { throw fail("expected a member name in quotes") }
            let keyOffset = index
            let key = try readString()
            skipWhitespace()
            guard peek() == UInt8(ascii: ":") else { throw fail("expected ':' after a member name") }
            index += 1
            skipWhitespace()
            let value = try readValue()
            guard members.updateValue(value, forKey: key) == nil else {
                index = keyOffset
                throw fail("duplicate member \"\(AuthError.printable(key))\"")
            }
            skipWhitespace()
            switch peek() {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "}"):
                index += 1
                depth -= 1
                return .object(members)
            default: throw fail("expected ',' or '}' in an object")
            }
        }
    }

    private mutating func readArray() throws(AuthError) -> JSONValue {
        try enter()
        index += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if peek() == UInt8(ascii: "]") {
            index += 1
            depth -= 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            elements.append(try readValue())
            skipWhitespace()
            switch peek() {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"):
                index += 1
                depth -= 1
                return .array(elements)
            default: throw fail("expected ',' or ']' in an array")
            }
        }
    }

    /// RFC 8259 §6: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
    private mutating func readNumber() throws(AuthError) -> JSONValue {
        let start = index
        if peek() == UInt8(ascii: "-") { index += 1 }
        guard let first = peek(), first >= UInt8(ascii: "0"), first <= UInt8(ascii: "9") else {
            throw fail("expected a digit")
        }
        index += 1
        if first != UInt8(ascii: "0") { skipDigits() }
        var integral = true
        if peek() == UInt8(ascii: ".") {
            integral = false
            index += 1
            guard skipDigits() > 0 else { throw fail("expected a digit after '.'") }
        }
        if peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E") {
            integral = false
            index += 1
            if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") { index += 1 }
            guard skipDigits() > 0 else { throw fail("expected a digit in the exponent") }
        }
        guard integral else { return .number(integer: nil) }
        var value: Int64 = 0
        let negative = bytes[start] == UInt8(ascii: "-")
        for position in (negative ? start + 1 : start)..<index {
            let digit = Int64(bytes[position] - UInt8(ascii: "0"))
            let (times10, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(negative ? -digit : digit)
            if overflow1 || overflow2 { return .number(integer: nil) }
            value = sum
        }
        return .number(integer: value)
    }

    @discardableResult
    private mutating func skipDigits() -> Int {
        var count = 0
        while let byte = peek(), byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
            index += 1
            count += 1
        }
        return count
    }

    /// Reads a string at the opening quote. The input is already valid UTF-8, so raw
    /// bytes are copied as they are; escapes are decoded and surrogates must pair.
    private mutating func readString() throws(AuthError) -> String {
        index += 1
        var out: [UInt8] = []
        while true {
            guard let byte = peek() else { throw fail("unterminated string") }
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                return String(decoding: out, as: UTF8.self)
            case UInt8(ascii: "\\"):
                index += 1
                guard let escape = peek() else { throw fail("unterminated escape") }
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(escape)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "u"):
                    index += 1
                    var scalar = try readHex4()
                    if scalar >= 0xD800, scalar <= 0xDBFF {
                        guard bytes.count - index >= 6, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                            throw fail("unpaired surrogate escape")
                        }
                        index += 2
                        let low = try readHex4()
                        guard low >= 0xDC00, low <= 0xDFFF else { throw fail("unpaired surrogate escape") }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    } else if scalar >= 0xDC00, scalar <= 0xDFFF {
                        throw fail("unpaired surrogate escape")
                    }
                    guard let unicode = Unicode.Scalar(scalar) else { throw fail("invalid escape") }
                    out.append(contentsOf: Array(String(Character(unicode)).utf8))
                    continue
                default:
                    throw fail("invalid escape")
                }
                index += 1
            case 0x00..<0x20:
                throw fail("control character in a string")
            default:
                out.append(byte)
                index += 1
            }
        }
    }

    private mutating func readHex4() throws(AuthError) -> UInt32 {
        guard bytes.count - index >= 4 else { throw fail("truncated \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw fail("invalid hex digit in \\u escape")
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }
}
