import ParleyWireCore
/// Typed, validated reads of the members of one JSON object of a frame.
///
/// Every failure becomes a `SignalingError` naming the field's path from the top of the
/// frame (`to.address`, `media.iceServers[0].urls[1]`), the frame's type and request id.
/// A member whose value is `null` counts as absent. Members not asked for are ignored:
/// that is what lets newer peers add fields.
struct FieldReader {
    let object: JSONObject
    /// Path of this object from the frame's top level, empty for the top level itself.
    let path: String
    let messageType: SignalingMessageType?
    let requestID: String?

    func fieldPath(_ key: String) -> String {
        path.isEmpty ? key : "\(path).\(key)"
    }

    func failure(at fieldPath: String, _ reason: String, code: SignalingErrorCode = .badRequest) -> SignalingError {
        SignalingError(code: code, field: fieldPath, messageType: messageType, requestID: requestID, reason: reason)
    }

    func failure(_ key: String, _ reason: String, code: SignalingErrorCode = .badRequest) -> SignalingError {
        failure(at: fieldPath(key), reason, code: code)
    }

    private func child(_ object: JSONObject, path: String) -> FieldReader {
        FieldReader(object: object, path: path, messageType: messageType, requestID: requestID)
    }

    // MARK: Presence

    func value(_ key: String) -> JSONValue? {
        guard let value = object[key], value != .null else { return nil }
        return value
    }

    func required(_ key: String) throws(SignalingError) -> JSONValue {
        guard let value = value(key) else { throw failure(key, "is required") }
        return value
    }

    // MARK: Strings

    func string(_ key: String, _ rule: TextRule) throws(SignalingError) -> String {
        try checkedString(try required(key), at: fieldPath(key), rule)
    }

    func optionalString(_ key: String, _ rule: TextRule) throws(SignalingError) -> String? {
        guard let value = value(key) else { return nil }
        return try checkedString(value, at: fieldPath(key), rule)
    }

    func checkedString(_ value: JSONValue, at path: String, _ rule: TextRule) throws(SignalingError) -> String {
        guard case .string(let text) = value else {
            throw failure(at: path, "expected a string, found \(value.kindName)")
        }
        do throws(TextRule.Failure) {
            try rule.check(text)
        } catch {
            throw failure(at: path, error.reason, code: error.code)
        }
        return text
    }

    /// A string naming one case of `E`, e.g. an end cause.
    func enumeration<E: RawRepresentable & CaseIterable>(_ key: String, as _: E.Type) throws(SignalingError) -> E where E.RawValue == String {
        try checkedEnumeration(try required(key), at: fieldPath(key))
    }

    func optionalEnumeration<E: RawRepresentable & CaseIterable>(_ key: String, as _: E.Type) throws(SignalingError) -> E? where E.RawValue == String {
        guard let value = value(key) else { return nil }
        return try checkedEnumeration(value, at: fieldPath(key)) as E
    }

    private func checkedEnumeration<E: RawRepresentable & CaseIterable>(_ value: JSONValue, at path: String) throws(SignalingError) -> E where E.RawValue == String {
        guard case .string(let text) = value else {
            throw failure(at: path, "expected a string, found \(value.kindName)")
        }
        guard let result = E(rawValue: text) else {
            let allowed = E.allCases.map(\.rawValue).joined(separator: ", ")
            throw failure(at: path, "\(quoted(text)) is not one of: \(allowed)")
        }
        return result
    }

    // MARK: Numbers and booleans

    func integer(_ key: String, in range: ClosedRange<Int64>) throws(SignalingError) -> Int64 {
        try checkedInteger(try required(key), at: fieldPath(key), in: range)
    }

    func optionalInteger(_ key: String, in range: ClosedRange<Int64>) throws(SignalingError) -> Int64? {
        guard let value = value(key) else { return nil }
        return try checkedInteger(value, at: fieldPath(key), in: range)
    }

