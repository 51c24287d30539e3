public import ParleyWireCore

/// One option of a menu: the keys that choose it and what happens then.
public struct MenuOption: Sendable, Hashable {
    /// What choosing an option does.
    public enum Action: Sendable, Hashable {
        /// Goes to the menu with this id (written `menu(id)`).
        case menu(String)
        /// Ends the menu with this value, sent to the backend in a PIE (written `return(value)`).
        case `return`(String)

        /// The text form, `menu(id)` or `return(value)`.
        public var text: String {
            switch self {
            case .menu(let id): "menu(\(id))"
            case .return(let value): "return(\(value))"
            }
        }

        /// Reads `menu(id)` or `return(value)`, the word in any case.
        init?(text: String) {
            let bytes = Array(text.utf8)
            guard let open = bytes.firstIndex(of: UInt8(ascii: "(")), bytes.last == UInt8(ascii: ")") else { return nil }
            let word = ASCIICase.lower(String(decoding: bytes[..<open], as: UTF8.self))
            let inner = String(decoding: bytes[(open + 1)..<(bytes.count - 1)], as: UTF8.self)
            guard !inner.contains("("), !inner.contains(")") else { return nil }
            switch word {
            case "menu": self = .menu(inner)
            case "return": self = .return(inner)
            default: return nil
            }
        }
    }

    /// The keys that choose this option (`0`-`9`, `*`, `#`), usually one.
    public var dtmf: String
    public var action: Action

    public init(dtmf: String, action: Action) {
        self.dtmf = dtmf
        self.action = action
    }

    /// The JSON form.
    public var json: JSONValue {
        var object = JSONObject()
        object.append("dtmf", dtmf)
        object.append("action", action.text)
        return .object(object)
    }

    static func read(_ reader: FieldReader) throws(VoiceAPIError) -> MenuOption {
        let dtmf = try reader.string("dtmf", maxBytes: VoiceAPILimits.maxDTMFCharacters)
        guard dtmf.utf8.allSatisfy(DTMF.isKey) else {
            throw reader.failure("dtmf", "\(FieldReader.quoted(dtmf)) holds characters other than 0-9 * #")
        }
        let text = try reader.string("action", maxBytes: VoiceAPILimits.maxIdentifierBytes + 8)
        guard let action = Action(text: text) else {
            throw reader.failure("action", "\(FieldReader.quoted(text)) is neither menu(id) nor return(value)")
        }
        if case .menu(let id) = action, id.isEmpty { throw reader.failure("action", "menu() names no menu") }
        return MenuOption(dtmf: dtmf, action: action)
    }
}
