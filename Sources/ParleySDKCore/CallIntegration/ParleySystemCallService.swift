public import Foundation

/// The built-in system-call integration (what apps otherwise write by hand around
/// CallKit): reports Parley calls to a `SystemCallProvider`, carries out the system's
/// actions on them, maps end causes to end reasons, and runs call audio only while the
/// system's audio session is active.
///
/// ```swift
/// let mediator = ParleyCallMediator(client: client)
/// let service = ParleySystemCallService(client: client, mediator: mediator,
///                                       provider: CallKitSystemCallProvider(localizedName: "Chat"))
/// // PushKit: report first, then relay (the service does both):
/// service.reportIncomingPush(payload.dictionaryPayload) { _ in completion() }
/// ```
///
/// Thread-safe. Provider callbacks arrive on the provider's queue, call events on the
/// client's `callbackQueue`; the service's state is behind one lock, never held while
/// calling out.
public final class ParleySystemCallService: SystemCallProviderDelegate, ParleyCallObserver, @unchecked Sendable {
    // @unchecked: mutable state is in `state` (Locked); the rest is immutable.

    /// One system call and what is pending on it.
    private struct Entry {
        var callID: String?
        var call: ParleyCall?
        /// Answer action waiting for the call to arrive (answered from the lock screen
        /// before `call.incoming` came).
        var pendingAnswer: SystemCallAction?
        /// Hang up as soon as the call arrives (ended by the user or refused by the system).
        var hangUpOnArrival = false
        /// The system already ended it (end action or reset): do not report its end.
        var endedBySystem = false
        var reportedConnecting = false
        var reportedConnected = false
    }

    private struct State {
        var entries: [UUID: Entry] = [:]
        /// Calls the system refused (Do Not Disturb ...) or the user ended before they
        /// arrived: hung up when they do. Bounded, oldest dropped.
        var refusedCallIDs: [String] = []
        /// Calls this device ended without the system's UI, whose end action was requested:
        /// fulfilled when it comes. Bounded, oldest dropped.
        var localEnds: [UUID] = []
    }

    /// Call id <-> system UUID.
    public let registry: ParleyCallRegistry
    /// The system side.
    public let provider: any SystemCallProvider
    private let control: any SystemCallControl
    private let state = Locked(State())

    /// The integration for `client`, following its calls through `mediator`. Call audio
    /// is held off until the provider activates the audio session.
    public convenience init(client: ParleyClient, mediator: ParleyCallMediator, provider: any SystemCallProvider) {
        self.init(control: ClientCallControl(client: client, mediator: mediator), provider: provider, registry: ParleyCallRegistry())
        mediator.addObserver(self)
    }

    init(control: any SystemCallControl, provider: any SystemCallProvider, registry: ParleyCallRegistry) {
        self.control = control
        self.provider = provider
        self.registry = registry
        control.setAudioSessionActive(false)
        provider.setDelegate(self)
    }

    /// The system UUID of a Parley call, if the system knows it.
    public func systemCallUUID(forCallId callId: String) -> UUID? { registry.uuid(forCallId: callId) }

    // MARK: Pushes

