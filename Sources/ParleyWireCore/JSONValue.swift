/// A parsed JSON value, as ``StrictJSONParser`` returns it.
///
/// Numbers keep their literal text: integer fields are range-checked exactly from it, and
/// a number in a field a reader ignores costs nothing and loses nothing.
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    /// A number, as its literal text (RFC 8259 §6 grammar, checked by the parser).
    case number(String)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)

    /// A short name of the value's JSON type, for error messages ("expected a string, found number").
    public var kindName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .number: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }

    /// The member `key` when this is an object that has it, else nil.
    public subscript(key: String) -> JSONValue? {
        if case .object(let object) = self { return object[key] }
        return nil
    }

    /// The text when this is a string, else nil.
    public var stringValue: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    /// The flag when this is `true` or `false`, else nil.
    public var boolValue: Bool? {
        if case .bool(let flag) = self { return flag }
        return nil
    }

    /// The exact value when this is an integer literal (no fraction, no exponent) that fits
    /// in `Int64`, else nil.
    public var integerValue: Int64? {
        if case .number(let literal) = self { return Self.integer(fromLiteral: literal) }
        return nil
    }

    /// The value of an integer literal (optional `-`, digits only) that fits in `Int64`, or nil.
    public static func integer(fromLiteral literal: String) -> Int64? {
        var digits = Substring(literal).utf8[...]
        let negative = digits.first == UInt8(ascii: "-")
        if negative { digits = digits.dropFirst() }
        guard !digits.isEmpty else { return nil }
        // Accumulated with the literal's sign, so Int64.min is reachable.
        var value: Int64 = 0
        for byte in digits {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            let digit = Int64(byte - UInt8(ascii: "0"))
            let (shifted, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (next, overflow2) = shifted.addingReportingOverflow(negative ? -digit : digit)
            if overflow1 || overflow2 { return nil }
            value = next
        }
        return value
    }
}
