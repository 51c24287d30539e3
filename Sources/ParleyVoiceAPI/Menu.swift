public import ParleyWireCore

/// One menu of a `runMenu`: prompts, how many keys to collect, how long to wait, options.
public struct Menu: Sendable, Hashable {
    /// The longest wait for a key Parley accepts, in milliseconds (5 minutes).
    public static let maxTimeoutMilliseconds: Int64 = 300_000
    /// The most times a menu repeats its prompt.
    public static let maxRepeats: Int64 = 20

    /// The menu's id; the first menu run is ``RunMenuAction/mainMenu`` (`main` by default).
    public var id: String
    /// Played when the menu starts (files, URLs or `#tts[...]` text; `;` separates several).
    public var mainPrompt: String?
    /// Played when the menu repeats after a timeout or a wrong key.
    public var repeatPrompt: String?
    /// How many times the menu repeats before it ends with a timeout or invalid input.
    public var repeats: Int64?
    /// How many keys end the input (the keys are a sequence when no option matches).
    public var maxDigits: Int64?
    /// How long to wait for the first key, and between keys, in milliseconds.
    public var timeoutMilliseconds: Int64?
    /// The longest the whole input may take, in milliseconds.
    public var maxTimeoutMilliseconds: Int64?
    public var options: [MenuOption]

    public init(id: String, mainPrompt: String? = nil, repeatPrompt: String? = nil, repeats: Int64? = nil,
                maxDigits: Int64? = nil, timeoutMilliseconds: Int64? = nil, maxTimeoutMilliseconds: Int64? = nil,
                options: [MenuOption] = []) {
        self.id = id
        self.mainPrompt = mainPrompt
        self.repeatPrompt = repeatPrompt
        self.repeats = repeats
        self.maxDigits = maxDigits
        self.timeoutMilliseconds = timeoutMilliseconds
        self.maxTimeoutMilliseconds = maxTimeoutMilliseconds
        self.options = options
    }

    /// The JSON form.
    public var json: JSONValue {
        var object = JSONObject()
        object.append("id", id)
        object.append("mainPrompt", ifPresent: mainPrompt)
        object.append("repeatPrompt", ifPresent: repeatPrompt)
        object.append("repeats", ifPresent: repeats)
        object.append("maxDigits", ifPresent: maxDigits)
        object.append("timeoutMills", ifPresent: timeoutMilliseconds)
        object.append("maxTimeoutMills", ifPresent: maxTimeoutMilliseconds)
        if !options.isEmpty { object.append("options", .array(options.map(\.json))) }
        return .object(object)
    }

    static func read(_ reader: FieldReader) throws(VoiceAPIError) -> Menu {
        let options = try reader.optionalObjects("options", maxCount: VoiceAPILimits.maxMenuOptions) ?? []
        var read: [MenuOption] = []
        for option in options {
            let parsed = try MenuOption.read(option)
            guard !read.contains(where: { $0.dtmf == parsed.dtmf }) else {
                throw option.failure("dtmf", "\(FieldReader.quoted(parsed.dtmf)) chooses two options of one menu")
            }
            read.append(parsed)
        }
        return Menu(
            id: try reader.string("id", maxBytes: VoiceAPILimits.maxIdentifierBytes),
            mainPrompt: try reader.optionalString("mainPrompt"),
            repeatPrompt: try reader.optionalString("repeatPrompt"),
            repeats: try reader.optionalInteger("repeats", in: 0...maxRepeats),
            maxDigits: try reader.optionalInteger("maxDigits", in: 1...Int64(VoiceAPILimits.maxDTMFCharacters)),
            timeoutMilliseconds: try reader.optionalInteger("timeoutMills", in: 0...maxTimeoutMilliseconds),
            maxTimeoutMilliseconds: try reader.optionalInteger("maxTimeoutMills", in: 0...maxTimeoutMilliseconds),
            options: read)
    }
}
