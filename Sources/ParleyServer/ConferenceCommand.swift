/// What a moderator does to a participant of a conference room (the Sinch Voice API's
/// `PATCH /calling/v1/conferences/id/{conferenceId}/{callId}` commands).
public enum ConferenceCommand: String, Sendable, Hashable, CaseIterable {
    /// The participant's audio is left out of the mix; it still hears the room.
    case mute
    case unmute
    /// Out of the mix, and it hears the room's hold source (music or silence) instead of the room.
    case onHold = "onhold"
    /// Back in the room from hold.
    case resume
}

/// One participant of a conference room as the mixer sees it.
struct RoomParticipantMedia: Sendable, Hashable {
    var muted: Bool
    var onHold: Bool
    var talking: Bool
}
