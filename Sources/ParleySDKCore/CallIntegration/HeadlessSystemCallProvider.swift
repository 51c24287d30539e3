public import Foundation
import ParleyWireCore

/// A `SystemCallProvider` with no system behind it, for Linux, the CLI and tests. It
/// keeps the system's side the way CallKit does: one entry per call UUID, refusals
/// (Do Not Disturb, duplicate UUID, unknown UUID, too many calls), actions that must be
/// fulfilled or failed within `actionTimeout` (else they fail, as CallKit's do), the
/// audio session activated when a call is started or answered and deactivated when the
/// last call ends, and reset. Its "user" is the methods under *System UI*.
///
/// Delegate calls and completions run on `queue`, one at a time.
public final class HeadlessSystemCallProvider: SystemCallProvider, @unchecked Sendable {
    // @unchecked: mutable state is `Locked`; the delegate is weak behind the lock.

    /// Where a call is on the system's side.
    public enum CallPhase: String, Sendable, Hashable {
        case incomingRinging, outgoingStarting, outgoingConnecting, active, ending
    }

    /// A call as the system holds it.
    public struct SystemCall: Sendable, Hashable {
        public var phase: CallPhase
        public var handle: String
        public var isOutgoing: Bool
        /// The system shows the call on hold (a `setHeld(true)` action was fulfilled).
        public var isOnHold = false
        /// The system shows the call muted (a `setMuted(true)` action was fulfilled).
        public var isMuted = false
        /// The name shown instead of the handle (`localizedCallerName`), if one was given.
        public var callerName: String? = nil
    }

    /// Something the provider saw, in order (for logs and tests).
    public enum Event: Sendable, Hashable {
        case reportedIncoming(UUID, handle: String)
        case refusedIncoming(UUID, SystemCallError.Code)
        case reportedConnecting(UUID)
        case reportedConnected(UUID)
        case reportedEnded(UUID, SystemCallEndReason)
        case action(SystemCallAction.Kind, UUID, SystemCallAction.Outcome)
        case audioActivated, audioDeactivated, reset
    }

    /// The delegate queue.
    public let queue: DispatchQueue
    /// How long an action may stay unfinished before it fails.
    public let actionTimeout: Duration
    /// At most this many calls at once; more are refused.
    public let maximumCalls: Int

    private struct State {
        weak var delegate: (any SystemCallProviderDelegate)?
        var calls: [UUID: SystemCall] = [:]
        var doNotDisturb = false
        var audioActive = false
        var events: [Event] = []
    }

    private let state = Locked(State())

    /// A provider calling its delegate on `queue`.
    public init(queue: DispatchQueue = DispatchQueue(label: "parley.headless-call-provider"),
                actionTimeout: Duration = .seconds(10), maximumCalls: Int = 4) {
        self.queue = queue
        self.actionTimeout = actionTimeout
        self.maximumCalls = maximumCalls
    }

    /// Do Not Disturb: new incoming calls are refused (`filteredByDoNotDisturb`).
    public var doNotDisturb: Bool {
        get { state.current.doNotDisturb }
        set { state.withLock { $0.doNotDisturb = newValue } }
    }
    /// The calls the system holds.
    public var calls: [UUID: SystemCall] { state.current.calls }
    /// Whether the audio session is active.
    public var isAudioActive: Bool { state.current.audioActive }
    /// What happened so far, oldest first (at most the last 1000).
    public var events: [Event] { state.current.events }

    public func setDelegate(_ delegate: any SystemCallProviderDelegate) {
        state.withLock { $0.delegate = delegate }
    }

    // MARK: Reports

    public func reportNewIncomingCall(with uuid: UUID, update: SystemCallUpdate, completion: @escaping @Sendable ((any Error)?) -> Void) {
        queue.async { [self] in
            let refusal: SystemCallError? = state.withLock { state in
                if state.doNotDisturb { return SystemCallError(.filteredByDoNotDisturb, "Do Not Disturb is on") }
                if state.calls[uuid] != nil { return SystemCallError(.callUUIDAlreadyExists, "a call with UUID \(uuid) exists") }
                if state.calls.count >= maximumCalls { return SystemCallError(.maximumCallGroupsReached, "\(maximumCalls) calls already") }
                state.calls[uuid] = SystemCall(
                    phase: .incomingRinging, handle: update.remoteHandle, isOutgoing: false, callerName: update.localizedCallerName)
                return nil
            }
            record(refusal.map { .refusedIncoming(uuid, $0.code) } ?? .reportedIncoming(uuid, handle: update.remoteHandle))
            completion(refusal)
        }
    }

    public func reportOutgoingCall(with uuid: UUID, startedConnectingAt date: Date) {
        queue.async { [self] in
            let known = state.withLock { state -> Bool in
                guard state.calls[uuid]?.isOutgoing == true, state.calls[uuid]?.phase == .outgoingStarting else { return false }
                state.calls[uuid]?.phase = .outgoingConnecting
                return true
            }
            if known { record(.reportedConnecting(uuid)) }
        }
    }

    public func reportOutgoingCall(with uuid: UUID, connectedAt date: Date) {
        queue.async { [self] in
            let known = state.withLock { state -> Bool in
                guard state.calls[uuid]?.isOutgoing == true, state.calls[uuid]?.phase != .active else { return false }
                state.calls[uuid]?.phase = .active
                return true
            }
            if known { record(.reportedConnected(uuid)) }
        }
    }

