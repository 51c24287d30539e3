/// A participant of a conference room who is talking now, as the room's mixer decides
/// (`ParleyCall.talkers`, `call(_:didChangeTalkers:)`).
public struct ParleyConferenceTalker: Sendable, Hashable {
    /// The participant's call id: the REST API's participant `id` (this device's own
    /// `callId` when its user talks).
    public var participantId: String
    /// The user who placed that participant's call.
    public var userId: String

    public init(participantId: String, userId: String) {
        self.participantId = participantId
        self.userId = userId
    }
}