    /// A VoIP push arrived: report the call to the system first (iOS requires it before
    /// anything else), then relay the push so the call arrives. A second push for the same
    /// call is reported under the same UUID, which the system refuses as a duplicate, so
    /// the call shows once and is relayed once. A forged push is still reported, as iOS demands of
    /// every VoIP push, and ended at once as failed; an expired one ends as unanswered.
    /// `completion` runs once the system has the report (PushKit's completion).
    public func reportIncomingPush(_ payload: [AnyHashable: Any], completion: @escaping @Sendable ((any Error)?) -> Void) {
        let query = control.queryPush(payload)
        guard query.isCall else {
            completion(ParleyClientError(code: "push_payload_invalid", message: "not a Parley push"))
            return
        }
        guard let call = query.callResult else {
            // Forged or foreign: nothing to relay, but the system must see a call.
            let uuid = UUID()
            provider.reportNewIncomingCall(with: uuid, update: SystemCallUpdate(remoteHandle: "unknown")) { [provider] error in
                if error == nil { provider.reportCall(with: uuid, endedAt: Date(), reason: .failed) }
                completion(ParleyClientError(code: "push_payload_invalid", message: "the push does not verify"))
            }
            return
        }
        // Only the JWS is relayed; a plain copy can cross to the provider's queue.
        let relayed: [String: String] = [PushPayloadVerifier.payloadKey: PushPayloadVerifier.token(in: payload) ?? ""]
        let (uuid, isNew) = registry.claim(callId: call.callId)
        let update = SystemCallUpdate(remoteHandle: call.remoteUserId, localizedCallerName: call.displayName, hasVideo: call.isVideoOffered)
        guard isNew else {
            // iOS wants a report for every VoIP push: repeat it under the same UUID, which
            // the system refuses as a duplicate (the call shows once); nothing else changes.
            provider.reportNewIncomingCall(with: uuid, update: update) { _ in completion(nil) }
            return
        }
        state.withLock { $0.entries[uuid] = Entry(callID: call.callId) }
        provider.reportNewIncomingCall(with: uuid, update: update) { [self] error in
            if let error {
                pushReportRefused(uuid: uuid, callID: call.callId, payload: relayed)
                completion(error)
                return
            }
            if !query.isValid {
                // Expired: the call is over on the server.
                dropEntry(uuid: uuid, callID: call.callId)
                provider.reportCall(with: uuid, endedAt: Date(), reason: .unanswered)
                completion(nil)
                return
            }
            if case .failure(let relayError) = control.relayPush(relayed) {
                dropEntry(uuid: uuid, callID: call.callId)
                provider.reportCall(with: uuid, endedAt: Date(), reason: .failed)
                completion(relayError)
                return
            }
            completion(nil)
        }
    }

    // MARK: App-initiated actions

    /// Starts an outgoing call through the system (a start action), so it shows in the
    /// system's call list. `completion` gets the call once the action is performed.
    public func startCall(toUserId userId: String, headers: [String: String] = [:],
                          completion: @escaping @Sendable (Result<ParleyCall, any Error>) -> Void) {
        startCall(to: userId, kind: .user, headers: headers, completion: completion)
    }

    /// Starts an outgoing call to a phone number through the system, as
    /// `startCall(toUserId:headers:completion:)`; the call is placed with
    /// `callPhoneNumber(_:headers:)` when the start action is performed (its checks fail
    /// the action and reach `completion`).
    public func startCall(toPhoneNumber phoneNumber: String, headers: [String: String] = [:],
                          completion: @escaping @Sendable (Result<ParleyCall, any Error>) -> Void) {
        startCall(to: phoneNumber, kind: .phone, headers: headers, completion: completion)
    }

    /// Starts an outgoing call to a SIP endpoint through the system, as
    /// `startCall(toUserId:headers:completion:)`; the call is placed with
    /// `callSIP(_:headers:)` when the start action is performed.
    public func startCall(toSIP sipIdentity: String, headers: [String: String] = [:],
                          completion: @escaping @Sendable (Result<ParleyCall, any Error>) -> Void) {
        startCall(to: sipIdentity, kind: .sip, headers: headers, completion: completion)
    }

    /// Joins a conference room through the system, as `startCall(toUserId:headers:completion:)`;
    /// the call is placed with `callConference(withId:headers:)` when the start action is performed.
    public func startCall(toConference conferenceId: String, headers: [String: String] = [:],
                          completion: @escaping @Sendable (Result<ParleyCall, any Error>) -> Void) {
        startCall(to: conferenceId, kind: .conference, headers: headers, completion: completion)
    }

    private func startCall(to address: String, kind: ParleyCallRemoteKind, headers: [String: String],
                           completion: @escaping @Sendable (Result<ParleyCall, any Error>) -> Void) {
        let uuid = UUID()
        state.withLock { $0.entries[uuid] = Entry() }
        pendingStarts.withLock { $0[uuid] = PendingStart(address: address, kind: kind, headers: headers, completion: completion) }
        provider.request(.start(handle: address, video: false), callUUID: uuid) { [self] error in
            guard let error else { return }
            state.withLock { _ = $0.entries.removeValue(forKey: uuid) }
            if let start = pendingStarts.withLock({ $0.removeValue(forKey: uuid) }) { start.completion(.failure(error)) }
        }
    }