    public func reportCall(with uuid: UUID, endedAt date: Date, reason: SystemCallEndReason) {
        queue.async { [self] in
            // Like CallKit, a report for an unknown call is ignored.
            let known = state.withLock { $0.calls.removeValue(forKey: uuid) != nil }
            guard known else { return }
            record(.reportedEnded(uuid, reason))
            deactivateAudioIfIdle()
        }
    }

    // MARK: Requests and the system UI

    public func request(_ kind: SystemCallAction.Kind, callUUID: UUID, completion: @escaping @Sendable ((any Error)?) -> Void) {
        queue.async { [self] in
            let refusal: SystemCallError? = state.withLock { state in
                switch kind {
                case .start(let handle, _):
                    if state.calls[callUUID] != nil { return SystemCallError(.callUUIDAlreadyExists, "a call with UUID \(callUUID) exists") }
                    if state.calls.count >= maximumCalls { return SystemCallError(.maximumCallGroupsReached, "\(maximumCalls) calls already") }
                    state.calls[callUUID] = SystemCall(phase: .outgoingStarting, handle: handle, isOutgoing: true)
                    return nil
                case .answer:
                    guard let call = state.calls[callUUID] else { return SystemCallError(.unknownCallUUID, "no call \(callUUID)") }
                    return call.isOutgoing || call.phase != .incomingRinging ? SystemCallError(.unknown, "call \(callUUID) is not ringing") : nil
                case .end:
                    return state.calls[callUUID] == nil ? SystemCallError(.unknownCallUUID, "no call \(callUUID)") : nil
                case .setHeld, .setMuted:
                    guard let call = state.calls[callUUID] else { return SystemCallError(.unknownCallUUID, "no call \(callUUID)") }
                    return call.phase == .active ? nil : SystemCallError(.unknown, "call \(callUUID) is not active")
                }
            }
            completion(refusal)
            if refusal == nil { deliver(kind, callUUID) }
        }
    }

    /// System UI: the user answers a ringing call.
    public func answerFromSystemUI(_ uuid: UUID) { request(.answer, callUUID: uuid) { _ in } }
    /// System UI: the user declines or ends a call.
    public func endFromSystemUI(_ uuid: UUID) { request(.end, callUUID: uuid) { _ in } }
    /// System UI: the user puts an active call on hold (`true`) or resumes it.
    public func holdFromSystemUI(_ uuid: UUID, _ held: Bool) { request(.setHeld(held), callUUID: uuid) { _ in } }
    /// System UI: the user mutes (`true`) or unmutes an active call.
    public func muteFromSystemUI(_ uuid: UUID, _ muted: Bool) { request(.setMuted(muted), callUUID: uuid) { _ in } }

    /// The system resets (e.g. its daemon restarted): every call is gone.
    public func reset() {
        queue.async { [self] in
            let delegate = state.withLock { state -> (any SystemCallProviderDelegate)? in
                state.calls = [:]
                return state.delegate
            }
            record(.reset)
            delegate?.providerDidReset()
            deactivateAudioIfIdle()
        }
    }

    // MARK: Internals (on `queue`)

    private func deliver(_ kind: SystemCallAction.Kind, _ uuid: UUID) {
        let action = SystemCallAction(kind: kind, callUUID: uuid) { [weak self] outcome in
            guard let self else { return }
            queue.async { self.finished(kind, uuid, outcome) }
        }
        guard let delegate = state.current.delegate else { return action.fail() }
        delegate.perform(action)
        queue.asyncAfter(deadline: .now() + .nanoseconds(Int(clamping: actionTimeout.wholeNanoseconds))) {
            // An action left unfinished fails, as CallKit's time out.
            action.fail()
        }
    }

    private func finished(_ kind: SystemCallAction.Kind, _ uuid: UUID, _ outcome: SystemCallAction.Outcome) {
        record(.action(kind, uuid, outcome))
        let activate: Bool = state.withLock { state in
            switch (kind, outcome) {
            case (.start, .fulfilled):
                return state.calls[uuid] != nil
            case (.start, .failed):
                state.calls[uuid] = nil
                return false
            case (.answer, .fulfilled):
                guard state.calls[uuid] != nil else { return false }
                state.calls[uuid]?.phase = .active
                return true
            case (.answer, .failed):
                return false
            case (.end, _):
                // An end action ends the system's call whatever the app managed.
                state.calls[uuid] = nil
                return false
            case (.setHeld(let held), .fulfilled):
                state.calls[uuid]?.isOnHold = held
                return false
            case (.setMuted(let muted), .fulfilled):
                state.calls[uuid]?.isMuted = muted
                return false
            case (.setHeld, .failed), (.setMuted, .failed):
                return false
            }
        }
        if activate { activateAudio() } else { deactivateAudioIfIdle() }
    }

    private func activateAudio() {
        let delegate = state.withLock { state -> (any SystemCallProviderDelegate)? in
            guard !state.audioActive else { return nil }
            state.audioActive = true
            return state.delegate
        }
        guard let delegate else { return }
        record(.audioActivated)
        delegate.didActivateAudioSession()
    }

    private func deactivateAudioIfIdle() {
        let delegate = state.withLock { state -> (any SystemCallProviderDelegate)? in
            guard state.audioActive, state.calls.isEmpty else { return nil }
            state.audioActive = false
            return state.delegate
        }
        guard let delegate else { return }
        record(.audioDeactivated)
        delegate.didDeactivateAudioSession()
    }

    private func record(_ event: Event) {
        state.withLock { state in
            state.events.append(event)
            if state.events.count > 1000 { state.events.removeFirst() }
        }
    }
}
