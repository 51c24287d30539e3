/// What the media layer must do for a call. The engine runs no media itself: parleyd
/// performs each instruction on `MediaLegCore` and reports back with a `MediaEvent`.
public enum MediaInstruction: Sendable, Hashable {
    /// Create the call's media with `topology` (a relay between devices, a gateway toward a
    /// SIP party), then the caller's leg (ICE-lite, DTLS passive), and answer `offer`, the
    /// SDP of `call.start` (`MediaLegCore.answer(offer:)`). Report `.callerLegReady(sdp:)`
    /// with the answer, or `.legFailed(.caller, reason:)`.
    case answerCaller(callID: String, offer: String, topology: MediaTopologyKind)
    /// Create the caller's leg in the mixer of this conference room (of the call's
    /// application; created on its first participant, closed after its last), answer
    /// `offer` and mix the leg from now on. Reported as for `answerCaller`; the room itself
    /// has no leg.
    case joinRoom(callID: String, offer: String, room: String)
    /// Create the caller's leg of a call that came in over SIP: a plain RTP leg answering
    /// `offer` (the INVITE's SDP), in a gateway toward the callee device's WebRTC leg
    /// (`room` nil), or in the mixer of this conference room. Reported as for `answerCaller`.
    case answerSIPCaller(callID: String, offer: String, room: String?)
    /// Seat a conference callout's call in this conference room (of the call's application;
    /// created on its first participant, closed after its last) without a leg of its own:
    /// the room is the caller. The legs its callees are offered (`offerCallee`) are made in
    /// the room's mixer, and the one of the callee that answers joins the mix at `bridge`.
    /// Nothing is reported for the seat itself; a room that cannot be made fails each
    /// callee's leg (`.legFailed(.callee(party), reason:)`).
    case seatCallout(callID: String, room: String)
    /// Create a leg for this callee party and make its offer (`MediaLegCore.makeOffer()`):
    /// a WebRTC leg for a device, a plain RTP leg for a SIP party. Report
    /// `.calleeLegReady(party, sdp:)`, or `.legFailed(.callee(party), reason:)`.
    case offerCallee(callID: String, party: Party)
    /// Give the party's SDP answer (`call.ack` or `call.answer`; a SIP party's first SDP) to
    /// its leg (`MediaLegCore.acceptAnswer`).
    /// A refused answer is reported as `.legFailed(.callee(party), reason:)`.
    case acceptAnswer(callID: String, party: Party, answer: String)
    /// Forward audio between the caller's leg and this callee party's leg, both ways,
    /// from now on (packets flow once each leg is connected). Report each leg's
    /// `.legConnected` when ICE and DTLS are done.
    case bridge(callID: String, party: Party)
    /// Send DTMF digits (RFC 4733) on `leg`, toward its party (a gateway call's; a relay
    /// call sends none).
    case sendDTMF(callID: String, leg: CallLegID, digits: String)
    /// The call's hold changed (docs/calls.md, "Hold"): `held` while either party holds,
    /// so that a leg whose far side stopped sending is not taken for dead; `silenced`
    /// while a device party holds, so that a gateway forwards silence between the legs in
    /// both directions instead of their audio (a relay between devices is left alone:
    /// the holding device's SDK stops its own audio).
    case setHold(callID: String, held: Bool, silenced: Bool)
    /// Close one leg (a callee party that will not take part any more).
    case closeLeg(callID: String, leg: CallLegID)
    /// The call ended: close every leg it still has and report their statistics to the record.
    case closeAll(callID: String)
}

/// What the media layer reports about a call's legs.
public enum MediaEvent: Sendable, Hashable {
    /// The caller's leg answered the caller's offer with this SDP (sent as `call.media`).
    case callerLegReady(sdp: String)
    /// A callee party's leg made this offer (sent in its `call.incoming`, or its INVITE).
    case calleeLegReady(Party, sdp: String)
    /// The leg is connected, so media can flow on it: ICE and DTLS done, or a plain RTP
    /// leg ready (at once, or once it latched: the media layer decides).
    case legConnected(CallLegID)
    /// The leg could not be set up, or failed later (ICE, DTLS, consent lost).
    case legFailed(CallLegID, reason: String)
    /// No packets arrived on the leg for the media layer's inactivity time.
    case legInactive(CallLegID)
    /// The leg's party sent these DTMF digits (RFC 4733 events on a gateway call's leg),
    /// each reported once, as its event begins (or ends, when its beginning was lost).
    case dtmfReceived(CallLegID, digits: String)
}
