import ParleyWireCore

/// `connectPstn`: connects the call to a phone number through a SIP trunk.
public struct ConnectPstnAction: Sendable, Hashable {
    /// The number to call, E.164; without it, the number the call was placed to.
    public var number: PhoneNumber?
    /// The caller id shown to the callee, E.164.
    public var cli: PhoneNumber?
    /// The longest the connected call lasts, in seconds.
    public var maxDurationSeconds: Int64?
    /// How long the callee may ring before the call ends with NOANSWER, in seconds.
    public var dialTimeoutSeconds: Int64?
    /// Tones sent to the callee on answer (an extension, a PIN).
    public var dtmf: String?
    /// The text-to-speech voice of any prompt.
    public var locale: String?
    /// Whether ACE and DiCE are not sent for this leg.
    public var suppressCallbacks: Bool?

    /// The longest `dialTimeout` Parley accepts, in seconds.
    public static let maxDialTimeoutSeconds: Int64 = 600

    public init(number: PhoneNumber? = nil, cli: PhoneNumber? = nil, maxDurationSeconds: Int64? = nil,
                dialTimeoutSeconds: Int64? = nil, dtmf: String? = nil, locale: String? = nil, suppressCallbacks: Bool? = nil) {
        self.number = number
        self.cli = cli
        self.maxDurationSeconds = maxDurationSeconds
        self.dialTimeoutSeconds = dialTimeoutSeconds
        self.dtmf = dtmf
        self.locale = locale
        self.suppressCallbacks = suppressCallbacks
    }

    func write(into object: inout JSONObject) {
        object.append("number", ifPresent: number?.e164)
        object.append("cli", ifPresent: cli?.e164)
        object.append("maxDuration", ifPresent: maxDurationSeconds)
        object.append("dialTimeout", ifPresent: dialTimeoutSeconds)
        object.append("dtmf", ifPresent: dtmf)
        object.append("locale", ifPresent: locale)
        if let suppressCallbacks { object.append("suppressCallbacks", suppressCallbacks) }
    }

    static func read(_ reader: FieldReader) throws(VoiceAPIError) -> ConnectPstnAction {
        ConnectPstnAction(
            number: try phoneNumber("number", of: reader),
            cli: try phoneNumber("cli", of: reader),
            maxDurationSeconds: try reader.optionalInteger("maxDuration", in: 0...VoiceAPILimits.maxDurationSeconds),
            dialTimeoutSeconds: try reader.optionalInteger("dialTimeout", in: 0...maxDialTimeoutSeconds),
            dtmf: try DTMF.tones("dtmf", of: reader, required: false),
            locale: try reader.optionalString("locale", maxBytes: 64),
            suppressCallbacks: try reader.optionalBool("suppressCallbacks"))
    }

    static func phoneNumber(_ key: String, of reader: FieldReader) throws(VoiceAPIError) -> PhoneNumber? {
        guard let text = try reader.optionalString(key, maxBytes: 64) else { return nil }
        do throws(VoiceAPIError) {
            return try PhoneNumber(normalizing: text)
        } catch {
            throw VoiceAPIError(.invalidPhoneNumber, field: reader.fieldPath(key), error.reason)
        }
    }
}
