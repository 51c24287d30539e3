public import ParleyWireCore

/// The Answered Call Event (ACE): the callee answered; the backend answers with SVAML
/// (`continue`, `hangup`, or instructions first).
public struct AnsweredCallEvent: Sendable, Hashable {
    public var header: CallbackHeader

    public init(header: CallbackHeader) {
        self.header = header
    }

    /// The JSON object, its members always in the same order.
    public var json: JSONObject {
        var object = header.start(event: CallbackEvent.Name.ace.rawValue)
        object.append("applicationKey", ifPresent: header.applicationKey)
        return object
    }

    static func read(_ reader: FieldReader) throws(VoiceAPIError) -> AnsweredCallEvent {
        AnsweredCallEvent(header: try CallbackHeader.read(reader))
    }
}
