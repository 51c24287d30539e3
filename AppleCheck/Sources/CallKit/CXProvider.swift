// MIRROR of CallKit's provider, delegate and call controller (see CXValues.swift for what
// the mirror is). It behaves as the pages cited below describe, so the CallKit adapter's
// flows can run over it; what the pages leave open is marked "Mirror's choice".
public import Foundation
public import AVFAudio
import MirrorSupport

// Follows cxproviderdelegate (`protocol CXProviderDelegate : NSObjectProtocol`):
// `providerDidReset(_:)` is required; `providerDidBegin(_:)`, `provider(_:execute:) -> Bool`,
// `provider(_:perform:)` for each action class, `provider(_:timedOutPerforming:)`,
// `provider(_:didActivate:)` and `provider(_:didDeactivate:)` (AVAudioSession) are optional.
// Linux has no Objective-C optional requirements: the optional ones are requirements with
// default implementations below. Mirror's choice: an action whose `perform` the delegate
// lacks is failed (Apple's pages do not say what happens then).
/// The app's side of a `CXProvider`: called on the queue given to `setDelegate(_:queue:)`.
public protocol CXProviderDelegate: NSObjectProtocol {
    func providerDidReset(_ provider: CXProvider)
    func providerDidBegin(_ provider: CXProvider)
    func provider(_ provider: CXProvider, execute transaction: CXTransaction) -> Bool
    func provider(_ provider: CXProvider, perform action: CXStartCallAction)
    func provider(_ provider: CXProvider, perform action: CXAnswerCallAction)
    func provider(_ provider: CXProvider, perform action: CXEndCallAction)
    func provider(_ provider: CXProvider, perform action: CXSetHeldCallAction)
    func provider(_ provider: CXProvider, perform action: CXSetMutedCallAction)
    func provider(_ provider: CXProvider, timedOutPerforming action: CXAction)
    func provider(_ provider: CXProvider, didActivate audioSession: AVAudioSession)
    func provider(_ provider: CXProvider, didDeactivate audioSession: AVAudioSession)
}

extension CXProviderDelegate {
    public func providerDidBegin(_ provider: CXProvider) {}
    public func provider(_ provider: CXProvider, execute transaction: CXTransaction) -> Bool { false }
    public func provider(_ provider: CXProvider, perform action: CXStartCallAction) { action.fail() }
    public func provider(_ provider: CXProvider, perform action: CXAnswerCallAction) { action.fail() }
    public func provider(_ provider: CXProvider, perform action: CXEndCallAction) { action.fail() }
    public func provider(_ provider: CXProvider, perform action: CXSetHeldCallAction) { action.fail() }
    public func provider(_ provider: CXProvider, perform action: CXSetMutedCallAction) { action.fail() }
    public func provider(_ provider: CXProvider, timedOutPerforming action: CXAction) {}
    public func provider(_ provider: CXProvider, didActivate audioSession: AVAudioSession) {}
    public func provider(_ provider: CXProvider, didDeactivate audioSession: AVAudioSession) {}
}

// Follows cxprovider (`class CXProvider : NSObject`; `init(configuration:)`;
// `var configuration: CXProviderConfiguration`; `setDelegate(_:queue:)` (weak delegate, nil
// queue = main queue); `reportNewIncomingCall(with:update:completion:)` (completion
// `@escaping @Sendable ((any Error)?) -> Void`, on the delegate queue, or a private serial
// queue without one); `reportCall(with:updated:)`; `reportCall(with:endedAt:reason:)`
// (`Date?`); `reportOutgoingCall(with:startedConnectingAt:)` and `(with:connectedAt:)`
// (`Date?`); `invalidate()`).
/// The app's telephony provider: reports go to the system, actions come back to the delegate.
open class CXProvider: NSObject {
    /// MIRROR-ONLY: what the mirror's system knows of one call.
    public struct MirrorCall: Sendable, Equatable {
        public var isOutgoing: Bool
        public var remoteHandle: String?
        public var hasVideo: Bool
        /// Answered (incoming) or started (outgoing): its answer or start action was fulfilled.
        public var isActive = false
        public var startedConnectingAt: Date?
        public var connectedAt: Date?
        public var isMuted = false
        public var isOnHold = false
    }

    /// MIRROR-ONLY: a report the app made, in order.
    public enum MirrorReport: Sendable, Equatable {
        case incoming(UUID, refused: CXErrorCodeIncomingCallError.Code?)
        case startedConnecting(UUID)
        case connected(UUID)
        case ended(UUID, CXCallEndedReason)
    }

