// The Codable form of a message is its wire form, so `parley inspect` and logs can print
// a message with JSONEncoder and get exactly what travels, and JSON from elsewhere (a
// test fixture, a log line) decodes with the same checks as a frame.

extension SignalingMessage: Codable {
    /// Decodes the wire form, with the same validation as `SignalingCodec.decode`; throws
    /// `SignalingError` for a value that decodes as JSON but is not a valid message.
    ///
    /// For frames from the network use `SignalingCodec.decode`: it also rejects duplicate
    /// keys, invalid UTF-8 and deep nesting before looking at any field, which a generic
    /// `Decoder` may not.
    public init(from decoder: any Decoder) throws {
        let value = try JSONValue(from: decoder)
        self = try SignalingCodec.message(from: value, sender: nil)
    }

    /// Encodes the wire form: `v`, `type`, then the message's members.
    public func encode(to encoder: any Encoder) throws {
        try json.encode(to: encoder)
    }
}

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
    init(from decoder: any Decoder) throws {
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

    func encode(to encoder: any Encoder) throws {
        switch self {
        case .null:
            var single = encoder.singleValueContainer()
            try single.encodeNil()
        case .bool(let flag):
            var single = encoder.singleValueContainer()
            try single.encode(flag)
        case .number(let literal):
            var single = encoder.singleValueContainer()
            if let integer = FieldReader.integer(fromLiteral: literal) {
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
