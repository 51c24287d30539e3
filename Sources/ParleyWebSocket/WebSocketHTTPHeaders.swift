import ParleyHTTP
/// The header fields of an HTTP/1.1 head, in order, with case-insensitive lookup
/// (RFC 9110 §5.1).
public struct WebSocketHTTPHeaders: Sendable, Hashable, Encodable, Sequence {
    /// One `name: value` line.
    public struct Field: Sendable, Hashable, Encodable {
        /// As written; compare with `WebSocketHTTPHeaders` lookups, which ignore case.
        public let name: String
        /// Without surrounding whitespace.
        public let value: String
    }

    /// The fields in the order they appear.
    public private(set) var fields: [Field] = []

    /// No fields.
    public init() {}

    /// Headers from name/value pairs; throws `invalidArgument` if a name is not a token or
    /// a value holds CR, LF or other control characters (header injection).
    public init(_ pairs: [(name: String, value: String)]) throws(WebSocketError) {
        for pair in pairs { try add(name: pair.name, value: pair.value) }
    }

    /// Appends a field; throws `invalidArgument` if it could not be written safely.
    public mutating func add(name: String, value: String) throws(WebSocketError) {
        guard HTTPGrammar.isToken(name) else {
            throw WebSocketError(.invalidArgument, "header name \"\(name)\" is not an HTTP token")
        }
        guard HTTPGrammar.isFieldValue(value) else {
            throw WebSocketError(.invalidArgument, "value of header \(name) contains control characters")
        }
        fields.append(Field(name: name, value: value))
    }

    /// The fields ParleyHTTP's grammar read, in order (already checked, so not again).
    init(_ headers: HTTPHeaders) {
        for field in headers.fields { fields.append(Field(name: field.name, value: field.value)) }
    }

    /// Appends a field already known to be well formed.
    mutating func addUnchecked(name: String, value: String) {
        fields.append(Field(name: name, value: value))
    }

    /// Every value of the fields named `name` (any case), in order.
    public subscript(name: String) -> [String] {
        fields.lazy.filter { HTTPGrammar.equalsIgnoringCase($0.name, name) }.map(\.value)
    }

    /// The first value of the field named `name` (any case).
    public func first(_ name: String) -> String? {
        fields.first { HTTPGrammar.equalsIgnoringCase($0.name, name) }?.value
    }

    /// The comma-separated elements of all fields named `name`, combined (RFC 9110 §5.3).
    public func listElements(_ name: String) -> [String] {
        self[name].flatMap(HTTPGrammar.listElements)
    }

    /// Whether a comma-separated list header contains `token`, ignoring case.
    public func containsToken(_ token: String, in name: String) -> Bool {
        let wanted = Array(token.utf8)
        for field in fields where HTTPGrammar.equalsIgnoringCase(field.name, name) {
            // Scan the elements in place; this runs on every upgrade request.
            let value = Array(field.value.utf8)
            var start = 0
            while start <= value.count {
                var end = start
                while end < value.count, value[end] != UInt8(ascii: ",") { end += 1 }
                let element = HTTPGrammar.trimmed(value[start..<end])
                if element.count == wanted.count,
                   zip(element, wanted).allSatisfy({ HTTPGrammar.lowercase($0) == HTTPGrammar.lowercase($1) }) {
                    return true
                }
                start = end + 1
            }
        }
        return false
    }

    /// Iterates the fields in order.
    public func makeIterator() -> IndexingIterator<[Field]> { fields.makeIterator() }

    /// An array of `{"name", "value"}` objects in order.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(fields)
    }

    /// `Name: value\r\n` for each field.
    func serialize(into out: inout [UInt8]) {
        for field in fields {
            out.append(contentsOf: field.name.utf8)
            out.append(contentsOf: ": ".utf8)
            out.append(contentsOf: field.value.utf8)
            out.append(contentsOf: "\r\n".utf8)
        }
    }
}
