import ParleyWireCore

/// Typed, bounded reads of the members of one JSON object of a callback or an SVAML answer.
///
/// Every failure is a ``VoiceAPIError`` naming the field's path from the top of the
/// document (`action.menus[0].options[2].dtmf`). A member whose value is `null` counts as
/// absent; members not asked for are ignored, so a newer peer may add fields.
struct FieldReader {
    let object: JSONObject
    /// The path of this object from the top of the document, empty for the top itself.
    let path: String

    init(_ object: JSONObject, path: String = "") {
        self.object = object
        self.path = path
    }

    func fieldPath(_ key: String) -> String {
        path.isEmpty ? key : "\(path).\(key)"
    }

    func failure(_ key: String, _ reason: String, kind: VoiceAPIError.Kind = .invalidField) -> VoiceAPIError {
        VoiceAPIError(kind, field: fieldPath(key), reason)
    }

    func value(_ key: String) -> JSONValue? {
        guard let value = object[key], value != .null else { return nil }
        return value
    }

    func has(_ key: String) -> Bool { value(key) != nil }

    // MARK: Strings

    func string(_ key: String, maxBytes: Int = VoiceAPILimits.maxTextBytes, allowEmpty: Bool = false) throws(VoiceAPIError) -> String {
        guard let text = try optionalString(key, maxBytes: maxBytes, allowEmpty: allowEmpty) else {
            throw failure(key, "is required")
        }
        return text
    }

    func optionalString(_ key: String, maxBytes: Int = VoiceAPILimits.maxTextBytes, allowEmpty: Bool = true) throws(VoiceAPIError) -> String? {
        guard let value = value(key) else { return nil }
        return try Self.checkedString(value, at: fieldPath(key), maxBytes: maxBytes, allowEmpty: allowEmpty)
    }

    static func checkedString(_ value: JSONValue, at path: String, maxBytes: Int, allowEmpty: Bool) throws(VoiceAPIError) -> String {
        guard case .string(let text) = value else {
            throw VoiceAPIError(.invalidField, field: path, "expected a string, found \(value.kindName)")
        }
        guard text.utf8.count <= maxBytes else {
            throw VoiceAPIError(.invalidField, field: path, "is \(text.utf8.count) bytes long, more than the \(maxBytes) allowed")
        }
        guard allowEmpty || !text.isEmpty else {
            throw VoiceAPIError(.invalidField, field: path, "must not be empty")
        }
        return text
    }

    // MARK: Numbers and booleans

    func optionalInteger(_ key: String, in range: ClosedRange<Int64>) throws(VoiceAPIError) -> Int64? {
        guard let value = value(key) else { return nil }
        guard case .number(let literal) = value else {
            throw failure(key, "expected an integer, found \(value.kindName)")
        }
        guard let integer = JSONValue.integer(fromLiteral: literal) else {
            throw failure(key, "expected an integer, found \(Self.shown(literal))")
        }
        guard range.contains(integer) else {
            throw failure(key, "\(integer) is out of range \(range.lowerBound)...\(range.upperBound)")
        }
        return integer
    }

    func integer(_ key: String, in range: ClosedRange<Int64>) throws(VoiceAPIError) -> Int64 {
        guard let integer = try optionalInteger(key, in: range) else { throw failure(key, "is required") }
        return integer
    }

    /// A JSON number of any form (an amount of money), as its literal text.
    func optionalNumberLiteral(_ key: String) throws(VoiceAPIError) -> String? {
        guard let value = value(key) else { return nil }
        guard case .number(let literal) = value else {
            throw failure(key, "expected a number, found \(value.kindName)")
        }
        guard literal.utf8.count <= 64 else { throw failure(key, "the number \(Self.shown(literal)) is too long") }
        return literal
    }

    func optionalBool(_ key: String) throws(VoiceAPIError) -> Bool? {
        guard let value = value(key) else { return nil }
        guard case .bool(let flag) = value else {
            throw failure(key, "expected true or false, found \(value.kindName)")
        }
        return flag
    }

    // MARK: Containers

    func optionalObject(_ key: String) throws(VoiceAPIError) -> FieldReader? {
        guard let value = value(key) else { return nil }
        guard case .object(let child) = value else {
            throw failure(key, "expected an object, found \(value.kindName)")
        }
        return FieldReader(child, path: fieldPath(key))
    }

    func object(_ key: String) throws(VoiceAPIError) -> FieldReader {
        guard let child = try optionalObject(key) else { throw failure(key, "is required") }
        return child
    }

    /// The elements of an array member, at most `maxCount`, with their paths.
    func optionalArray(_ key: String, maxCount: Int) throws(VoiceAPIError) -> [(value: JSONValue, path: String)]? {
        guard let value = value(key) else { return nil }
        guard case .array(let elements) = value else {
            throw failure(key, "expected an array, found \(value.kindName)")
        }
        guard elements.count <= maxCount else {
            throw failure(key, "has \(elements.count) elements, more than the \(maxCount) allowed")
        }
        return elements.enumerated().map { (value: $0.element, path: "\(fieldPath(key))[\($0.offset)]") }
    }

    /// The elements of an array member that must hold objects.
    func optionalObjects(_ key: String, maxCount: Int) throws(VoiceAPIError) -> [FieldReader]? {
        guard let elements = try optionalArray(key, maxCount: maxCount) else { return nil }
        var readers: [FieldReader] = []
        for element in elements {
            guard case .object(let child) = element.value else {
                throw VoiceAPIError(.invalidField, field: element.path, "expected an object, found \(element.value.kindName)")
            }
            readers.append(FieldReader(child, path: element.path))
        }
        return readers
    }

    /// A string naming one case of `E`, matched without regard to ASCII case: the Sinch
    /// documents spell the same value more than one way (`userName`, `username`).
    func optionalEnumeration<E: CaseIterable & RawRepresentable>(_ key: String, as _: E.Type) throws(VoiceAPIError) -> E? where E.RawValue == String {
        guard let text = try optionalString(key, maxBytes: 64) else { return nil }
        if let match = E.allCases.first(where: { ASCIICase.equal($0.rawValue, text) }) { return match }
        let allowed = E.allCases.map(\.rawValue).joined(separator: ", ")
        throw failure(key, "\(Self.quoted(text)) is not one of: \(allowed)")
    }

    func enumeration<E: CaseIterable & RawRepresentable>(_ key: String, as type: E.Type) throws(VoiceAPIError) -> E where E.RawValue == String {
        guard let value = try optionalEnumeration(key, as: type) else { throw failure(key, "is required") }
        return value
    }

    // MARK: Shown text

    /// `text` in quotes for an error message, cut to 40 characters.
    static func quoted(_ text: String) -> String {
        "\"" + shown(text) + "\""
    }

    static func shown(_ text: String) -> String {
        text.count > 40 ? String(text.prefix(40)) + "\u{2026}" : text
    }
}
