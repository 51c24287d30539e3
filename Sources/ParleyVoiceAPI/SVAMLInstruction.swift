public import ParleyWireCore

/// One SVAML instruction: something done before the action runs.
public enum SVAMLInstruction: Sendable, Hashable {
    /// Plays prompts in order (`ids`): WAV files or URLs the operator allows.
    case playFiles(ids: [String], locale: String?)
    /// Speaks `text` (at most ``VoiceAPILimits/maxSayCharacters`` characters) by text to speech.
    case say(text: String, locale: String?)
    /// Sends DTMF tones on the call (`0`-`9`, `*`, `#`, `A`-`D`, `w` for a half-second pause).
    case sendDtmf(String)
    /// Stores a value echoed on the call's later callbacks.
    case setCookie(key: String, value: String)
    /// Answers the call before the action (so prompts play to an answered call).
    case answer
    /// Starts recording the call; `options` are Sinch's recording options, kept as sent.
    case startRecording(options: JSONObject?)
    /// Stops the recording.
    case stopRecording

    /// The `name` member of each instruction, as Parley writes it.
    public enum Name: String, Sendable, Hashable, CaseIterable {
        case playFiles, say, sendDtmf, setCookie, answer, startRecording, stopRecording
    }

    public var name: Name {
        switch self {
        case .playFiles: .playFiles
        case .say: .say
        case .sendDtmf: .sendDtmf
        case .setCookie: .setCookie
        case .answer: .answer
        case .startRecording: .startRecording
        case .stopRecording: .stopRecording
        }
    }

    /// The JSON form.
    public var json: JSONValue {
        var object = JSONObject()
        object.append("name", name.rawValue)
        switch self {
        case .playFiles(let ids, let locale):
            object.append("ids", .array(ids.map(JSONValue.string)))
            object.append("locale", ifPresent: locale)
        case .say(let text, let locale):
            object.append("text", text)
            object.append("locale", ifPresent: locale)
        case .sendDtmf(let value):
            object.append("value", value)
        case .setCookie(let key, let value):
            object.append("key", key)
            object.append("value", value)
        case .startRecording(let options):
            if let options { object.append("options", .object(options)) }
        case .answer, .stopRecording:
            break
        }
        return .object(object)
    }

    static func read(_ reader: FieldReader) throws(VoiceAPIError) -> SVAMLInstruction {
        let text = try reader.string("name", maxBytes: 64)
        guard let name = Name.allCases.first(where: { ASCIICase.equal($0.rawValue, text) }) else {
            let known = Name.allCases.map(\.rawValue).joined(separator: ", ")
            throw reader.failure("name", "\(FieldReader.quoted(text)) is not an instruction (known: \(known))", kind: .unknownInstruction)
        }
        switch name {
        case .playFiles:
            guard let elements = try reader.optionalArray("ids", maxCount: VoiceAPILimits.maxPlayFiles), !elements.isEmpty else {
                throw reader.failure("ids", "must list at least one file")
            }
            var ids: [String] = []
            for element in elements {
                ids.append(try FieldReader.checkedString(element.value, at: element.path, maxBytes: VoiceAPILimits.maxTextBytes,
                                                         allowEmpty: false))
            }
            return .playFiles(ids: ids, locale: try reader.optionalString("locale", maxBytes: 64))
        case .say:
            let text = try reader.string("text", maxBytes: VoiceAPILimits.maxSayCharacters * 4)
            guard text.count <= VoiceAPILimits.maxSayCharacters else {
                throw reader.failure("text", "is \(text.count) characters long, more than the \(VoiceAPILimits.maxSayCharacters) allowed")
            }
            return .say(text: text, locale: try reader.optionalString("locale", maxBytes: 64))
        case .sendDtmf:
            return .sendDtmf(try DTMF.tones("value", of: reader, required: true) ?? "")
        case .setCookie:
            return .setCookie(key: try reader.string("key", maxBytes: VoiceAPILimits.maxIdentifierBytes),
                              value: try reader.optionalString("value", maxBytes: VoiceAPILimits.maxTextBytes) ?? "")
        case .answer:
            return .answer
        case .startRecording:
            return .startRecording(options: try reader.optionalObject("options")?.object)
        case .stopRecording:
            return .stopRecording
        }
    }
}
