/// A strict RFC 8259 JSON parser for hostile input.
///
/// Why not Foundation's `JSONDecoder`: on Linux it accepts invalid UTF-8 inside strings it
/// does not decode and keeps the first of two duplicate keys (a browser keeps the last),
/// and it behaves differently on Apple platforms. A frame must mean the same thing to the
/// server, the Swift SDK and a browser, so this parser accepts only one reading of it:
///
/// - the whole text must be well-formed UTF-8 (RFC 3629 §4: no overlong forms, no
///   encoded surrogates, nothing above U+10FFFF), and `\u` escapes must pair surrogates;
/// - a key may appear only once per object;
/// - arrays and objects nest at most `maxDepth` deep (checked before descending, so the
///   recursion is bounded whatever the input);
/// - no byte-order mark, no comments, no trailing commas, nothing after the value.
///
/// Every failure names the byte offset where the text stops being acceptable.
///
/// Numbers keep their literal text (see ``JSONValue/number(_:)``), so integers stay exact
/// whatever their size. Signaling frames, JWT headers and claims, and signed push
/// payloads all go through this one parser.
public struct StrictJSONParser {
    /// Why and where the text is not acceptable JSON.
    public struct SyntaxError: Error, Sendable, Hashable {
        /// The byte offset in the input where the text stops being acceptable.
        public let offset: Int
        /// What is wrong there, in words.
        public let reason: String
        /// What kind of problem it is, for callers that word some problems their own way.
        public let kind: Kind

        /// The kinds of problem a caller may want to tell apart; everything else is `.syntax`.
        public enum Kind: Sendable, Hashable {
            /// Any other departure from RFC 8259 or from well-formed UTF-8.
            case syntax
            /// A key appears twice in one object; the payload is the key.
            case duplicateKey(String)
            /// Arrays and objects nest deeper than the limit.
            case tooDeep
        }

        init(offset: Int, reason: String, kind: Kind = .syntax) {
            self.offset = offset
            self.reason = reason
            self.kind = kind
        }
    }

    private let bytes: [UInt8]
    private let maxDepth: Int
    private var index = 0
    private var depth = 0

    private init(bytes: [UInt8], maxDepth: Int) {
        self.bytes = bytes
        self.maxDepth = maxDepth
    }

    /// Parses exactly one JSON value filling all of `bytes` (surrounding whitespace allowed),
    /// with arrays and objects nested at most `maxDepth` deep.
    public static func parse(_ bytes: [UInt8], maxDepth: Int) throws(SyntaxError) -> JSONValue {
        var parser = StrictJSONParser(bytes: bytes, maxDepth: maxDepth)
        if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF {
            throw SyntaxError(offset: 0, reason: "byte-order mark is not allowed")
        }
        parser.skipWhitespace()
        let value = try parser.parseValue()
        parser.skipWhitespace()
        if parser.index < bytes.count {
            throw SyntaxError(offset: parser.index, reason: "unexpected \(describe(bytes[parser.index])) after the JSON value")
        }
        return value
    }

    // MARK: Values

    private mutating func parseValue() throws(SyntaxError) -> JSONValue {
        guard index < bytes.count else { throw endOfInput("a value") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return .object(try parseObject())
        case UInt8(ascii: "["): return .array(try parseArray())
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
        default: throw SyntaxError(offset: index, reason: "expected a value, found \(Self.describe(bytes[index]))")
        }
    }

    private mutating func enterContainer() throws(SyntaxError) {
        depth += 1
        if depth > maxDepth {
            throw SyntaxError(offset: index, reason: "arrays and objects nest deeper than \(maxDepth) levels", kind: .tooDeep)
        }
    }

