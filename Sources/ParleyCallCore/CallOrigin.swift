/// Who places a call: a device of the SDK (`call.start`), or the server on the
/// application's behalf (a REST callout).
///
/// The state machine tells the origin about the call through its `party`: a device hears
/// every step as frames; a room that calls a user out (a conference callout) has no
/// connection and no leg of its own, so notifications to it are dropped, and the callee's
/// leg is the one seated in the room's mixer once it answers.
public enum CallOrigin: Sendable, Hashable {
    /// A device started the call with `call.start`, with its SDP offer.
    case device(Device)
    /// A conference room calls a user to bring them in (`conferenceCallout`): the callee's
    /// answered leg joins the room's mixer.
    case room(RoomParty)
    /// A call that came in over SIP (a trunk's or a SIP peer's INVITE, with its SDP offer):
    /// the party is the far side, told through the SIP user agent, which answers the INVITE
    /// (180, 200) and ends it (a final response, BYE) as the call goes.
    case sip(SIPParty)

    /// The caller's device, for a call a device started.
    public var device: Device? {
        if case .device(let device) = self { return device }
        return nil
    }

    /// The origin as the party notifications to the caller go to.
    public var party: Party {
        switch self {
        case .device(let device): .device(device)
        case .room(let room): .room(room)
        case .sip(let party): .sip(party)
        }
    }
}