    private struct State {
        var delegate: MirrorWeakDelegate?
        var queue: DispatchQueue?
        var calls: [UUID: MirrorCall] = [:]
        var reports: [MirrorReport] = []
        var audioActive = false
        var refusal: CXErrorCodeIncomingCallError.Code?
        var invalidated = false
    }

    open var configuration: CXProviderConfiguration
    private let state = MirrorLocked(State())
    /// Completions and delegate calls when no delegate queue is set.
    private let privateQueue = DispatchQueue(label: "CallKit mirror provider")

    /// A provider. The app makes one; the mirror's `CXCallController` talks to the last made.
    public init(configuration: CXProviderConfiguration) {
        self.configuration = configuration
        super.init()
        Self.current.withLock { $0 = MirrorWeakProvider(provider: self) }
    }

    /// Who hears actions, resets and audio activation, and on which queue (main when nil).
    open func setDelegate(_ delegate: (any CXProviderDelegate)?, queue: DispatchQueue?) {
        state.withLock {
            $0.delegate = delegate.map { MirrorWeakDelegate(object: $0) }
            $0.queue = queue
        }
        deliver { provider, delegate in delegate.providerDidBegin(provider) }
    }

    /// Shows a new incoming call, unless the system refuses it (a UUID it already has, or
    /// a filter: see `mirrorRefuseIncomingCalls`).
    open func reportNewIncomingCall(with uuid: UUID, update: CXCallUpdate,
                                    completion: @escaping @Sendable ((any Error)?) -> Void) {
        let refusal = state.withLock { state -> CXErrorCodeIncomingCallError.Code? in
            let refusal: CXErrorCodeIncomingCallError.Code? =
                if state.invalidated { .unknown }
                else if state.calls[uuid] != nil { .callUUIDAlreadyExists }
                else { state.refusal }
            state.reports.append(.incoming(uuid, refused: refusal))
            if refusal == nil {
                state.calls[uuid] = MirrorCall(isOutgoing: false, remoteHandle: update.remoteHandle?.value, hasVideo: update.hasVideo)
            }
            return refusal
        }
        onCallbackQueue { completion(refusal.map { CXErrorCodeIncomingCallError($0) }) }
    }

    /// Updates a call's display.
    open func reportCall(with uuid: UUID, updated update: CXCallUpdate) {
        let handle = update.remoteHandle?.value
        state.withLock { state in
            if let handle { state.calls[uuid]?.remoteHandle = handle }
            state.calls[uuid]?.hasVideo = update.hasVideo
        }
    }

    /// A call ended other than by an action the system performed.
    open func reportCall(with uuid: UUID, endedAt dateEnded: Date?, reason endedReason: CXCallEndedReason) {
        state.withLock { state in
            guard state.calls.removeValue(forKey: uuid) != nil else { return }
            state.reports.append(.ended(uuid, endedReason))
        }
        deactivateAudioIfIdle()
    }

    /// An outgoing call started connecting.
    open func reportOutgoingCall(with uuid: UUID, startedConnectingAt dateStartedConnecting: Date?) {
        state.withLock { state in
            guard state.calls[uuid] != nil else { return }
            state.calls[uuid]?.startedConnectingAt = dateStartedConnecting ?? Date()
            state.reports.append(.startedConnecting(uuid))
        }
    }

    /// An outgoing call connected.
    open func reportOutgoingCall(with uuid: UUID, connectedAt dateConnected: Date?) {
        state.withLock { state in
            guard state.calls[uuid] != nil else { return }
            state.calls[uuid]?.connectedAt = dateConnected ?? Date()
            state.reports.append(.connected(uuid))
        }
    }

    /// Ends the provider: its calls are gone.
    open func invalidate() {
        state.withLock {
            $0.invalidated = true
            $0.calls = [:]
        }
    }

    // MARK: Mirror-only control surface (the system's UI and state, for tests)

    /// MIRROR-ONLY: the provider the mirror's `CXCallController` sends transactions to
    /// (the last one made, as an app has one).
    public static var mirrorCurrent: CXProvider? { current.current.provider }

    /// MIRROR-ONLY: refuse every new incoming call with `code` (`.filteredByDoNotDisturb`
    /// for Do Not Disturb, `.filteredByBlockList` for a blocked caller); nil to allow.
    public func mirrorRefuseIncomingCalls(with code: CXErrorCodeIncomingCallError.Code?) {
        state.withLock { $0.refusal = code }
    }

    /// MIRROR-ONLY: the calls the system has.
    public var mirrorCalls: [UUID: MirrorCall] { state.current.calls }
    /// MIRROR-ONLY: the reports the app made, in order.
    public var mirrorReports: [MirrorReport] { state.current.reports }
    /// MIRROR-ONLY: whether the system has activated the call audio session.
    public var mirrorIsAudioSessionActive: Bool { state.current.audioActive }

