public import Foundation

/// The system's call service as the built-in integration uses it: the semantics of
/// CallKit's `CXProvider` + `CXCallController` (and LiveCommunicationKit's
/// `ConversationManager`), over plain values so the logic runs and is tested anywhere.
///
/// - Reports go from the app to the system: a new incoming call (which can fail, e.g.
///   under Do Not Disturb), outgoing progress and connection, the end of a call.
/// - Actions go from the system (its UI, or the app's `request`) to the delegate, which
///   must `fulfill()` or `fail()` each.
/// - The system may reset (every call is gone) and activates the audio session once a
///   call is started or answered, deactivating it when the last call ends.
///
/// Implementations call their delegate on a serial queue of their own.
public protocol SystemCallProvider: AnyObject, Sendable {
    /// Sets who performs actions and hears of resets and audio activation.
    func setDelegate(_ delegate: any SystemCallProviderDelegate)
    /// Shows a new incoming call. `completion` gets `nil`, or the reason it was refused
    /// (`SystemCallError`: Do Not Disturb, blocked, duplicate UUID, too many calls).
    func reportNewIncomingCall(with uuid: UUID, update: SystemCallUpdate, completion: @escaping @Sendable ((any Error)?) -> Void)
    /// An outgoing call started connecting (the server is reaching the callee).
    func reportOutgoingCall(with uuid: UUID, startedConnectingAt date: Date)
    /// An outgoing call connected (answered).
    func reportOutgoingCall(with uuid: UUID, connectedAt date: Date)
    /// A call ended for a reason other than an action the system performed.
    func reportCall(with uuid: UUID, endedAt date: Date, reason: SystemCallEndReason)
    /// Asks the system to perform an action (like `CXCallController.request`); the
    /// action then reaches the delegate. `completion` says whether the system accepted it.
    func request(_ kind: SystemCallAction.Kind, callUUID: UUID, completion: @escaping @Sendable ((any Error)?) -> Void)
}

/// The integration's side of a `SystemCallProvider` (`CXProviderDelegate`).
public protocol SystemCallProviderDelegate: AnyObject, Sendable {
    /// The system dropped every call (`providerDidReset`): end them all.
    func providerDidReset()
    /// Perform `action`, then `fulfill()` or `fail()` it.
    func perform(_ action: SystemCallAction)
    /// The audio session is active: call audio may start.
    func didActivateAudioSession()
    /// The audio session is gone: call audio must stop.
    func didDeactivateAudioSession()
}

/// What the system shows for a call (`CXCallUpdate`).
public struct SystemCallUpdate: Sendable, Hashable {
    /// The other party (a `CXHandle` of type `.generic`).
    public var remoteHandle: String
    /// The name shown, if other than the handle.
    public var localizedCallerName: String?
    /// Whether the call offers video.
    public var hasVideo: Bool

    /// An update.
    public init(remoteHandle: String, localizedCallerName: String? = nil, hasVideo: Bool = false) {
        self.remoteHandle = remoteHandle
        self.localizedCallerName = localizedCallerName
        self.hasVideo = hasVideo
    }
}

/// Why a call ended, in the system's terms (`CXCallEndedReason`).
public enum SystemCallEndReason: String, Sendable, Hashable, CaseIterable {
    /// An error ended the call.
    case failed
    /// The other party ended it.
    case remoteEnded
    /// Nobody answered it.
    case unanswered
    /// Another device of this user answered it.
    case answeredElsewhere
    /// Another device of this user declined it.
    case declinedElsewhere
}

/// An action the system asks the integration to carry out (`CXAction`): it must be
/// fulfilled or failed exactly once; later calls are ignored.
public final class SystemCallAction: @unchecked Sendable, CustomStringConvertible {
    // @unchecked: `outcome` is behind its lock; the rest is immutable.

    /// What the action does.
    public enum Kind: Sendable, Hashable {
        /// Start an outgoing call to `handle` (`CXStartCallAction`).
        case start(handle: String, video: Bool)
        /// Answer an incoming call (`CXAnswerCallAction`).
        case answer
        /// End or decline a call (`CXEndCallAction`).
        case end
        /// Hold (`true`) or resume a call (`CXSetHeldCallAction`): `ParleyCall.setHeld(_:completion:)`,
        /// fulfilled once the server accepted it, failed when it refused.
        case setHeld(Bool)
        /// Mute (`true`) or unmute the microphone (`CXSetMutedCallAction`): the client's
        /// `ParleyAudioController`, fulfilled at once.
        case setMuted(Bool)
    }

    /// How it finished.
    public enum Outcome: Sendable, Hashable {
        case fulfilled, failed
    }

    /// The action.
    public let kind: Kind
    /// The call it is for.
    public let callUUID: UUID
    private let outcome = Locked<Outcome?>(nil)
    private let onComplete: @Sendable (Outcome) -> Void

    /// An action; `onComplete` runs once, with the first outcome.
    public init(kind: Kind, callUUID: UUID, onComplete: @escaping @Sendable (Outcome) -> Void) {
        self.kind = kind
        self.callUUID = callUUID
        self.onComplete = onComplete
    }

    /// Whether it has been fulfilled or failed.
    public var isComplete: Bool { outcome.current != nil }
    /// How it finished, if it did.
    public var result: Outcome? { outcome.current }

    /// The action succeeded.
    public func fulfill() { complete(.fulfilled) }
    /// The action could not be carried out.
    public func fail() { complete(.failed) }

    private func complete(_ value: Outcome) {
        let first = outcome.withLock { current -> Bool in
            guard current == nil else { return false }
            current = value
            return true
        }
        if first { onComplete(value) }
    }

    public var description: String { "\(kind) \(callUUID)" }
}

/// Why the system refused a report or a request (the codes of `CXErrorCodeIncomingCallError`
/// and `CXErrorCodeRequestTransactionError`).
public struct SystemCallError: LocalizedError, Sendable, Hashable, CustomStringConvertible {
    /// The reason.
    public enum Code: String, Sendable, Hashable {
        case filteredByDoNotDisturb, filteredByBlockList, callUUIDAlreadyExists, unknownCallUUID
        case maximumCallGroupsReached, unentitled, actionTimedOut, unknown
    }

    /// The reason.
    public let code: Code
    /// Details.
    public let message: String

    /// An error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.rawValue): \(message)" }

    /// What `localizedDescription` shows: the message, e.g. "Do Not Disturb is on".
    public var errorDescription: String? { message }
}
