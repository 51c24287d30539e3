/// Fans the client's call events out to any number of observers, held weakly, so the
/// system-call service, the app's UI and its logging can all follow every call. It hears
/// the client and every call it sees through a slot of their own, before their
/// `delegate`: an app that sets `callClient.delegate` or `call.delegate` (as the guides
/// do) adds a listener and displaces nothing.
public final class ParleyCallMediator: ParleyCallClientDelegate, ParleyCallDelegate, @unchecked Sendable {
    // @unchecked: `observers` is `Locked`; `client` is only read.
    private let observers = Locked<[WeakReference]>([])
    /// The client whose calls are mediated.
    public weak var client: ParleyClient?

    /// Hears `client`'s incoming calls (before `callClient.delegate`, which stays the app's).
    public init(client: ParleyClient) {
        self.client = client
        client.callClient.integrationDelegate = self
    }

    /// Adds `observer` (held weakly; adding it twice has no effect).
    public func addObserver(_ observer: any ParleyCallObserver) {
        observers.withLock { list in
            list.removeAll { $0.object == nil }
            if !list.contains(where: { $0.object === observer }) { list.append(WeakReference(object: observer)) }
        }
    }

    /// Removes `observer`.
    public func removeObserver(_ observer: any ParleyCallObserver) {
        observers.withLock { list in list.removeAll { $0.object == nil || $0.object === observer } }
    }

    /// The live observers, in the order they were added.
    var currentObservers: [any ParleyCallObserver] {
        observers.current.compactMap { $0.object as? any ParleyCallObserver }
    }

    /// Places a call to an app user through the client and follows it.
    public func callUser(withId userId: String, headers: [String: String] = [:]) -> Result<ParleyCall, any Error> {
        follow { $0.callUser(withId: userId, headers: headers) }
    }

    /// Places a call to a phone number through the client (`callPhoneNumber(_:headers:)`)
    /// and follows it.
    public func callPhoneNumber(_ phoneNumber: String, headers: [String: String] = [:]) -> Result<ParleyCall, any Error> {
        follow { $0.callPhoneNumber(phoneNumber, headers: headers) }
    }

    /// Places a call to a SIP endpoint through the client (`callSIP(_:headers:)`) and follows it.
    public func callSIP(_ sipIdentity: String, headers: [String: String] = [:]) -> Result<ParleyCall, any Error> {
        follow { $0.callSIP(sipIdentity, headers: headers) }
    }

    /// Joins a conference room through the client (`callConference(withId:headers:)`) and follows it.
    public func callConference(withId conferenceId: String, headers: [String: String] = [:]) -> Result<ParleyCall, any Error> {
        follow { $0.callConference(withId: conferenceId, headers: headers) }
    }

    /// Places a call with `place` and, when it was placed, hears its events and tells the observers.
    private func follow(_ place: (ParleyCallClient) -> Result<ParleyCall, any Error>) -> Result<ParleyCall, any Error> {
        guard let client else { return .failure(ParleyClientError(code: "not_started", message: "the client is gone")) }
        let result = place(client.callClient)
        if case .success(let call) = result {
            call.setIntegrationDelegate(self)
            // In order with the client's own delegate calls, so it precedes the call's events.
            client.deliver { [self] in
                for observer in currentObservers { observer.mediator(self, didStartOutgoingCall: call) }
            }
        }
        return result
    }

    public func client(_ client: ParleyCallClient, didReceiveIncomingCall call: ParleyCall) {
        call.setIntegrationDelegate(self)
        for observer in currentObservers { observer.mediator(self, didReceiveIncomingCall: call) }
    }

    public func callDidProgress(_ call: ParleyCall) { for o in currentObservers { o.callDidProgress(call) } }
    public func callDidRing(_ call: ParleyCall) { for o in currentObservers { o.callDidRing(call) } }
    public func callDidAnswer(_ call: ParleyCall) { for o in currentObservers { o.callDidAnswer(call) } }
    public func callDidEstablish(_ call: ParleyCall) { for o in currentObservers { o.callDidEstablish(call) } }
    public func callDidEnd(_ call: ParleyCall) { for o in currentObservers { o.callDidEnd(call) } }
    public func call(_ call: ParleyCall, didReceiveDTMF digits: String) { for o in currentObservers { o.call(call, didReceiveDTMF: digits) } }
    public func call(_ call: ParleyCall, didChangeTalkers talkers: [ParleyConferenceTalker]) {
        for o in currentObservers { o.call(call, didChangeTalkers: talkers) }
    }
    public func callDidChangeHold(_ call: ParleyCall) { for o in currentObservers { o.callDidChangeHold(call) } }
}
