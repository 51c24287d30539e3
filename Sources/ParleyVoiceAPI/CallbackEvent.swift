public import ParleyWireCore

/// One callback Parley POSTs to an application's backend, in the Sinch Voice v1 shape:
/// encode with ``body``, decode with ``decode(_:)`` (a backend in Swift reads them with
/// the same types).
public enum CallbackEvent: Sendable, Hashable {
    case incoming(IncomingCallEvent)
    case answered(AnsweredCallEvent)
    case disconnected(DisconnectedCallEvent)
    case promptInput(PromptInputEvent)
    case notify(NotifyEvent)

    /// The `event` member of each kind.
    public enum Name: String, Sendable, Hashable, CaseIterable {
        case ice, ace, dice, pie, notify
    }

    /// Which event this is.
    public var name: Name {
        switch self {
        case .incoming: .ice
        case .answered: .ace
        case .disconnected: .dice
        case .promptInput: .pie
        case .notify: .notify
        }
    }

    /// Whether the backend's answer to this event is SVAML Parley reads: DiCE and notify
    /// answers are ignored.
    public var expectsSVAML: Bool {
        switch self {
        case .incoming, .answered, .promptInput: true
        case .disconnected, .notify: false
        }
    }

    /// The JSON object.
    public var json: JSONObject {
        switch self {
        case .incoming(let event): event.json
        case .answered(let event): event.json
        case .disconnected(let event): event.json
        case .promptInput(let event): event.json
        case .notify(let event): event.json
        }
    }

    /// The compact JSON body, as POSTed (and signed).
    public var body: [UInt8] {
        JSONWriter.serialize(.object(json))
    }

    /// Reads a callback body: one strict JSON object of at most
    /// ``VoiceAPILimits/maxBodyBytes`` whose `event` names a kind (in any case).
    public static func decode(_ body: [UInt8]) throws(VoiceAPIError) -> CallbackEvent {
        let reader = try topObject(body, what: "a callback")
        let name = try reader.string("event", maxBytes: 16)
        guard let kind = Name.allCases.first(where: { ASCIICase.equal($0.rawValue, name) }) else {
            throw reader.failure("event", "\(FieldReader.quoted(name)) is not one of: ice, ace, dice, pie, notify",
                                 kind: .unknownEvent)
        }
        switch kind {
        case .ice: return .incoming(try IncomingCallEvent.read(reader))
        case .ace: return .answered(try AnsweredCallEvent.read(reader))
        case .dice: return .disconnected(try DisconnectedCallEvent.read(reader))
        case .pie: return .promptInput(try PromptInputEvent.read(reader))
        case .notify: return .notify(try NotifyEvent.read(reader))
        }
    }

    /// Parses `body` as one JSON object within the size and depth limits.
    static func topObject(_ body: [UInt8], what: String) throws(VoiceAPIError) -> FieldReader {
        guard body.count <= VoiceAPILimits.maxBodyBytes else {
            throw VoiceAPIError(.tooLarge, "\(what) of \(body.count) bytes is over the \(VoiceAPILimits.maxBodyBytes)-byte limit")
        }
        let value: JSONValue
        do throws(StrictJSONParser.SyntaxError) {
            value = try StrictJSONParser.parse(body, maxDepth: VoiceAPILimits.maxDepth)
        } catch {
            throw VoiceAPIError(.malformedJSON, "\(what) is not valid JSON: \(error.reason) at byte \(error.offset)")
        }
        guard case .object(let object) = value else {
            throw VoiceAPIError(.malformedJSON, "\(what) must be a JSON object, found \(value.kindName)")
        }
        return FieldReader(object)
    }

    /// A caller or callee as sent: a phone number in E.164 when it reads as one, else as is
    /// (a user id, a SIP address).
    static func sentNumber(_ text: String) -> String {
        guard let first = text.utf8.first, first == UInt8(ascii: "+") || (first >= 0x31 && first <= 0x39),
              let number = try? PhoneNumber(normalizing: text) else { return text }
        return number.e164
    }
}
