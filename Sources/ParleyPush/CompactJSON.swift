import ParleyWireCore

/// Builds compact JSON text member by member, in the order written, with RFC 8259 string
/// escaping. Enough for the fixed shapes push sends (payload claims, JWT parts, request
/// bodies); it does not parse.
struct CompactJSON {
    private(set) var text = "{"
    private var empty = true

    mutating func string(_ key: String, _ value: String) { member(key) ; text += Self.quote(value) }
    mutating func integer(_ key: String, _ value: Int64) { member(key); text += String(value) }
    mutating func bool(_ key: String, _ value: Bool) { member(key); text += value ? "true" : "false" }
    /// Inserts already-serialized JSON (an object built with another `CompactJSON`).
    mutating func raw(_ key: String, _ json: String) { member(key); text += json }

    /// The finished object.
    var object: String { text + "}" }

    private mutating func member(_ key: String) {
        if !empty { text += "," }
        empty = false
        text += Self.quote(key) + ":"
    }

    static func quote(_ value: String) -> String { JSONString.quoted(value) }

    /// A JSON object of string members with keys sorted, so equal maps serialize equally.
    static func stringMap(_ map: [String: String]) -> String {
        var json = CompactJSON()
        for key in map.keys.sorted() { json.string(key, map[key]!) }
        return json.object
    }
}