    /// Ends a call through the system (an end action).
    public func endCall(_ call: ParleyCall) {
        guard let uuid = registry.uuid(forCallId: call.callId) else {
            control.hangupCall(call.callId)
            return
        }
        provider.request(.end, callUUID: uuid) { [control] error in
            // The system does not know the call (any more): hang up directly.
            if error != nil { control.hangupCall(call.callId) }
        }
    }

    /// A start action asked for and not yet performed: whom to call, and who waits.
    private struct PendingStart {
        var address: String
        var kind: ParleyCallRemoteKind
        var headers: [String: String]
        var completion: @Sendable (Result<ParleyCall, any Error>) -> Void
    }

    private let pendingStarts = Locked<[UUID: PendingStart]>([:])

    // MARK: SystemCallProviderDelegate

    public func perform(_ action: SystemCallAction) {
        if action.kind == .end, state.withLock({ state in state.localEnds.firstIndex(of: action.callUUID).map { state.localEnds.remove(at: $0) } }) != nil {
            // The end action this service asked for after the call ended here: done already.
            return action.fulfill()
        }
        switch action.kind {
        case .start:
            performStart(action)
        case .answer:
            let call: ParleyCall? = state.withLock { state in
                guard var entry = state.entries[action.callUUID] else { return nil }
                if entry.call == nil { entry.pendingAnswer = action }
                state.entries[action.callUUID] = entry
                return entry.call
            }
            guard state.current.entries[action.callUUID] != nil else { return action.fail() }
            if let call {
                control.answerCall(call.callId)
                action.fulfill()
            }
        case .end:
            let (known, call, callID): (Bool, ParleyCall?, String?) = state.withLock { state in
                guard var entry = state.entries[action.callUUID] else { return (false, nil, nil) }
                entry.endedBySystem = true
                entry.pendingAnswer?.fail()
                entry.pendingAnswer = nil
                if entry.call == nil, let callID = entry.callID {
                    // Not arrived yet: hang up when it does.
                    Self.remember(callID, in: &state)
                }
                state.entries[action.callUUID] = entry
                return (true, entry.call, entry.callID)
            }
            guard known else { return action.fail() }
            if let call {
                control.hangupCall(call.callId)
            } else if let callID {
                // Arrives later (or never): forget the system call now.
                dropEntry(uuid: action.callUUID, callID: callID, keepRefusal: true)
            } else {
                state.withLock { _ = $0.entries.removeValue(forKey: action.callUUID) }
            }
            action.fulfill()
        case .setHeld(let held):
            // Only a call that arrived can be held; the server's answer decides the action.
            guard let call = state.current.entries[action.callUUID]?.call else { return action.fail() }
            control.setHeld(call, held: held) { error in
                if error == nil { action.fulfill() } else { action.fail() }
            }
        case .setMuted(let muted):
            guard state.current.entries[action.callUUID] != nil else { return action.fail() }
            control.setMuted(muted)
            action.fulfill()
        }
    }

    private func performStart(_ action: SystemCallAction) {
        guard let start = pendingStarts.withLock({ $0.removeValue(forKey: action.callUUID) }) else { return action.fail() }
        switch control.placeCall(to: start.address, kind: start.kind, headers: start.headers) {
        case .success(let call):
            registry.link(uuid: action.callUUID, callId: call.callId)
            registry.attach(call)
            state.withLock { state in
                var entry = state.entries[action.callUUID] ?? Entry()
                entry.callID = call.callId
                entry.call = call
                state.entries[action.callUUID] = entry
            }
            action.fulfill()
            start.completion(.success(call))
        case .failure(let error):
            state.withLock { _ = $0.entries.removeValue(forKey: action.callUUID) }
            action.fail()
            start.completion(.failure(error))
        }
    }

    public func providerDidReset() {
        let calls: [ParleyCall] = state.withLock { state in
            let calls = state.entries.values.compactMap(\.call)
            for entry in state.entries.values {
                entry.pendingAnswer?.fail()
                if entry.call == nil, let callID = entry.callID { Self.remember(callID, in: &state) }
            }
            state.entries = [:]
            return calls
        }
        registry.removeAll()
        control.setAudioSessionActive(false)
        for call in calls { control.hangupCall(call.callId) }
    }