    private mutating func parseObject() throws(SyntaxError) -> JSONObject {
        try enterContainer()
        index += 1  // "{"
        var object = JSONObject()
        // Small objects check duplicates by scanning; a set takes over for large hostile ones.
        var seen: Set<String>? = nil
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            depth -= 1
            return object
        }
        while true {
            skipWhitespace()
            guard index < bytes.count else { throw endOfInput("an object key") }
            guard bytes[index] == UInt8(ascii: "\"") else {
                throw SyntaxError(offset: index, reason: "expected an object key in double quotes, found \(Self.describe(bytes[index]))")
            }
            let keyOffset = index
            let key = try parseString()
            let duplicate: Bool
            if var set = seen {
                duplicate = !set.insert(key).inserted
                seen = set
            } else {
                duplicate = object[key] != nil
                if object.members.count >= 8 {
                    var set = Set(object.members.map(\.key))
                    set.insert(key)
                    seen = set
                }
            }
            if duplicate {
                throw SyntaxError(offset: keyOffset, reason: "duplicate key \(Self.displayQuoted(key))", kind: .duplicateKey(key))
            }
            skipWhitespace()
            try expect(UInt8(ascii: ":"), "':' after an object key")
            skipWhitespace()
            let value = try parseValue()
            object.append(key, value)
            skipWhitespace()
            guard index < bytes.count else { throw endOfInput("',' or '}'") }
            switch bytes[index] {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "}"):
                index += 1
                depth -= 1
                return object
            default: throw SyntaxError(offset: index, reason: "expected ',' or '}' in an object, found \(Self.describe(bytes[index]))")
            }
        }
    }

    private mutating func parseArray() throws(SyntaxError) -> [JSONValue] {
        try enterContainer()
        index += 1  // "["
        var elements: [JSONValue] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            depth -= 1
            return elements
        }
        while true {
            skipWhitespace()
            elements.append(try parseValue())
            skipWhitespace()
            guard index < bytes.count else { throw endOfInput("',' or ']'") }
            switch bytes[index] {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"):
                index += 1
                depth -= 1
                return elements
            default: throw SyntaxError(offset: index, reason: "expected ',' or ']' in an array, found \(Self.describe(bytes[index]))")
            }
        }
    }

    // MARK: Strings

    private mutating func parseString() throws(SyntaxError) -> String {
        let open = index
        index += 1  // opening quote
        // Unescaped runs are copied as they are; a buffer exists only once an escape shows up.
        var buffer: [UInt8]? = nil
        var runStart = index
        while true {
            guard index < bytes.count else {
                throw SyntaxError(offset: open, reason: "string is not terminated")
            }
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                let run = bytes[runStart..<index]
                index += 1
                if var text = buffer {
                    text.append(contentsOf: run)
                    return String(decoding: text, as: UTF8.self)
                }
                return String(decoding: run, as: UTF8.self)
            case UInt8(ascii: "\\"):
                var text = buffer ?? []
                text.append(contentsOf: bytes[runStart..<index])
                try parseEscape(into: &text)
                buffer = text
                runStart = index
            case 0x00..<0x20:
                throw SyntaxError(offset: index, reason: "control character \(Self.describe(byte)) in a string must be escaped")
            case 0x80...:
                index += try utf8SequenceLength(at: index)
            default:
                index += 1
            }
        }
    }

    /// Decodes one escape sequence starting at the backslash (RFC 8259 §7).
    private mutating func parseEscape(into text: inout [UInt8]) throws(SyntaxError) {
        let start = index
        index += 1
        guard index < bytes.count else { throw endOfInput("an escape sequence") }
        let letter = bytes[index]
        index += 1
        switch letter {
        case UInt8(ascii: "\""): text.append(0x22)
        case UInt8(ascii: "\\"): text.append(0x5C)
        case UInt8(ascii: "/"): text.append(0x2F)
        case UInt8(ascii: "b"): text.append(0x08)
        case UInt8(ascii: "f"): text.append(0x0C)
        case UInt8(ascii: "n"): text.append(0x0A)
        case UInt8(ascii: "r"): text.append(0x0D)
        case UInt8(ascii: "t"): text.append(0x09)
        case UInt8(ascii: "u"):
            let unit = try parseHex4()
            var scalarValue = UInt32(unit)
            if (0xD800...0xDBFF).contains(unit) {
                // A high surrogate must be followed at once by an escaped low surrogate.
                guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                    throw SyntaxError(offset: start, reason: "unpaired surrogate escape")
                }
                index += 2
                let low = try parseHex4()
                guard (0xDC00...0xDFFF).contains(low) else {
                    throw SyntaxError(offset: start, reason: "unpaired surrogate escape")
                }
                scalarValue = 0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00)
            } else if (0xDC00...0xDFFF).contains(unit) {
                throw SyntaxError(offset: start, reason: "unpaired surrogate escape")
            }
            guard let scalar = Unicode.Scalar(scalarValue) else {
                throw SyntaxError(offset: start, reason: "escape is not a Unicode scalar")
            }
            UTF8.encode(scalar) { text.append($0) }
        default:
            throw SyntaxError(offset: start, reason: "invalid escape sequence \\\(Self.printable(letter))")
        }
    }

    private mutating func parseHex4() throws(SyntaxError) -> UInt16 {
        var value: UInt16 = 0
        for _ in 0..<4 {
            guard index < bytes.count else { throw endOfInput("four hex digits") }
            let c = bytes[index]
            let digit: UInt16
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt16(c - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt16(c - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt16(c - UInt8(ascii: "A") + 10)
            default: throw SyntaxError(offset: index, reason: "expected a hex digit in a \\u escape, found \(Self.describe(c))")
            }
            value = value << 4 | digit
            index += 1
        }
        return value
    }

    /// Length of the well-formed UTF-8 sequence at `position`, per the table in RFC 3629 §4.
    private func utf8SequenceLength(at position: Int) throws(SyntaxError) -> Int {
        let lead = bytes[position]
        let length: Int
        var secondRange: ClosedRange<UInt8> = 0x80...0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; secondRange = 0xA0...0xBF
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: length = 3; secondRange = 0x80...0x9F
        case 0xF0: length = 4; secondRange = 0x90...0xBF
        case 0xF1...0xF3: length = 4
        case 0xF4: length = 4; secondRange = 0x80...0x8F
        default:
            throw SyntaxError(offset: position, reason: "invalid UTF-8 byte \(Self.hex(lead))")
        }
        guard position + length <= bytes.count else {
            throw SyntaxError(offset: position, reason: "truncated UTF-8 sequence")
        }
        guard secondRange.contains(bytes[position + 1]) else {
            throw SyntaxError(offset: position + 1, reason: "invalid UTF-8 byte \(Self.hex(bytes[position + 1]))")
        }
        for i in 2..<length where !(0x80...0xBF).contains(bytes[position + i]) {
            throw SyntaxError(offset: position + i, reason: "invalid UTF-8 byte \(Self.hex(bytes[position + i]))")
        }
        return length
    }

    // MARK: Numbers and literals

    /// Checks the RFC 8259 §6 number grammar and returns the literal text unchanged.
    private mutating func parseNumber() throws(SyntaxError) -> String {
        let start = index
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count, isDigit(bytes[index]) else {
            throw SyntaxError(offset: index, reason: "expected a digit in a number")
        }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
        } else {
            skipDigits()
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard index < bytes.count, isDigit(bytes[index]) else {
                throw SyntaxError(offset: index, reason: "expected a digit after the decimal point")
            }
            skipDigits()
        }
        if index < bytes.count, bytes[index] | 0x20 == UInt8(ascii: "e") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard index < bytes.count, isDigit(bytes[index]) else {
                throw SyntaxError(offset: index, reason: "expected a digit in the exponent")
            }
            skipDigits()
        }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    private func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    private mutating func skipDigits() {
        while index < bytes.count, isDigit(bytes[index]) { index += 1 }
    }

    private mutating func expectLiteral(_ literal: StaticString) throws(SyntaxError) {
        let start = index
        let expected = literal.withUTF8Buffer { Array($0) }
        for byte in expected {
            guard index < bytes.count, bytes[index] == byte else {
                throw SyntaxError(offset: start, reason: "invalid literal, expected \(literal)")
            }
            index += 1
        }
    }

    private mutating func expect(_ byte: UInt8, _ what: String) throws(SyntaxError) {
        guard index < bytes.count else { throw endOfInput(what) }
        guard bytes[index] == byte else {
            throw SyntaxError(offset: index, reason: "expected \(what), found \(Self.describe(bytes[index]))")
        }
        index += 1
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    private func endOfInput(_ what: String) -> SyntaxError {
        SyntaxError(offset: bytes.count, reason: "unexpected end of input, expected \(what)")
    }

    // MARK: Describing bytes in messages

    private static func hex(_ byte: UInt8) -> String { "0x" + Hex.encode([byte]) }

    private static func printable(_ byte: UInt8) -> String {
        (0x21...0x7E).contains(byte) ? String(UnicodeScalar(byte)) : hex(byte)
    }

    private static func describe(_ byte: UInt8) -> String {
        (0x21...0x7E).contains(byte) ? "'\(String(UnicodeScalar(byte)))'" : "byte \(hex(byte))"
    }

    /// Text from hostile input made safe for a one-line message: in double quotes, control
    /// and non-ASCII characters as `\u{...}`, cut after 64 characters.
    private static func displayQuoted(_ text: String) -> String {
        var out = "\""
        for (count, scalar) in text.unicodeScalars.enumerated() {
            if count == 64 {
                out += "\u{2026}"
                break
            }
            switch scalar.value {
            case 0x22: out += "\\\""
            case 0x5C: out += "\\\\"
            case 0x20...0x7E: out += String(scalar)
            default: out += "\\u{" + String(scalar.value, radix: 16) + "}"
            }
        }
        return out + "\""
    }
}