    /// MIRROR-ONLY: the user taps Answer on the call screen. Returns the action handed to
    /// the delegate, or nil when there is no such unanswered incoming call.
    @discardableResult
    public func mirrorUserAnswers(_ uuid: UUID) -> CXAnswerCallAction? {
        let known = state.current.calls[uuid].map { !$0.isOutgoing && !$0.isActive } ?? false
        guard known else { return nil }
        let action = CXAnswerCallAction(call: uuid)
        perform([action])
        return action
    }

    /// MIRROR-ONLY: the user taps Decline or End. Nil when the system has no such call.
    @discardableResult
    public func mirrorUserEnds(_ uuid: UUID) -> CXEndCallAction? {
        guard state.current.calls[uuid] != nil else { return nil }
        let action = CXEndCallAction(call: uuid)
        perform([action])
        return action
    }

    /// MIRROR-ONLY: the user taps Mute. Nil when the system has no such call.
    @discardableResult
    public func mirrorUserSetsMuted(_ uuid: UUID, _ muted: Bool) -> CXSetMutedCallAction? {
        guard state.current.calls[uuid] != nil else { return nil }
        let action = CXSetMutedCallAction(call: uuid, muted: muted)
        perform([action])
        return action
    }

    /// MIRROR-ONLY: the user taps Hold (or resumes). Nil when the system has no such call.
    @discardableResult
    public func mirrorUserSetsHeld(_ uuid: UUID, _ held: Bool) -> CXSetHeldCallAction? {
        guard state.current.calls[uuid] != nil else { return nil }
        let action = CXSetHeldCallAction(call: uuid, onHold: held)
        perform([action])
        return action
    }

    /// MIRROR-ONLY: the system resets the provider (its call service failed): every call is
    /// gone, the delegate hears `providerDidReset`, then the audio session is deactivated.
    /// Mirror's choice: the order of the reset and the deactivation (not documented).
    public func mirrorReset() {
        state.withLock { $0.calls = [:] }
        deliver { provider, delegate in delegate.providerDidReset(provider) }
        deactivateAudioIfIdle()
    }

    // MARK: The system (internal)

    private static let current = MirrorLocked(MirrorWeakProvider(provider: nil))

    /// Checks a transaction as the system does before accepting it (`CXCallController`).
    func accept(_ transaction: CXTransaction) -> CXErrorCodeRequestTransactionError.Code? {
        state.withLock { state in
            if state.invalidated { return .unknownCallProvider }
            if transaction.actions.isEmpty { return .emptyTransaction }
            let maximum = max(1, configuration.maximumCallGroups)
            for action in transaction.actions {
                guard let call = action as? CXCallAction else { return .invalidAction }
                if call is CXStartCallAction {
                    if state.calls[call.callUUID] != nil { return .callUUIDAlreadyExists }
                    if state.calls.count >= maximum { return .maximumCallGroupsReached }
                } else if state.calls[call.callUUID] == nil {
                    return .unknownCallUUID
                } else if call is CXAnswerCallAction, state.calls[call.callUUID]?.isOutgoing == true {
                    return .invalidAction
                }
            }
            // A started call exists from here on (its UUID is taken), inactive until fulfilled.
            for case let start as CXStartCallAction in transaction.actions {
                state.calls[start.callUUID] = MirrorCall(isOutgoing: true, remoteHandle: start.handle.value, hasVideo: start.isVideo)
            }
            return nil
        }
    }

    /// Hands accepted actions to the delegate, `provider(_:execute:)` first.
    func perform(_ actions: [CXAction], transaction: CXTransaction? = nil) {
        for action in actions {
            guard let callAction = action as? CXCallAction else { continue }
            let uuid = callAction.callUUID
            let kind = MirrorActionKind(callAction)
            let system = MirrorWeakProvider(provider: self)
            action.completionSlot.withLock {
                $0 = { fulfilled in system.provider?.finished(kind, uuid, fulfilled) }
            }
        }
        let boxed = MirrorUnchecked((actions, transaction))
        deliver { provider, delegate in
            let (actions, transaction) = boxed.value
            if let transaction, delegate.provider(provider, execute: transaction) { return }
            for action in actions {
                switch action {
                case let start as CXStartCallAction: delegate.provider(provider, perform: start)
                case let answer as CXAnswerCallAction: delegate.provider(provider, perform: answer)
                case let end as CXEndCallAction: delegate.provider(provider, perform: end)
                case let held as CXSetHeldCallAction: delegate.provider(provider, perform: held)
                case let muted as CXSetMutedCallAction: delegate.provider(provider, perform: muted)
                default: action.fail()
                }
            }
        }
    }

