/// The header fields of a SIP message (or of a body part) in order, each with its name as
/// written and its value unfolded (RFC 3261 §7.3.1: a line break followed by whitespace
/// becomes one space) and without surrounding whitespace.
///
/// Lookup is case-insensitive and knows the compact forms, so `headers["Via"]` also finds
/// `v:` lines. `subscript` gives whole lines; `values(_:)` splits the lines of list headers
/// (Via, Contact, Route, Allow, Supported...) on their commas, and leaves the lines of
/// every other header whole (WWW-Authenticate, Authorization, Date, unknown headers).
public struct SIPHeaders: Sendable, Hashable, Sequence, ExpressibleByDictionaryLiteral {
    /// One header field.
    public struct Field: Sendable, Hashable {
        /// The name as written (`v`, `VIA`, `Via`...).
        public let name: String
        /// The value, unfolded and trimmed.
        public let value: String

        /// The lowercase full name: `"via"` for `v`.
        public var canonicalName: String { SIPHeaderName.canonical(name) }

        init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// The fields in order.
    public private(set) var fields: [Field] = []

    /// No fields.
    public init() {}

    /// Fields from a literal; a name or value that could not be written safely is dropped
    /// (a literal is written by a programmer; `add(name:value:)` is for other input).
    public init(dictionaryLiteral elements: (String, String)...) {
        for (name, value) in elements { try? add(name: name, value: value) }
    }

    init(fields: [Field]) {
        self.fields = fields
    }

    /// Appends a field. Throws `invalidArgument` when the name is not a token or the value
    /// holds CR, LF or another control character (header injection). Surrounding
    /// whitespace of the value is dropped, as a parser would drop it.
    public mutating func add(name: String, value: String) throws(SIPError) {
        fields.append(try Self.checkedField(name: name, value: value))
    }

    /// Inserts a field at `index` (0 puts it first, as a proxy adds its Via).
    public mutating func insert(name: String, value: String, at index: Int) throws(SIPError) {
        let field = try Self.checkedField(name: name, value: value)
        fields.insert(field, at: Swift.max(0, Swift.min(index, fields.count)))
    }

    /// Replaces every field named `name` (any form) with one field holding `value`, at the
    /// place of the first one, or appended when there was none.
    public mutating func set(name: String, value: String) throws(SIPError) {
        let field = try Self.checkedField(name: name, value: value)
        let key = SIPHeaderName.canonical(name)
        if let first = fields.firstIndex(where: { $0.canonicalName == key }) {
            fields[first] = field
            var index = fields.count - 1
            while index > first {
                if fields[index].canonicalName == key { fields.remove(at: index) }
                index -= 1
            }
        } else {
            fields.append(field)
        }
    }

    /// Removes every field named `name` (any case, compact or full form).
    public mutating func remove(name: String) {
        let key = SIPHeaderName.canonical(name)
        fields.removeAll { $0.canonicalName == key }
    }

    /// Removes the first value of the list header `name` (a proxy removing its own Via or
    /// Route entry): the whole field when it holds one value, else that value only.
    public mutating func removeFirstValue(name: String) {
        let key = SIPHeaderName.canonical(name)
        guard let index = fields.firstIndex(where: { $0.canonicalName == key }) else { return }
        let elements = Self.splitList(fields[index].value)
        if elements.count <= 1 {
            fields.remove(at: index)
        } else {
            let rest = elements.dropFirst().map { String($0) }.joined(separator: ", ")
            fields[index] = Field(name: fields[index].name, value: rest)
        }
    }

    mutating func appendUnchecked(name: String, value: String) {
        fields.append(Field(name: name, value: value))
    }

    /// Every line value of the fields named `name` (any case, compact or full), in order.
    public subscript(name: String) -> [String] {
        let key = SIPHeaderName.canonical(name)
        return fields.filter { $0.canonicalName == key }.map(\.value)
    }

    /// The first line value of the fields named `name`.
    public func first(_ name: String) -> String? {
        let key = SIPHeaderName.canonical(name)
        return fields.first { $0.canonicalName == key }?.value
    }

    /// The values of the fields named `name`: for list headers each comma-separated
    /// element (commas inside quotes and `<...>` do not split; empty elements are left
    /// out), for other headers each line whole.
    public func values(_ name: String) -> [String] {
        let key = SIPHeaderName.canonical(name)
        let lines = fields.filter { $0.canonicalName == key }.map(\.value)
        guard SIPHeaderName.commaSeparated.contains(key) else { return lines }
        return lines.flatMap { Self.splitList($0) }.filter { !$0.isEmpty }.map { String($0) }
    }

    /// Whether a field named `name` is present.
    public func contains(_ name: String) -> Bool { first(name) != nil }

    /// How many fields (lines) are named `name`.
    public func count(of name: String) -> Int {
        let key = SIPHeaderName.canonical(name)
        return fields.reduce(0) { $0 + ($1.canonicalName == key ? 1 : 0) }
    }

    /// Number of fields.
    public var count: Int { fields.count }

    public func makeIterator() -> IndexingIterator<[Field]> { fields.makeIterator() }

    /// The lines of the fields named `canonical`, each split on the commas of its list
    /// (empty elements kept, so a typed parser can refuse them), trimmed.
    func listElements(canonical key: String) -> [Substring] {
        fields.filter { $0.canonicalName == key }.flatMap { Self.splitList($0.value) }
    }

    func fields(canonical key: String) -> [Field] {
        fields.filter { $0.canonicalName == key }
    }

    static func checkedField(name: String, value: String) throws(SIPError) -> Field {
        guard SIPGrammar.isToken(name) else {
            throw SIPError(.invalidArgument, "header name \(SIPGrammar.quote(name)) is not a SIP token")
        }
        let trimmed = trimmedWhitespace(Substring(value))
        guard trimmed.utf8.allSatisfy({ $0 == SIPGrammar.tab || ($0 >= 0x20 && $0 != 0x7f) }) else {
            throw SIPError(.invalidArgument, "value of header \(name) holds a control character")
        }
        return Field(name: name, value: String(trimmed))
    }

    static func trimmedWhitespace(_ text: Substring) -> Substring {
        let utf8 = text.utf8
        guard let first = utf8.firstIndex(where: { !SIPGrammar.isWhitespace($0) }),
              let last = utf8.lastIndex(where: { !SIPGrammar.isWhitespace($0) }) else { return text[text.endIndex...] }
        return Substring(utf8[first...last])
    }

    /// Splits a list header's value on commas outside quoted strings and `<...>`, trimming
    /// each element; empty elements are kept.
    static func splitList(_ value: String) -> [Substring] {
        var elements: [Substring] = []
        let utf8 = value.utf8
        var start = utf8.startIndex
        var index = start
        var quoted = false
        var escaped = false
        var angle = false
        while index != utf8.endIndex {
            let byte = utf8[index]
            if quoted {
                if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") { quoted = false }
            } else if angle {
                if byte == UInt8(ascii: ">") { angle = false }
            } else if byte == UInt8(ascii: "\"") {
                quoted = true
            } else if byte == UInt8(ascii: "<") {
                angle = true
            } else if byte == UInt8(ascii: ",") {
                elements.append(trimmedWhitespace(Substring(utf8[start..<index])))
                start = utf8.index(after: index)
            }
            index = utf8.index(after: index)
        }
        elements.append(trimmedWhitespace(Substring(utf8[start..<utf8.endIndex])))
        return elements
    }
}
