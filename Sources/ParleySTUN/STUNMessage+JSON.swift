internal import ParleyWireCore

/// The JSON `parley inspect` prints: every header field and every attribute, with its wire
/// bytes and typed meaning. See docs/wire/stun.md for an example.
extension STUNMessage: Encodable {
    private enum CodingKeys: String, CodingKey {
        case messageType, `class`, method, methodName, length, transactionId, attributes, unknownComprehensionRequired
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode("0x" + hex16(messageType), forKey: .messageType)
        try container.encode(messageClass, forKey: .class)
        try container.encode(method, forKey: .method)
        try container.encode(method.name, forKey: .methodName)
        try container.encode(attributes.reduce(0) { $0 + $1.encodedLength }, forKey: .length)
        try container.encode(transactionID, forKey: .transactionId)
        let flags = ignoredFlags()
        let entries = attributes.indices.map {
            AttributeEntry(attribute: attributes[$0], transactionID: transactionID, ignored: flags[$0])
        }
        try container.encode(entries, forKey: .attributes)
        try container.encode(unknownComprehensionRequired, forKey: .unknownComprehensionRequired)
    }

    /// One attribute in its message: the wire fields, whether a receiver ignores it, and its
    /// typed value (`null` for types this module does not decode).
    private struct AttributeEntry: Encodable {
        let attribute: STUNAttribute
        let transactionID: STUNTransactionID
        let ignored: Bool

        private enum CodingKeys: String, CodingKey { case ignored, decoded, decodeError }

        func encode(to encoder: any Encoder) throws {
            try attribute.encode(to: encoder)
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(ignored, forKey: .ignored)
            guard STUNAttributeType.decodedTypes.contains(attribute.type) else {
                try container.encodeNil(forKey: .decoded)
                return
            }
            do {
                try container.encode(try attribute.decoded(transactionID: transactionID), forKey: .decoded)
            } catch let error as STUNError {
                try container.encodeNil(forKey: .decoded)
                try container.encode(error.description, forKey: .decodeError)
            }
        }
    }
}

/// An attribute alone: `{"type": "0x0006", "name": "USERNAME", "comprehensionRequired": true,
/// "length": 9, "value": "6576746a3a68367659", "padding": "202020"}`. Inside a message it
/// also gets `ignored` and `decoded`.
extension STUNAttribute: Encodable {
    private enum CodingKeys: String, CodingKey { case type, name, comprehensionRequired, length, value, padding }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(type, forKey: .type)
        try container.encode(type.name, forKey: .name)
        try container.encode(type.isComprehensionRequired, forKey: .comprehensionRequired)
        try container.encode(value.count, forKey: .length)
        try container.encode(Hex.encode(value), forKey: .value)
        try container.encode(Hex.encode(padding), forKey: .padding)
    }
}