    /// An action completed: the system's state follows, and the audio session with it
    /// (activated once a start or answer is fulfilled, deactivated when the last call ends).
    private func finished(_ kind: MirrorActionKind, _ uuid: UUID, _ fulfilled: Bool) {
        let activate = state.withLock { state -> Bool in
            switch (kind, fulfilled) {
            case (.start, true), (.answer, true):
                state.calls[uuid]?.isActive = true
                guard state.calls[uuid] != nil, !state.audioActive else { return false }
                state.audioActive = true
                return true
            case (.start, false), (.end, true):
                state.calls[uuid] = nil
            case (.muted(let muted), true):
                state.calls[uuid]?.isMuted = muted
            case (.held(let held), true):
                state.calls[uuid]?.isOnHold = held
            default:
                break
            }
            return false
        }
        if activate {
            deliver { provider, delegate in delegate.provider(provider, didActivate: AVAudioSession.sharedInstance()) }
        }
        deactivateAudioIfIdle()
    }

    private func deactivateAudioIfIdle() {
        let deactivate = state.withLock { state -> Bool in
            guard state.audioActive, state.calls.isEmpty else { return false }
            state.audioActive = false
            return true
        }
        if deactivate {
            deliver { provider, delegate in delegate.provider(provider, didDeactivate: AVAudioSession.sharedInstance()) }
        }
    }

    /// Calls the delegate on its queue, in the order the system decided things.
    private func deliver(_ body: @escaping @Sendable (CXProvider, any CXProviderDelegate) -> Void) {
        let boxed = MirrorUnchecked(self)
        onCallbackQueue {
            let provider = boxed.value
            guard let delegate = provider.state.current.delegate?.object else { return }
            body(provider, delegate)
        }
    }

    private func onCallbackQueue(_ body: @escaping @Sendable () -> Void) {
        let (hasDelegate, queue) = state.withLock { ($0.delegate != nil, $0.queue) }
        (hasDelegate ? (queue ?? .main) : privateQueue).async(execute: body)
    }
}

/// The kinds of action the mirror's system tracks.
enum MirrorActionKind: Sendable {
    case start, answer, end, held(Bool), muted(Bool), other

    init(_ action: CXCallAction) {
        switch action {
        case is CXStartCallAction: self = .start
        case is CXAnswerCallAction: self = .answer
        case is CXEndCallAction: self = .end
        case let held as CXSetHeldCallAction: self = .held(held.isOnHold)
        case let muted as CXSetMutedCallAction: self = .muted(muted.isMuted)
        default: self = .other
        }
    }
}

struct MirrorWeakDelegate {
    private weak var reference: AnyObject?
    var object: (any CXProviderDelegate)? { reference as? any CXProviderDelegate }
    init(object: any CXProviderDelegate) { reference = object }
}

struct MirrorWeakProvider: @unchecked Sendable {
    // @unchecked: only read behind `CXProvider.current`'s lock; the provider is used as
    // CallKit's is, from any thread.
    weak var provider: CXProvider?
}

// Follows cxcallcontroller (`class CXCallController : NSObject`; `init()` (a private serial
// queue), `init(queue: DispatchQueue)`; `request(_:completion:)` with completion
// `@escaping @Sendable ((any Error)?) -> Void` on that queue;
// `requestTransaction(with action: CXAction, completion:)`). Accepted transactions go to
// the app's provider, whose delegate performs them: the request's completion says only
// whether the system accepted the transaction.
/// Asks the system to perform actions (start, answer, end...) on the app's calls.
open class CXCallController: NSObject {
    private let queue: DispatchQueue

    /// A controller completing requests on a private serial queue.
    override public convenience init() { self.init(queue: DispatchQueue(label: "CallKit mirror call controller")) }

    /// A controller completing requests on `queue`.
    public init(queue: DispatchQueue) {
        self.queue = queue
        super.init()
    }

    /// Asks the system to perform `transaction`'s actions.
    open func request(_ transaction: CXTransaction, completion: @escaping @Sendable ((any Error)?) -> Void) {
        guard let provider = CXProvider.mirrorCurrent else {
            return queue.async { completion(CXErrorCodeRequestTransactionError(.unknownCallProvider)) }
        }
        if let refusal = provider.accept(transaction) {
            return queue.async { completion(CXErrorCodeRequestTransactionError(refusal)) }
        }
        queue.async { completion(nil) }
        provider.perform(transaction.actions, transaction: transaction)
    }

    /// Asks the system to perform one action.
    open func requestTransaction(with action: CXAction, completion: @escaping @Sendable ((any Error)?) -> Void) {
        request(CXTransaction(action: action), completion: completion)
    }
}
