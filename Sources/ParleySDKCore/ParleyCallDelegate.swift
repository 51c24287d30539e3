/// A call's progress, on the client's `callbackQueue`, in the protocol's order: an
/// outgoing call may progress, ring, be answered and be established (any of these may be
/// skipped when it ends early); an incoming call may be answered and established; every
/// call ends exactly once, last. Every method has an empty default.
public protocol ParleyCallDelegate: AnyObject {
    /// The server is reaching the callee (outgoing).
    func callDidProgress(_ call: ParleyCall)
    /// A callee device rings (outgoing).
    func callDidRing(_ call: ParleyCall)
    /// The call was answered.
    func callDidAnswer(_ call: ParleyCall)
    /// Media flows both ways.
    func callDidEstablish(_ call: ParleyCall)
    /// The call is over; `call.details` has the cause and times.
    func callDidEnd(_ call: ParleyCall)
    /// The far side of a call to a phone number or SIP endpoint sent DTMF `digits` (1-32
    /// of `0-9 * # A-D`, in the order sent; a key pressed there, relayed by the server's
    /// gateway from RFC 4733 events or SIP INFO). Between `callDidRing` or
    /// `callDidAnswer` and `callDidEnd`, in order with them.
    func call(_ call: ParleyCall, didReceiveDTMF digits: String)
    /// On a conference call: who talks in the room changed; `talkers` are the talkers
    /// now, loudest first, this participant included when it talks (empty: nobody
    /// talks). The server sends a change at most ten times a second; `call.talkers` holds
    /// the same list. Between `callDidEstablish` and `callDidEnd`, in order with them.
    func call(_ call: ParleyCall, didChangeTalkers talkers: [ParleyConferenceTalker])
    /// The call's hold changed: this device's own (`setHeld(_:completion:)` accepted,
    /// `call.isHeld`) or the other party's (`call.isRemoteHeld`). Between
    /// `callDidEstablish` and `callDidEnd`, in order with them.
    func callDidChangeHold(_ call: ParleyCall)
}

extension ParleyCallDelegate {
    /// Does nothing.
    public func callDidProgress(_ call: ParleyCall) {}
    /// Does nothing.
    public func callDidRing(_ call: ParleyCall) {}
    /// Does nothing.
    public func callDidAnswer(_ call: ParleyCall) {}
    /// Does nothing.
    public func callDidEstablish(_ call: ParleyCall) {}
    /// Does nothing.
    public func callDidEnd(_ call: ParleyCall) {}
    /// Does nothing.
    public func call(_ call: ParleyCall, didReceiveDTMF digits: String) {}
    /// Does nothing.
    public func call(_ call: ParleyCall, didChangeTalkers talkers: [ParleyConferenceTalker]) {}
    /// Does nothing.
    public func callDidChangeHold(_ call: ParleyCall) {}
}

/// Hears of incoming calls, on the client's `callbackQueue`.
public protocol ParleyCallClientDelegate: AnyObject {
    /// A call for this user. It already rings here (the server was told); call `answer()`
    /// or `hangup()` (which declines it), and set its `delegate` to follow it.
    func client(_ client: ParleyCallClient, didReceiveIncomingCall call: ParleyCall)
}
