/// A parsed JSON value, as the signaling codec sees it.
///
/// Numbers keep their literal text: integer fields are range-checked exactly from it, and
/// a number in a field this version ignores costs nothing and loses nothing.
enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case number(String)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)

    /// A short name of the value's JSON type, for error messages ("expected a string, found number").
    var kindName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .number: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }
}

/// A JSON object with its members in document order. Keys are unique: the parser
/// rejects duplicates, and builders in this module never add one twice.
struct JSONObject: Sendable, Hashable {
    struct Member: Sendable, Hashable {
        var key: String
        var value: JSONValue
    }

    private(set) var members: [Member] = []

    init() {}

    /// The member's value, or nil when the key is absent. Objects on the wire hold a
    /// handful of members, so a linear scan beats hashing here.
    subscript(key: String) -> JSONValue? {
        for member in members where member.key == key { return member.value }
        return nil
    }

    mutating func append(_ key: String, _ value: JSONValue) {
        members.append(Member(key: key, value: value))
    }

    mutating func append(_ key: String, _ value: String) {
        append(key, .string(value))
    }

    mutating func append(_ key: String, _ value: Int64) {
        append(key, .number(String(value)))
    }

    mutating func append(_ key: String, _ value: Int) {
        append(key, .number(String(value)))
    }

    mutating func append(_ key: String, _ value: Bool) {
        append(key, .bool(value))
    }

    /// Appends only when `value` is present: optional fields are omitted, never sent as null.
    mutating func append(_ key: String, ifPresent value: String?) {
        if let value { append(key, .string(value)) }
    }

    mutating func append(_ key: String, ifPresent value: Int64?) {
        if let value { append(key, value) }
    }
}

/// Headers as a JSON object, names in byte order so that encoding is deterministic.
func headersJSON(_ headers: [String: String]) -> JSONValue {
    var object = JSONObject()
    for name in headers.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
        object.append(name, headers[name] ?? "")
    }
    return .object(object)
}
