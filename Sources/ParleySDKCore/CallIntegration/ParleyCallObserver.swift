/// Hears every call event the mediator forwards, on the client's `callbackQueue`. Every
/// method has an empty default.
public protocol ParleyCallObserver: AnyObject {
    /// A new incoming call (also one relayed from a push that ended already; its
    /// `callDidEnd` follows at once).
    func mediator(_ mediator: ParleyCallMediator, didReceiveIncomingCall call: ParleyCall)
    /// An outgoing call placed through the mediator.
    func mediator(_ mediator: ParleyCallMediator, didStartOutgoingCall call: ParleyCall)
    /// The server is reaching the callee (outgoing).
    func callDidProgress(_ call: ParleyCall)
    /// A callee device rings (outgoing).
    func callDidRing(_ call: ParleyCall)
    /// The call was answered.
    func callDidAnswer(_ call: ParleyCall)
    /// Media flows both ways.
    func callDidEstablish(_ call: ParleyCall)
    /// The call is over.
    func callDidEnd(_ call: ParleyCall)
    /// The far side of a call to a phone number or SIP endpoint sent DTMF `digits`.
    func call(_ call: ParleyCall, didReceiveDTMF digits: String)
    /// On a conference call: the room's talkers now, loudest first (empty: nobody).
    func call(_ call: ParleyCall, didChangeTalkers talkers: [ParleyConferenceTalker])
    /// The call's hold changed (`call.isHeld`, `call.isRemoteHeld`).
    func callDidChangeHold(_ call: ParleyCall)
}

extension ParleyCallObserver {
    /// Does nothing.
    public func mediator(_ mediator: ParleyCallMediator, didReceiveIncomingCall call: ParleyCall) {}
    /// Does nothing.
    public func mediator(_ mediator: ParleyCallMediator, didStartOutgoingCall call: ParleyCall) {}
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