    public func didActivateAudioSession() { control.setAudioSessionActive(true) }
    public func didDeactivateAudioSession() { control.setAudioSessionActive(false) }

    // MARK: ParleyCallObserver

    public func mediator(_ mediator: ParleyCallMediator, didReceiveIncomingCall call: ParleyCall) {
        incomingCallArrived(call)
    }

    /// A call from the client, whether announced by a push or by a live connection.
    func incomingCallArrived(_ call: ParleyCall) {
        enum Next { case report(UUID), answer(SystemCallAction), hangUp, nothing }
        let callID = call.callId
        let next: Next = state.withLock { state in
            if let index = state.refusedCallIDs.firstIndex(of: callID) {
                state.refusedCallIDs.remove(at: index)
                return .hangUp
            }
            if let uuid = registry.uuid(forCallId: callID), var entry = state.entries[uuid] {
                entry.call = call
                registry.attach(call)
                let pending = entry.pendingAnswer
                entry.pendingAnswer = nil
                state.entries[uuid] = entry
                return pending.map { .answer($0) } ?? .nothing
            }
            let (uuid, isNew) = registry.claim(callId: callID)
            guard isNew else { return .nothing }
            state.entries[uuid] = Entry(callID: callID, call: call)
            registry.attach(call)
            return .report(uuid)
        }
        switch next {
        case .hangUp:
            control.hangupCall(callID)
        case .answer(let action):
            control.answerCall(callID)
            action.fulfill()
        case .nothing:
            break
        case .report(let uuid):
            guard call.state != .ended else {
                // Arrived already over (a late relay): nothing to show.
                dropEntry(uuid: uuid, callID: callID)
                return
            }
            let update = SystemCallUpdate(
                remoteHandle: call.remoteUserId, localizedCallerName: call.remoteDisplayName, hasVideo: call.details.isVideoOffered)
            provider.reportNewIncomingCall(with: uuid, update: update) { [self] error in
                if error != nil { incomingReportFailed(uuid: uuid, callID: callID) }
            }
        }
    }

    public func callDidProgress(_ call: ParleyCall) { outgoingProgress(call, connected: false) }
    public func callDidRing(_ call: ParleyCall) { outgoingProgress(call, connected: false) }
    public func callDidAnswer(_ call: ParleyCall) { outgoingProgress(call, connected: true) }
    public func callDidEstablish(_ call: ParleyCall) { outgoingProgress(call, connected: true) }

    public func callDidEnd(_ call: ParleyCall) {
        guard let uuid = registry.uuid(forCallId: call.callId) else { return }
        let details = call.details
        let reason = Self.endReason(cause: details.endCause, direction: call.direction,
                                    wasAnswered: details.answeredTime != nil || details.establishedTime != nil,
                                    endedByThisDevice: call.endedByThisDevice)
        let entry = state.withLock { state -> Entry? in
            let entry = state.entries.removeValue(forKey: uuid)
            if let entry, !entry.endedBySystem, reason == nil {
                state.localEnds.append(uuid)
                if state.localEnds.count > 64 { state.localEnds.removeFirst() }
            }
            return entry
        }
        registry.remove(callId: call.callId)
        entry?.pendingAnswer?.fail()
        guard let entry, !entry.endedBySystem else { return }
        guard let reason else {
            // Ended here without the system's UI (the app called hangup()): end it the way
            // the user's own end is, with an end action, not as if the far end had hung up.
            provider.request(.end, callUUID: uuid) { [self] error in
                if error != nil { state.withLock { $0.localEnds.removeAll { $0 == uuid } } }
            }
            return
        }
        provider.reportCall(with: uuid, endedAt: details.endedTime ?? Date(), reason: reason)
    }