    func checkedInteger(_ value: JSONValue, at path: String, in range: ClosedRange<Int64>) throws(SignalingError) -> Int64 {
        guard case .number(let literal) = value else {
            throw failure(at: path, "expected an integer, found \(value.kindName)")
        }
        guard let integer = Self.integer(fromLiteral: literal), range.contains(integer) else {
            let shown = literal.utf8.count > 32 ? String(literal.prefix(32)) + "\u{2026}" : literal
            if literal.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }) {
                throw failure(at: path, "expected an integer, found \(shown)")
            }
            throw failure(at: path, "\(shown) is out of range \(range.lowerBound)...\(range.upperBound)")
        }
        return integer
    }

    /// The value of an integer literal (no fraction, no exponent) that fits in Int64, or nil.
    static func integer(fromLiteral literal: String) -> Int64? {
        JSONValue.integer(fromLiteral: literal)
    }

    /// A boolean member that must be present.
    func requiredBool(_ key: String) throws(SignalingError) -> Bool {
        let value = try required(key)
        guard case .bool(let flag) = value else {
            throw failure(key, "expected true or false, found \(value.kindName)")
        }
        return flag
    }

    func bool(_ key: String, default defaultValue: Bool) throws(SignalingError) -> Bool {
        guard let value = value(key) else { return defaultValue }
        guard case .bool(let flag) = value else {
            throw failure(key, "expected true or false, found \(value.kindName)")
        }
        return flag
    }

    // MARK: Objects and arrays

    func object(_ key: String) throws(SignalingError) -> FieldReader {
        let value = try required(key)
        guard case .object(let object) = value else {
            throw failure(key, "expected an object, found \(value.kindName)")
        }
        return child(object, path: fieldPath(key))
    }

    func optionalObject(_ key: String) throws(SignalingError) -> FieldReader? {
        guard value(key) != nil else { return nil }
        return try object(key)
    }

    /// The elements of an array with each one's path (`key[i]`); absent means empty unless `required`.
    func array(_ key: String, maxCount: Int, required isRequired: Bool = false) throws(SignalingError) -> [(path: String, value: JSONValue)] {
        guard let value = value(key) else {
            if isRequired { throw failure(key, "is required") }
            return []
        }
        guard case .array(let elements) = value else {
            throw failure(key, "expected an array, found \(value.kindName)")
        }
        if elements.count > maxCount {
            throw failure(key, "\(elements.count) entries exceeds the limit of \(maxCount)", code: .tooLarge)
        }
        if isRequired, elements.isEmpty { throw failure(key, "must not be empty") }
        let base = fieldPath(key)
        return elements.enumerated().map { ("\(base)[\($0.offset)]", $0.element) }
    }

    func stringArray(_ key: String, maxCount: Int, _ rule: TextRule, required isRequired: Bool = false) throws(SignalingError) -> [String] {
        var strings: [String] = []
        for element in try array(key, maxCount: maxCount, required: isRequired) {
            strings.append(try checkedString(element.value, at: element.path, rule))
        }
        return strings
    }

    func objectArray(_ key: String, maxCount: Int) throws(SignalingError) -> [FieldReader] {
        var readers: [FieldReader] = []
        for element in try array(key, maxCount: maxCount) {
            guard case .object(let object) = element.value else {
                throw failure(at: element.path, "expected an object, found \(element.value.kindName)")
            }
            readers.append(child(object, path: element.path))
        }
        return readers
    }

    // MARK: Shared fields

    /// The request id every device-to-server message carries.
    func requestIDField() throws(SignalingError) -> String {
        try string("id", .requestID)
    }

    /// The `re` of a reply.
    func replyToField() throws(SignalingError) -> String {
        try string("re", .requestID)
    }

    func callIDField() throws(SignalingError) -> String {
        try string("callId", .callID)
    }

    func timeField(_ key: String) throws(SignalingError) -> Int64 {
        try integer(key, in: 0...SignalingLimits.maxTime)
    }

    func optionalTimeField(_ key: String) throws(SignalingError) -> Int64? {
        try optionalInteger(key, in: 0...SignalingLimits.maxTime)
    }

    /// Custom headers: an object of string values, names and values within their rules,
    /// and at most `SignalingLimits.maxHeadersBytes` of names plus values in total.
    func headersField() throws(SignalingError) -> [String: String] {
        guard let value = value("headers") else { return [:] }
        guard case .object(let object) = value else {
            throw failure("headers", "expected an object, found \(value.kindName)")
        }
        if object.members.count > SignalingLimits.maxHeaderCount {
            throw failure("headers", "\(object.members.count) headers exceeds the limit of \(SignalingLimits.maxHeaderCount)", code: .tooLarge)
        }
        var headers: [String: String] = [:]
        var total = 0
        for member in object.members {
            let path = "headers.\(member.key)"
            do throws(TextRule.Failure) {
                try TextRule.headerName.check(member.key)
            } catch {
                throw failure("headers", "header name \(quoted(member.key)): \(error.reason)", code: error.code)
            }
            headers[member.key] = try checkedString(member.value, at: path, .headerValue)
            total += member.key.utf8.count + (headers[member.key]?.utf8.count ?? 0)
        }
        if total > SignalingLimits.maxHeadersBytes {
            throw failure("headers", "total size \(total) bytes exceeds \(SignalingLimits.maxHeadersBytes)", code: .tooLarge)
        }
        return headers
    }
}
