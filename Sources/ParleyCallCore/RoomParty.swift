public import ParleyCallModel

/// The callee of a call placed to a conference room (`callConference(withId:)`): the room,
/// as one call sees it. The room answers at once; the caller's leg is mixed with the
/// other participants' on the room's mixer (the media anchor keeps one mixer per room of
/// an application), and the call is established when the caller's audio flows. Rooms are
/// named per application: two applications' rooms never meet, whatever their ids.
public struct RoomParty: Sendable, Hashable, CustomStringConvertible {
    /// The call this participant belongs to.
    public var callID: String
    /// The conference id the caller gave (1-64 characters, `call.start`'s `to.id`).
    public var room: String

    public init(callID: String, room: String) {
        self.callID = callID
        self.room = room
    }

    /// The room as a call record's callee.
    public var address: PartyAddress { .conference(room) }

    public var description: String { "room \(room)" }
}