    /// How a call's end is told to the system: from who ended it and where it was, not
    /// from the cause alone. `nil` when this device ended it (its hangup, or
    /// `terminateGracefully()`): that is an end action (`request(.end)`), the user's own
    /// end, for which the system has no ended reason. Otherwise (Apple's definitions:
    /// `remoteEnded` "the remote party explicitly ended the call", `unanswered` "never
    /// started connecting and was never explicitly ended"):
    ///
    /// - `otherDeviceAnswered`: `.answeredElsewhere`;
    /// - `denied`: an incoming call declined by another device of this user is
    ///   `.declinedElsewhere`, an outgoing one the callee declined `.remoteEnded`;
    /// - `hungUp`, `canceled` (by the other party, or the app's backend): `.remoteEnded`;
    /// - `timeout`: `.unanswered` if it was never answered (the ring timeout), else
    ///   `.failed` (the service ended it at its maximum length);
    /// - `noAnswer`: `.unanswered`;
    /// - `inactive` (media or connection lost), `error`, `none`: `.failed`.
    public static func endReason(cause: ParleyCallEndCause, direction: ParleyCallDirection, wasAnswered: Bool,
                                 endedByThisDevice: Bool) -> SystemCallEndReason? {
        if endedByThisDevice, [.hungUp, .canceled, .denied].contains(cause) { return nil }
        switch cause {
        case .otherDeviceAnswered: return .answeredElsewhere
        case .denied: return direction == .incoming ? .declinedElsewhere : .remoteEnded
        case .hungUp, .canceled: return .remoteEnded
        case .timeout: return wasAnswered ? .failed : .unanswered
        case .noAnswer: return .unanswered
        case .inactive, .error, .none: return .failed
        }
    }

    // MARK: Helpers

    private func outgoingProgress(_ call: ParleyCall, connected: Bool) {
        guard call.direction == .outgoing, let uuid = registry.uuid(forCallId: call.callId) else { return }
        let (connecting, connect) = state.withLock { state -> (Bool, Bool) in
            guard var entry = state.entries[uuid] else { return (false, false) }
            let connecting = !entry.reportedConnecting
            let connect = connected && !entry.reportedConnected
            entry.reportedConnecting = true
            entry.reportedConnected = entry.reportedConnected || connected
            state.entries[uuid] = entry
            return (connecting, connect)
        }
        if connecting { provider.reportOutgoingCall(with: uuid, startedConnectingAt: call.details.progressedTime ?? Date()) }
        if connect { provider.reportOutgoingCall(with: uuid, connectedAt: call.details.answeredTime ?? Date()) }
    }

    /// The system refused to show a pushed call (Do Not Disturb, blocked, a call in
    /// progress): the caller must not be left ringing. A call already here is hung up
    /// (declined); one not here yet is relayed and declined the moment it arrives, never
    /// delivered (`declinePushNotification`), so the caller's call ends `denied` at once.
    private func pushReportRefused(uuid: UUID, callID: String, payload: [String: String]) {
        let call: ParleyCall? = state.withLock { state in
            let entry = state.entries.removeValue(forKey: uuid)
            entry?.pendingAnswer?.fail()
            return entry?.call
        }
        registry.remove(callId: callID)
        if let call {
            control.hangupCall(call.callId)
        } else {
            // A failure means the push expired meanwhile: the call is over on the server.
            _ = control.declinePush(payload)
        }
    }

    /// The system refused to show the call (Do Not Disturb, blocked): hang it up now or
    /// when it arrives, and forget it.
    private func incomingReportFailed(uuid: UUID, callID: String) {
        let call: ParleyCall? = state.withLock { state in
            let entry = state.entries.removeValue(forKey: uuid)
            entry?.pendingAnswer?.fail()
            if entry?.call == nil { Self.remember(callID, in: &state) }
            return entry?.call
        }
        registry.remove(callId: callID)
        if let call { control.hangupCall(call.callId) }
    }

    private func dropEntry(uuid: UUID, callID: String, keepRefusal: Bool = false) {
        state.withLock { state in
            state.entries[uuid] = nil
            if !keepRefusal { state.refusedCallIDs.removeAll { $0 == callID } }
        }
        registry.remove(callId: callID)
    }

    private static func remember(_ callID: String, in state: inout State) {
        guard !state.refusedCallIDs.contains(callID) else { return }
        state.refusedCallIDs.append(callID)
        if state.refusedCallIDs.count > 64 { state.refusedCallIDs.removeFirst() }
    }
}
