public import ParleyWireCore

/// A notification (`notify`): something the backend may want to know that needs no
/// answer; Parley sends one when a recording is written.
public struct NotifyEvent: Sendable, Hashable {
    /// The call it concerns (`callid`), if a call.
    public var callID: String?
    /// The conference it concerns (`conferenceId`), if a conference.
    public var conferenceID: String?
    /// The API version (`version`).
    public var version: Int64
    /// What the notification says (`type`), e.g. `recording_finished`.
    public var type: String
    /// Notification-specific data (`custom`).
    public var custom: String?
    /// Where the result is (`destination`): for a recording, the file's URL or path.
    public var destination: String?

    public init(callID: String?, conferenceID: String? = nil, version: Int64 = 1, type: String,
                custom: String? = nil, destination: String? = nil) {
        self.callID = callID
        self.conferenceID = conferenceID
        self.version = version
        self.type = type
        self.custom = custom
        self.destination = destination
    }

    /// The JSON object.
    public var json: JSONObject {
        var object = JSONObject()
        object.append("event", CallbackEvent.Name.notify.rawValue)
        object.append("callid", ifPresent: callID)
        object.append("conferenceId", ifPresent: conferenceID)
        object.append("version", version)
        object.append("type", type)
        object.append("custom", ifPresent: custom)
        object.append("destination", ifPresent: destination)
        return object
    }

    static func read(_ reader: FieldReader) throws(VoiceAPIError) -> NotifyEvent {
        NotifyEvent(callID: try reader.optionalString("callid", maxBytes: VoiceAPILimits.maxIdentifierBytes),
                    conferenceID: try reader.optionalString("conferenceId", maxBytes: VoiceAPILimits.maxIdentifierBytes),
                    version: try reader.optionalInteger("version", in: 1...1_000) ?? 1,
                    type: try reader.string("type", maxBytes: VoiceAPILimits.maxIdentifierBytes),
                    custom: try reader.optionalString("custom"),
                    destination: try reader.optionalString("destination"))
    }
}
