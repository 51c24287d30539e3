import ParleyWireCore

/// The fields every call callback (ICE, ACE, DiCE, PIE) starts with, in the order Parley
/// writes them.
public struct CallbackHeader: Sendable, Hashable {
    /// The call's id (`callid`).
    public var callID: String
    /// The REST resource of the call (`callResourceUrl`), for `PATCH` updates.
    public var callResourceURL: String?
    /// When the event happened.
    public var timestamp: SinchTimestamp
    /// The API version (`version`), 1 for Sinch Voice v1.
    public var version: Int64
    /// Custom data the call carries (`custom`).
    public var custom: String?
    /// The application the call belongs to (`applicationKey`).
    public var applicationKey: String?

    public init(callID: String, callResourceURL: String? = nil, timestamp: SinchTimestamp, version: Int64 = 1,
                custom: String? = nil, applicationKey: String? = nil) {
        self.callID = callID
        self.callResourceURL = callResourceURL
        self.timestamp = timestamp
        self.version = version
        self.custom = custom
        self.applicationKey = applicationKey
    }

    /// Starts an event object: `event`, `callid`, `callResourceUrl`, `timestamp`, `version`, `custom`.
    func start(event: String) -> JSONObject {
        var object = JSONObject()
        object.append("event", event)
        object.append("callid", callID)
        object.append("callResourceUrl", ifPresent: callResourceURL)
        object.append("timestamp", timestamp.text)
        object.append("version", version)
        object.append("custom", ifPresent: custom)
        return object
    }

    static func read(_ reader: FieldReader) throws(VoiceAPIError) -> CallbackHeader {
        CallbackHeader(
            callID: try reader.string("callid", maxBytes: VoiceAPILimits.maxIdentifierBytes),
            callResourceURL: try reader.optionalString("callResourceUrl"),
            timestamp: try readTimestamp(reader),
            version: try reader.optionalInteger("version", in: 1...1_000) ?? 1,
            custom: try reader.optionalString("custom"),
            applicationKey: try reader.optionalString("applicationKey", maxBytes: VoiceAPILimits.maxIdentifierBytes))
    }

    static func readTimestamp(_ reader: FieldReader) throws(VoiceAPIError) -> SinchTimestamp {
        let text = try reader.string("timestamp", maxBytes: 64)
        do throws(VoiceAPIError) {
            return try SinchTimestamp(parsing: text)
        } catch {
            throw VoiceAPIError(.invalidField, field: reader.fieldPath("timestamp"), error.reason)
        }
    }
}
