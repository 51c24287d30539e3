public import ParleySignaling

/// An event that moves a call's state machine. parleyd turns requests (`call.ack`,
/// `call.answer`, ...) into these through `CallRegistry`, or feeds a machine directly.
public enum CallInput: Sendable, Hashable {
    /// `call.ack` from a callee device: it is ringing. With `earlyAnswer`, its SDP answer
    /// to the leg's offer, given while it rings so that its leg connects before the answer.
    case acknowledged(Device, earlyAnswer: String? = nil)
    /// `call.answer` from a callee device, with its SDP answer to the leg's offer, or nil
    /// when it gave that answer early (in `call.ack`).
    case answered(Device, sdp: String?)
    /// `call.decline` from a callee device.
    case declined(Device)
    /// `call.hangup` from the caller or a callee device.
    case hungUp(Device)
    /// Hang up on behalf of the application (REST `DELETE /v1/calls/{id}`): `canceled`
    /// before the answer, `hungUp` after.
    case serverHangup
    /// `call.dtmf` from a party's device on an established call.
    case dtmf(Device, digits: String)
    /// `call.hold` from a party's device on an established call: hold (`held` true) or
    /// resume it.
    case hold(Device, held: Bool)
    /// A report of the media layer about one of the call's legs.
    case media(MediaEvent)
    /// A device woken by this call's push relayed its (verified) payload: it joins the
    /// ring set and counts as having acknowledged the call.
    case pushRelayed(Device)
    /// A party's connection dropped. A ringing callee device leaves the ring set at once;
    /// the caller or the answering device has `reconnectGrace` to resume.
    case deviceDisconnected(Device)
    /// A party's connection is gone for good (a new session without resume, or its
    /// grace ran out elsewhere): a ringing callee device leaves the ring set, the caller
    /// or the answering device ends the call with `inactive`.
    case deviceLost(Device)
    /// A party's connection came back within its grace time (session resumed).
    case deviceReconnected(Device)
    /// The router's decision for a call in its routing state (`CallRouter`). A decision
    /// for a call already routed, or ended, is ignored.
    case routed(RoutingDecision)
    /// What the SIP side reports about the call's SIP party (a call routed by `dialSIP` or
    /// `dialNumber`): its INVITE's answers, the far side's BYE. A report about another party,
    /// or one that no longer fits (a 180 after the answer), is ignored.
    case sip(SIPParty, SIPCallEvent)
    /// The server failed for this call: it ends with `error` and this code and text
    /// (e.g. `internal_error` when the server stops).
    case failed(SignalingMessage.CallError)
}
