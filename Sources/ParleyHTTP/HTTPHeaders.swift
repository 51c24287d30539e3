/// The header (or trailer) fields of an HTTP/1.1 message in order, with case-insensitive
/// lookup (RFC 9110 §5.1).
public struct HTTPHeaders: Sendable, Hashable, Encodable, Sequence, ExpressibleByDictionaryLiteral {
    /// One `name: value` line.
    public struct Field: Sendable, Hashable, Encodable {
        /// As written.
        public let name: String
        /// Without surrounding whitespace.
        public let value: String
    }

    /// The fields in order.
    public private(set) var fields: [Field] = []

    /// No fields.
    public init() {}

    /// Fields from a literal; names or values that could not be written safely are dropped
    /// (a literal is written by a programmer, so `add(name:value:)` is for untrusted input).
    public init(dictionaryLiteral elements: (String, String)...) {
        for (name, value) in elements { try? add(name: name, value: value) }
    }

    /// Appends a field; throws `invalidArgument` if the name is not a token or the value
    /// holds CR, LF or other controls (header injection).
    public mutating func add(name: String, value: String) throws(HTTPError) {
        guard HTTPGrammar.isToken(name) else {
            throw HTTPError(.invalidArgument, offset: nil, "header name \"\(name)\" is not an HTTP token")
        }
        guard value.utf8.allSatisfy(HTTPGrammar.isFieldValueCharacter) else {
            throw HTTPError(.invalidArgument, offset: nil, "value of header \(name) contains control characters")
        }
        fields.append(Field(name: name, value: value))
    }

    /// Replaces every field named `name` with one holding `value`.
    public mutating func set(name: String, value: String) throws(HTTPError) {
        remove(name: name)
        try add(name: name, value: value)
    }

    /// Removes every field named `name`.
    public mutating func remove(name: String) {
        fields.removeAll { HTTPGrammar.equalsIgnoringCase($0.name, name) }
    }

    mutating func addUnchecked(name: String, value: String) {
        fields.append(Field(name: name, value: value))
    }

    /// Every value of the fields named `name` (any case), in order.
    public subscript(name: String) -> [String] {
        fields.filter { HTTPGrammar.equalsIgnoringCase($0.name, name) }.map(\.value)
    }

    /// The first value of the field named `name` (any case).
    public func first(_ name: String) -> String? {
        fields.first { HTTPGrammar.equalsIgnoringCase($0.name, name) }?.value
    }

    /// Whether a field named `name` exists.
    public func contains(_ name: String) -> Bool { first(name) != nil }

    /// Whether the comma-separated list in the fields named `name` holds `token` (any case).
    public func containsToken(_ token: String, in name: String) -> Bool {
        self[name].contains { value in
            HTTPGrammar.listElements(value).contains { HTTPGrammar.equalsIgnoringCase($0, token) }
        }
    }

    /// Number of fields.
    public var count: Int { fields.count }

    public func makeIterator() -> IndexingIterator<[Field]> { fields.makeIterator() }

    /// An array of `{"name", "value"}` objects in order.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(fields)
    }

    func serialize(into out: inout [UInt8]) {
        for field in fields {
            out.append(contentsOf: field.name.utf8)
            out.append(contentsOf: ": ".utf8)
            out.append(contentsOf: field.value.utf8)
            out.append(contentsOf: "\r\n".utf8)
        }
    }
}
