/// What the media layer must do for a call. The engine runs no media itself: parleyd
/// performs each instruction on `MediaLegCore` and reports back with a `MediaEvent`.
public enum MediaInstruction: Sendable, Hashable {
    /// Create the caller's leg (ICE-lite, DTLS passive) and answer `offer`, the SDP of
    /// `call.start` (`MediaLegCore.answer(offer:)`). Report `.callerLegReady(sdp:)` with
    /// the answer, or `.legFailed(.caller, reason:)`.
    case answerCaller(callID: String, offer: String)
    /// Create a leg for this callee device and make its offer (`MediaLegCore.makeOffer()`).
    /// Report `.calleeLegReady(device, sdp:)`, or `.legFailed(.callee(device), reason:)`.
    case offerCallee(callID: String, device: Device)
    /// Give the device's SDP answer (`call.answer`) to its leg (`MediaLegCore.acceptAnswer`).
    /// A refused answer is reported as `.legFailed(.callee(device), reason:)`.
    case acceptAnswer(callID: String, device: Device, answer: String)
    /// Forward audio between the caller's leg and this callee device's leg, both ways,
    /// from now on (packets flow once each leg is connected). Report each leg's
    /// `.legConnected` when ICE and DTLS are done.
    case bridge(callID: String, device: Device)
    /// Send DTMF digits (RFC 4733) on `leg`, toward its device.
    case sendDTMF(callID: String, leg: MediaLeg, digits: String)
    /// Close one leg (a callee device that will not take part any more).
    case closeLeg(callID: String, leg: MediaLeg)
    /// The call ended: close every leg it still has and report their statistics to the record.
    case closeAll(callID: String)
}

/// What the media layer reports about a call's legs.
public enum MediaEvent: Sendable, Hashable {
    /// The caller's leg answered the caller's offer with this SDP (sent as `call.media`).
    case callerLegReady(sdp: String)
    /// A callee device's leg made this offer (sent in `call.incoming`).
    case calleeLegReady(Device, sdp: String)
    /// The leg's ICE and DTLS are done: media can flow on it.
    case legConnected(MediaLeg)
    /// The leg could not be set up, or failed later (ICE, DTLS, consent lost).
    case legFailed(MediaLeg, reason: String)
    /// No packets arrived on the leg for the media layer's inactivity time.
    case legInactive(MediaLeg)
}
