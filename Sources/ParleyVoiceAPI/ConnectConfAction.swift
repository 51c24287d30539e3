import ParleyWireCore

/// `connectConf`: puts the call into a conference room, created on first use.
public struct ConnectConfAction: Sendable, Hashable {
    /// The room's id, at most ``VoiceAPILimits/maxConferenceIDCharacters`` characters.
    public var conferenceID: String
    /// Music on hold for the first participant while alone.
    public var moh: String?

    public init(conferenceID: String, moh: String? = nil) {
        self.conferenceID = conferenceID
        self.moh = moh
    }

    func write(into object: inout JSONObject) {
        object.append("conferenceId", conferenceID)
        object.append("moh", ifPresent: moh)
    }

    static func read(_ reader: FieldReader) throws(VoiceAPIError) -> ConnectConfAction {
        let id = try reader.string("conferenceId", maxBytes: VoiceAPILimits.maxConferenceIDCharacters * 4)
        guard id.count <= VoiceAPILimits.maxConferenceIDCharacters else {
            throw reader.failure("conferenceId", "is \(id.count) characters, more than the \(VoiceAPILimits.maxConferenceIDCharacters) allowed")
        }
        return ConnectConfAction(conferenceID: id, moh: try reader.optionalString("moh", maxBytes: VoiceAPILimits.maxIdentifierBytes))
    }
}
