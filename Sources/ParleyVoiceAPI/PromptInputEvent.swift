public import ParleyWireCore

/// The Prompt Input Event (PIE): a `runMenu` finished with a result; the backend answers
/// with SVAML.
public struct PromptInputEvent: Sendable, Hashable {
    public var header: CallbackHeader
    /// What the menu collected (`menuResult`).
    public var menuResult: MenuResult

    public init(header: CallbackHeader, menuResult: MenuResult) {
        self.header = header
        self.menuResult = menuResult
    }

    /// The JSON object, its members always in the same order.
    public var json: JSONObject {
        var object = header.start(event: CallbackEvent.Name.pie.rawValue)
        object.append("menuResult", menuResult.json)
        object.append("applicationKey", ifPresent: header.applicationKey)
        return object
    }

    static func read(_ reader: FieldReader) throws(VoiceAPIError) -> PromptInputEvent {
        PromptInputEvent(header: try CallbackHeader.read(reader),
                         menuResult: try MenuResult.read(try reader.object("menuResult")))
    }
}
