public import ParleyCallModel
public import ParleySignaling
public import ParleyVoiceAPI

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
    /// Calls a user of `applicationKey` into a conference room (`POST /calling/v1/callouts`,
    /// `conferenceCallout`): their devices ring, or are pushed, and the one that answers
    /// joins the room.
    func conferenceCallout(_ request: ConferenceCalloutRequest, applicationKey: String) async -> CalloutOutcome
    /// Places a callout the server plays to itself (`POST /calling/v1/callouts`,
    /// `ttsCallout` or `customCallout`): a call to a phone number or SIP address that hears
    /// the request's steps once it answers.
    func serverCallout(_ request: ServerCalloutRequest, applicationKey: String) async -> CalloutOutcome
    /// Runs an SVAML call update (`PATCH /calling/v1/calls/id/{callId}`) on a call of
    /// `applicationKey` the server answered itself (prompts, a menu, park); false when the
    /// application has no such call.
    func updateAnsweredCall(callID: String, applicationKey: String, svaml: SVAMLResponse) async -> Bool
}

extension CallControl {
    /// Without conference rooms: nobody is in any.
    public func conferenceParticipants(_ conferenceID: String, applicationKey: String) async -> [ConferenceParticipant] { [] }
    public func manageParticipant(_ command: ConferenceCommand, callID: String, conferenceID: String, applicationKey: String) async -> ConferenceOutcome {
        .roomNotFound
    }
    public func kick(callID: String?, conferenceID: String, applicationKey: String) async -> ConferenceOutcome { .roomNotFound }
    public func conferenceStatistics() async -> ConferenceStatistics? { nil }
    public func conferenceCallout(_ request: ConferenceCalloutRequest, applicationKey: String) async -> CalloutOutcome {
        .refused(code: .notImplemented, message: "this server places no callouts")
    }
    public func serverCallout(_ request: ServerCalloutRequest, applicationKey: String) async -> CalloutOutcome {
        .refused(code: .notImplemented, message: "this server places no callouts")
    }
    /// Without an engine no call is answered by the server.
    public func updateAnsweredCall(callID: String, applicationKey: String, svaml: SVAMLResponse) async -> Bool { false }
}

/// A conference callout: who to call into which room.
public struct ConferenceCalloutRequest: Sendable, Hashable {
    /// The room (1-64 characters, as `callConference(withId:)` takes).
    public var conferenceID: String
    /// The app user to call (`destination` `{"type": "username", "endpoint": ...}`).
    public var userID: String
    /// Custom headers the callee's devices get with the call (`call.incoming`'s `headers`).
    public var headers: [String: String]
    /// What the callee's devices show as the caller (`cli` of the request).
    public var displayName: String?

    public init(conferenceID: String, userID: String, headers: [String: String] = [:], displayName: String? = nil) {
        self.conferenceID = conferenceID
        self.userID = userID
        self.headers = headers
        self.displayName = displayName
    }
}

/// The result of a callout request.
public enum CalloutOutcome: Sendable, Hashable {
    /// The call is placed: the callee is being rung (or pushed).
    case placed(callID: String)
    /// Nothing was placed: the protocol's error code for why (`destination_not_found`,
    /// `destination_unavailable`, `too_many_calls`, `too_large`, ...) and a message.
    case refused(code: SignalingErrorCode, message: String)
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
