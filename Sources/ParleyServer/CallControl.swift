public import ParleyCallModel

/// What the REST API asks of the live call engine. The REST handlers read call records
/// from the store; hanging up and conference rooms need the engine, which alone knows
/// live states.
public protocol CallControl: Sendable {
    /// Hangs up a call of `applicationKey` as `DELETE /v1/calls/{id}` does: `canceled`
    /// before the answer, `hungUp` after it.
    func hangUp(callID: String, applicationKey: String) async -> HangUpOutcome
    /// Calls in the engine now, by state (for `/metrics`).
    func liveCallCounts() async -> [CallState: Int]
    /// The participants of the application's conference room `conferenceID` now, oldest
    /// first; empty when nobody is in it.
    func conferenceParticipants(_ conferenceID: String, applicationKey: String) async -> [ConferenceParticipant]
    /// Mutes, unmutes, holds or resumes a participant of a room.
    func manageParticipant(_ command: ConferenceCommand, callID: String, conferenceID: String, applicationKey: String) async -> ConferenceOutcome
    /// Removes one participant of a room (`callID`) or, with nil, all of them: their calls
    /// end `hungUp`, as `DELETE /v1/calls/{id}` ends them.
    func kick(callID: String?, conferenceID: String, applicationKey: String) async -> ConferenceOutcome
    /// The conference rooms' figures now (for `/metrics`); nil without rooms.
    func conferenceStatistics() async -> ConferenceStatistics?
}

extension CallControl {
    /// Without conference rooms: nobody is in any.
    public func conferenceParticipants(_ conferenceID: String, applicationKey: String) async -> [ConferenceParticipant] { [] }
    public func manageParticipant(_ command: ConferenceCommand, callID: String, conferenceID: String, applicationKey: String) async -> ConferenceOutcome {
        .roomNotFound
    }
    public func kick(callID: String?, conferenceID: String, applicationKey: String) async -> ConferenceOutcome { .roomNotFound }
    public func conferenceStatistics() async -> ConferenceStatistics? { nil }
}

/// One participant of a conference room, as `GET /calling/v1/conferences/id/{id}` lists it
/// (the Sinch Voice API's shape, plus `talking`).
public struct ConferenceParticipant: Sendable, Hashable, Encodable {
    /// The participant's call id.
    public var id: String
    /// Who the participant is: the calling user's id.
    public var cli: String
    /// Seconds since it joined.
    public var duration: Int
    public var muted: Bool
    public var onhold: Bool
    /// Whether the mixer counts it as talking now.
    public var talking: Bool

    public init(id: String, cli: String, duration: Int, muted: Bool, onhold: Bool, talking: Bool) {
        self.id = id
        self.cli = cli
        self.duration = duration
        self.muted = muted
        self.onhold = onhold
        self.talking = talking
    }
}

/// The result of a moderation request.
public enum ConferenceOutcome: Sendable, Hashable {
    case done
    /// Nobody of the application is in a room of that id.
    case roomNotFound
    /// The room has nobody with that call id.
    case participantNotFound
}

/// The result of a REST hang-up.
public enum HangUpOutcome: Sendable, Hashable {
    /// The call was live and is now ending; every device gets `call.ended`.
    case hungUp
    /// No call with that id belongs to the application (live or stored).
    case notFound
    /// The call exists but already ended.
    case alreadyEnded
}
