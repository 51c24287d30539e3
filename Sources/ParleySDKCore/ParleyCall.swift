/// One call, incoming or outgoing. Its properties are safe to read from any thread; they
/// change on the `callbackQueue` just before the delegate hears of the change.
public final class ParleyCall: @unchecked Sendable {
    // @unchecked: mutable state is in `Locked` values; `client` is only a weak link back.
    private let delegateSlot = Locked(WeakReference())
    /// The built-in system call integration's mediator, heard first: an app's own
    /// `delegate` does not displace it.
    private let integrationSlot = Locked(WeakReference())
    /// More delegates an app added (`addObserver`), heard after `delegate`.
    private let observers = Locked<[WeakReference]>([])
    private let record: Locked<ClientCallRecord>
    private let stats = Locked(ParleyCallStatistics())
    private weak var client: ParleyClient?

    init(record: ClientCallRecord, client: ParleyClient) {
        self.record = Locked(record)
        self.client = client
    }

    /// Hears of this call's progress.
    public weak var delegate: (any ParleyCallDelegate)? {
        get { delegateSlot.current.object as? any ParleyCallDelegate }
        set { delegateSlot.withLock { $0.object = newValue } }
    }

    /// Adds another delegate (held weakly; adding one twice has no effect). Observers hear
    /// every event after `delegate`, in the order they were added, so a UI, a logger and
    /// the app's own CallKit code can all follow one call.
    public func addObserver(_ observer: any ParleyCallDelegate) {
        observers.withLock { list in
            list.removeAll { $0.object == nil }
            if !list.contains(where: { $0.object === observer }) { list.append(WeakReference(object: observer)) }
        }
    }

    /// Removes an observer added with `addObserver(_:)`.
    public func removeObserver(_ observer: any ParleyCallDelegate) {
        observers.withLock { list in list.removeAll { $0.object == nil || $0.object === observer } }
    }

    /// Sets the integration's delegate (`ParleyCallMediator`), heard before everyone else.
    func setIntegrationDelegate(_ delegate: any ParleyCallDelegate) {
        integrationSlot.withLock { $0.object = delegate }
    }

    /// Everyone who hears this call's events, in order: the integration, `delegate`, then
    /// the observers; each once.
    var allDelegates: [any ParleyCallDelegate] {
        var seen: [ObjectIdentifier] = []
        var result: [any ParleyCallDelegate] = []
        let candidates = [integrationSlot.current, delegateSlot.current] + observers.current
        for slot in candidates {
            guard let delegate = slot.object as? any ParleyCallDelegate else { continue }
            let id = ObjectIdentifier(delegate)
            guard !seen.contains(id) else { continue }
            seen.append(id)
            result.append(delegate)
        }
        return result
    }

    /// The call's id (a UUID, lower case), the same on every party's side.
    public var callId: String { record.current.callID }
    /// The other party: a user id, or for a call to or from a phone number or SIP endpoint
    /// its number (E.164, `+46701234567`) or SIP address (`bob@pbx.example.com`, without
    /// `sip:`). `remoteKind` says which.
    public var remoteUserId: String { record.current.remoteUserID }
    /// What the other party is: an app user, a phone number or a SIP endpoint.
    public var remoteKind: ParleyCallRemoteKind { record.current.remoteKind }
    /// For an incoming call, the name the caller set with
    /// `setPushNotificationDisplayName(_:)`, if any; nil for outgoing calls.
    public var remoteDisplayName: String? { record.current.remoteDisplayName }
    /// Who placed the call.
    public var direction: ParleyCallDirection { record.current.direction }
    /// Where the call is.
    public var state: ParleyCallState { record.current.state }
    /// The caller's custom headers.
    public var headers: [String: String] { record.current.headers }
    /// On a call to a phone number or SIP endpoint: the far side's custom SIP headers
    /// (names starting `x-`) from its ringing (18x) and answer (2xx) responses, the
    /// answer's value winning for a name in both. Set before `callDidRing` and
    /// `callDidAnswer` are called; empty until then, and on app-to-app calls.
    public var responseHeaders: [String: String] { record.current.responseHeaders }
    /// Times, and the end cause once ended.
    public var details: ParleyCallDetails { record.current.details }
    /// On a conference call: who talks in the room now, loudest first, as the server last
    /// said (`call(_:didChangeTalkers:)`); empty when nobody talks, and on other calls.
    public var talkers: [ParleyConferenceTalker] { record.current.talkers }
    /// The media leg's figures (about once a second).
    public var statistics: ParleyCallStatistics { stats.current }

