import ParleyWireCore

/// `park`: holds the caller, playing a prompt in a loop, until a REST update moves the
/// call on or `maxDuration` passes.
public struct ParkAction: Sendable, Hashable {
    /// Played once when the call is parked.
    public var introPrompt: String?
    /// Played in a loop while parked.
    public var holdPrompt: String?
    /// The text-to-speech voice of the prompts.
    public var locale: String?
    /// The longest the call stays parked, in seconds.
    public var maxDurationSeconds: Int64?

    public init(introPrompt: String? = nil, holdPrompt: String? = nil, locale: String? = nil, maxDurationSeconds: Int64? = nil) {
        self.introPrompt = introPrompt
        self.holdPrompt = holdPrompt
        self.locale = locale
        self.maxDurationSeconds = maxDurationSeconds
    }

    func write(into object: inout JSONObject) {
        object.append("introPrompt", ifPresent: introPrompt)
        object.append("holdPrompt", ifPresent: holdPrompt)
        object.append("locale", ifPresent: locale)
        object.append("maxDuration", ifPresent: maxDurationSeconds)
    }

    static func read(_ reader: FieldReader) throws(VoiceAPIError) -> ParkAction {
        ParkAction(introPrompt: try reader.optionalString("introPrompt"),
                   holdPrompt: try reader.optionalString("holdPrompt"),
                   locale: try reader.optionalString("locale", maxBytes: 64),
                   maxDurationSeconds: try reader.optionalInteger("maxDuration", in: 0...VoiceAPILimits.maxDurationSeconds))
    }
}
