// The Codable form lets values travel through JSONEncoder and generic decoders (fixtures,
// `parley inspect`); strict parsing of untrusted bytes is StrictJSONParser's job.

/// A coding key for any member name.
private struct MemberKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }

    init(stringValue: String) {
        self.stringValue = stringValue
    }

    init?(intValue: Int) {
        nil
    }
}

extension JSONValue: Codable {
    /// Decodes any JSON-shaped value; object members come out sorted by key, since a
    /// generic decoder gives no order.
    public init(from decoder: any Decoder) throws {
        if let keyed = try? decoder.container(keyedBy: MemberKey.self) {
            var object = JSONObject()
            // A generic decoder gives no member order; sort so the result is deterministic.
            for key in keyed.allKeys.sorted(by: { $0.stringValue < $1.stringValue }) {
                object.append(key.stringValue, try keyed.decode(JSONValue.self, forKey: key))
            }
            self = .object(object)
            return
        }
        if var unkeyed = try? decoder.unkeyedContainer() {
            var elements: [JSONValue] = []
            while !unkeyed.isAtEnd {
                elements.append(try unkeyed.decode(JSONValue.self))
            }
            self = .array(elements)
            return
        }
        let single = try decoder.singleValueContainer()
        if single.decodeNil() {
            self = .null
        } else if let flag = try? single.decode(Bool.self) {
            self = .bool(flag)
        } else if let integer = try? single.decode(Int64.self) {
            self = .number(String(integer))
        } else if let number = try? single.decode(Double.self) {
            self = number.isFinite ? .number("\(number)") : .null
        } else {
            self = .string(try single.decode(String.self))
        }
    }

    /// Encodes the value; a number is written as an integer when its literal is one, else
    /// as a double.
    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .null:
            var single = encoder.singleValueContainer()
            try single.encodeNil()
        case .bool(let flag):
            var single = encoder.singleValueContainer()
            try single.encode(flag)
        case .number(let literal):
            var single = encoder.singleValueContainer()
            if let integer = Self.integer(fromLiteral: literal) {
                try single.encode(integer)
            } else {
                try single.encode(Double(literal) ?? 0)
            }
        case .string(let text):
            var single = encoder.singleValueContainer()
            try single.encode(text)
        case .array(let elements):
            var unkeyed = encoder.unkeyedContainer()
            for element in elements { try unkeyed.encode(element) }
        case .object(let object):
            var keyed = encoder.container(keyedBy: MemberKey.self)
            for member in object.members {
                try keyed.encode(member.value, forKey: MemberKey(stringValue: member.key))
            }
        }
    }
}