    /// Answers an incoming call: the media leg answers the server's offer, then the
    /// server is told. Does nothing for outgoing or ended calls.
    public func answer() {
        client?.answer(callId)
    }

    /// Ends the call: cancels an outgoing call not yet answered, declines an incoming one
    /// not yet answered, or hangs up. `callDidEnd` follows.
    public func hangup() {
        client?.hangup(callId)
    }

    /// Sends DTMF tones for tone dialling on a call to a phone number or SIP endpoint (an
    /// IVR's menu digits, a conference PIN): RFC 4733 telephone events in the call's audio,
    /// 100 ms each, 70 ms apart, one after another, which the server's gateway passes on
    /// to the far side.
    ///
    /// Returns false, sending nothing, where it does not apply: on app-to-app calls (as
    /// in the documented SDK, DTMF is for calls toward the telephone network), when the
    /// call is not established (media not flowing yet, or over), or when `tones` is
    /// empty, longer than 64, or holds anything but `0-9`, `*`, `#` and `A-D`. True means
    /// the tones were handed to the call's media, which sends them in order after tones
    /// sent before; a leg whose far side did not negotiate `telephone-event` sends none.
    /// Digits the far side sends arrive as `call(_:didReceiveDTMF:)`.
    @discardableResult
    public func sendDTMF(_ tones: String) -> Bool {
        guard remoteKind.carriesDTMF, state == .established, Self.isValidDTMF(tones), let client else { return false }
        return client.sendDTMF(callId, tones: tones)
    }

    /// Whether this device holds the call: its last `setHeld(_:completion:)` that the
    /// server accepted asked for hold. Changes just before `callDidChangeHold`.
    public var isHeld: Bool { record.current.isHeld }

    /// Whether the other party holds the call (an app user's `setHeld(true)`, or a SIP far
    /// side's re-INVITE offering `sendonly` or `inactive`). Changes just before
    /// `callDidChangeHold`.
    public var isRemoteHeld: Bool { record.current.isRemoteHeld }

    /// Puts an established call on hold (`held` true) or takes it off hold. The server
    /// tells the other party: an app user's delegate hears `callDidChangeHold`, a SIP far
    /// side gets a re-INVITE offering `a=sendonly` (hold) or `a=sendrecv` (resume), RFC
    /// 3264 §8.4. While a device holds a call to a phone number or SIP endpoint, the
    /// server's gateway sends silence both ways; on an app-to-app call the audio keeps
    /// flowing and the app decides what its user hears and says (mute with
    /// `ParleyAudioController`; CallKit does this for a call it holds).
    ///
    /// `completion` runs on the client's `callbackQueue` with nil once the server accepted
    /// the change (`isHeld` is then `held`, and `callDidChangeHold` follows if it changed),
    /// or with a `ParleyClientError` when it did not: `invalid_state` when the call is not
    /// established (answered and media connected) or is over, `not_implemented` on a
    /// conference call, `request_timeout` without an answer. A refusal never ends the call.
    /// Holding a held call, or resuming one this device does not hold, succeeds and
    /// changes nothing.
    public func setHeld(_ held: Bool, completion: (@Sendable ((any Error)?) -> Void)? = nil) {
        guard let client else {
            completion?(ParleyClientError(code: "not_started", message: "the client is gone"))
            return
        }
        client.setHeld(callId, held: held, completion: completion)
    }

    /// 1-64 of the sixteen DTMF tones (RFC 4733 events 0-15), upper-case letters.
    static func isValidDTMF(_ tones: String) -> Bool {
        let allowed = Set("0123456789*#ABCD")
        return !tones.isEmpty && tones.count <= 64 && tones.allSatisfy { allowed.contains($0) }
    }

    /// Whether this device ended the call (its hangup or `terminateGracefully()`), not
    /// the other party, another device or the server.
    var endedByThisDevice: Bool { record.current.endedByThisDevice }

    func update(_ newRecord: ClientCallRecord) { record.withLock { $0 = newRecord } }
    func update(talkers: [ParleyConferenceTalker]) { record.withLock { $0.talkers = talkers } }
    func update(_ newStatistics: ParleyCallStatistics) { stats.withLock { $0 = newStatistics } }
}
