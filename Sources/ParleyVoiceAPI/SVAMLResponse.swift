public import ParleyWireCore

/// An SVAML document, `{"instructions": [...], "action": {...}}`: a backend's answer to
/// ICE, ACE or PIE, or the body of a REST call update. Exactly one action; instructions
/// run first, in order.
public struct SVAMLResponse: Sendable, Hashable {
    public var instructions: [SVAMLInstruction]
    public var action: SVAMLAction

    public init(instructions: [SVAMLInstruction] = [], action: SVAMLAction) {
        self.instructions = instructions
        self.action = action
    }

    /// The JSON object; `instructions` is left out when there are none.
    public var json: JSONObject {
        var object = JSONObject()
        if !instructions.isEmpty { object.append("instructions", .array(instructions.map(\.json))) }
        object.append("action", action.json)
        return object
    }

    /// The compact JSON body.
    public var body: [UInt8] {
        JSONWriter.serialize(.object(json))
    }

    /// Reads an SVAML body: one strict JSON object of at most
    /// ``VoiceAPILimits/maxBodyBytes`` with an `action` object and, optionally, an
    /// `instructions` array; names are matched in any case. With `context`, an action or
    /// instruction that does not answer it is refused too.
    ///
    /// Errors say what the call ends with (``VoiceAPIError/diceReason``): an unknown or
    /// misplaced action is `INVALIDSVAMLACTION`, a body that is not JSON `CALLBACKERROR`.
    public static func decode(_ body: [UInt8], answering context: SVAMLContext? = nil) throws(VoiceAPIError) -> SVAMLResponse {
        let reader = try CallbackEvent.topObject(body, what: "an SVAML answer")
        guard reader.has("action") else {
            throw VoiceAPIError(.missingAction, field: "action", "an SVAML answer needs exactly one action object")
        }
        // An array of actions is the usual way to ask for more than one; say so plainly.
        if case .array = reader.value("action") {
            throw VoiceAPIError(.invalidField, field: "action", "must be one action object, not an array")
        }
        let actionReader = try reader.object("action")
        var instructions: [SVAMLInstruction] = []
        for element in try reader.optionalObjects("instructions", maxCount: VoiceAPILimits.maxInstructions) ?? [] {
            let instruction = try SVAMLInstruction.read(element)
            if let context, !context.instructions.contains(instruction.name) {
                throw element.failure("name", "\(instruction.name.rawValue) is not allowed in an answer to \(context.rawValue)")
            }
            instructions.append(instruction)
        }
        let action = try SVAMLAction.read(actionReader)
        if let context, !context.actions.contains(action.name) {
            throw actionReader.failure("name", "\(action.name.rawValue) is not allowed in an answer to \(context.rawValue)")
        }
        return SVAMLResponse(instructions: instructions, action: action)
    }
}
