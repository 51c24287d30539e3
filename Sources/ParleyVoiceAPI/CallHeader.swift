public import ParleyWireCore

/// One call header, `{"key": ..., "value": ...}`: custom data a calling app attaches to a
/// call (seen in ICE and DiCE) or an action passes on (to the callee's app for
/// `connectMxp`, as a private SIP header for `connectSip`).
public struct CallHeader: Sendable, Hashable {
    /// The longest key, in UTF-8 bytes.
    public static let maxKeyBytes = 64
    /// The longest value, in UTF-8 bytes.
    public static let maxValueBytes = 1024

    public var key: String
    public var value: String

    public init(key: String, value: String) {
        self.key = key
        self.value = value
    }

    /// The JSON form.
    public var json: JSONValue {
        var object = JSONObject()
        object.append("key", key)
        object.append("value", value)
        return .object(object)
    }

    /// Reads `key` of `reader` as an array of call headers; absent is empty.
    static func list(_ key: String, of reader: FieldReader) throws(VoiceAPIError) -> [CallHeader] {
        guard let elements = try reader.optionalObjects(key, maxCount: VoiceAPILimits.maxCallHeaders) else { return [] }
        var headers: [CallHeader] = []
        for element in elements {
            headers.append(CallHeader(key: try element.string("key", maxBytes: maxKeyBytes),
                                      value: try element.optionalString("value", maxBytes: maxValueBytes) ?? ""))
        }
        return headers
    }

    /// The JSON array of `headers`.
    static func json(_ headers: [CallHeader]) -> JSONValue {
        .array(headers.map(\.json))
    }
}
