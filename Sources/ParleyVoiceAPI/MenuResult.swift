public import ParleyWireCore

/// What a `runMenu` collected: the `menuResult` of PIE.
public struct MenuResult: Sendable, Hashable {
    /// What kind of result this is.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// The caller chose an option whose action is `return(value)`; ``MenuResult/value`` is that value.
        case `return`
        /// The caller keyed digits in a menu without a matching option (a PIN, an extension);
        /// ``MenuResult/value`` holds them.
        case sequence
        /// The caller keyed nothing before the menu's timeouts and repeats ran out.
        case timeout
        /// The caller hung up during the menu.
        case hangup
        /// The caller keyed an option that does not exist, as often as the menu repeats.
        case invalidInput = "invalidinput"
        /// The menu could not run (a prompt that cannot be played).
        case error
    }

    /// How the input came in.
    public enum InputMethod: String, Sendable, Hashable, CaseIterable {
        case dtmf
        case voice
    }

    /// The id of the menu the result came from (`menuId`).
    public var menuID: String
    public var kind: Kind
    /// The returned value or the keyed digits; empty for a timeout or a hang-up.
    public var value: String
    public var inputMethod: InputMethod?

    public init(menuID: String, kind: Kind, value: String, inputMethod: InputMethod? = .dtmf) {
        self.menuID = menuID
        self.kind = kind
        self.value = value
        self.inputMethod = inputMethod
    }

    /// The JSON form.
    public var json: JSONValue {
        var object = JSONObject()
        object.append("menuId", menuID)
        object.append("type", kind.rawValue)
        object.append("value", value)
        object.append("inputMethod", ifPresent: inputMethod?.rawValue)
        return .object(object)
    }

    static func read(_ reader: FieldReader) throws(VoiceAPIError) -> MenuResult {
        MenuResult(menuID: try reader.string("menuId", maxBytes: VoiceAPILimits.maxIdentifierBytes),
                   kind: try reader.enumeration("type", as: Kind.self),
                   value: try reader.optionalString("value") ?? "",
                   inputMethod: try reader.optionalEnumeration("inputMethod", as: InputMethod.self))
    }
}
