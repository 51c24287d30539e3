/// Compact JSON text for a `JSONValue`, byte for byte deterministic: members in the order
/// they were added, no whitespace, only the escapes RFC 8259 §7 requires (quote, backslash,
/// control characters), everything else as UTF-8. The one JSON writer of the package:
/// signaling frames, push payloads and provider requests, JWT headers and claims, HTTP
/// error bodies (strings through `JSONString`).
public enum JSONWriter {
    /// The text of `value`.
    public static func serialize(_ value: JSONValue) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        write(value, into: &out)
        return out
    }

    /// The text of `object`, as a `String` (JWT parts, request bodies).
    public static func string(_ object: JSONObject) -> String {
        String(decoding: serialize(.object(object)), as: UTF8.self)
    }

    /// Appends the text of `value` to `out`.
    public static func write(_ value: JSONValue, into out: inout [UInt8]) {
        switch value {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let flag): out.append(contentsOf: (flag ? "true" : "false").utf8)
        case .number(let literal): out.append(contentsOf: literal.utf8)
        case .string(let text): JSONString.append(text, to: &out)
        case .array(let elements):
            out.append(UInt8(ascii: "["))
            for (i, element) in elements.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                write(element, into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let object):
            out.append(UInt8(ascii: "{"))
            for (i, member) in object.members.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                JSONString.append(member.key, to: &out)
                out.append(UInt8(ascii: ":"))
                write(member.value, into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }
}
