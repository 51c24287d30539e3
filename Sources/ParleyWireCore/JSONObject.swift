/// A JSON object with its members in document order. Keys are unique: ``StrictJSONParser``
/// rejects duplicates, and builders must not add one twice.
public struct JSONObject: Sendable, Hashable {
    /// One member: its key and value.
    public struct Member: Sendable, Hashable {
        public var key: String
        public var value: JSONValue

        public init(key: String, value: JSONValue) {
            self.key = key
            self.value = value
        }
    }

    /// The members in the order they were parsed or appended.
    public private(set) var members: [Member] = []

    /// An empty object.
    public init() {}

    /// The member's value, or nil when the key is absent. Objects on the wire hold a
    /// handful of members, so a linear scan beats hashing here.
    public subscript(key: String) -> JSONValue? {
        for member in members where member.key == key { return member.value }
        return nil
    }

    /// Appends a member; the caller makes sure `key` is not there yet.
    public mutating func append(_ key: String, _ value: JSONValue) {
        members.append(Member(key: key, value: value))
    }

    /// Appends a string member.
    public mutating func append(_ key: String, _ value: String) {
        append(key, .string(value))
    }

    /// Appends an integer member.
    public mutating func append(_ key: String, _ value: Int64) {
        append(key, .number(String(value)))
    }

    /// Appends an integer member.
    public mutating func append(_ key: String, _ value: Int) {
        append(key, .number(String(value)))
    }

    /// Appends a boolean member.
    public mutating func append(_ key: String, _ value: Bool) {
        append(key, .bool(value))
    }

    /// Appends only when `value` is present: optional fields are omitted, never sent as null.
    public mutating func append(_ key: String, ifPresent value: String?) {
        if let value { append(key, .string(value)) }
    }

    /// Appends only when `value` is present: optional fields are omitted, never sent as null.
    public mutating func append(_ key: String, ifPresent value: Int64?) {
        if let value { append(key, value) }
    }
}
