// MIRROR of CallKit's actions (see CXValues.swift for what the mirror is).
public import Foundation
import MirrorSupport

// Follows cxaction (`class CXAction : NSObject`; `var uuid: UUID { get }`,
// `var isComplete: Bool { get }`, `var timeoutDate: Date { get }`, `func fulfill()`,
// `func fail()`; fail()'s page: calling either again, or after the other, has no effect,
// and both may be called asynchronously from any thread).
/// Something the system asks the provider's delegate to do, or the app asks the system for.
open class CXAction: NSObject {
    /// The action's identity.
    public let uuid = UUID()
    /// When the system gives up on it (the mirror does not time actions out; see README).
    public let timeoutDate = Date(timeIntervalSinceNow: 10)
    private let outcome = MirrorLocked<Bool?>(nil)
    /// Set by the provider when it hands the action over: told once, with true when fulfilled.
    let completionSlot = MirrorLocked<(@Sendable (Bool) -> Void)?>(nil)

    override public init() { super.init() }

    /// Whether it was fulfilled or failed.
    open var isComplete: Bool { outcome.current != nil }

    /// The action succeeded.
    open func fulfill() { complete(true) }
    /// The action could not be carried out.
    open func fail() { complete(false) }

    private func complete(_ fulfilled: Bool) {
        let first = outcome.withLock { value -> Bool in
            guard value == nil else { return false }
            value = fulfilled
            return true
        }
        if first, let tell = completionSlot.current { tell(fulfilled) }
    }

    /// MIRROR-ONLY: true when fulfilled, false when failed, nil while pending.
    public var mirrorOutcome: Bool? { outcome.current }
}

// Follows cxcallaction (`class CXCallAction : CXAction`; `init(call: UUID)`; `var callUUID: UUID { get }`).
/// An action on one call.
open class CXCallAction: CXAction {
    /// The call it is for.
    public let callUUID: UUID

    /// An action on `callUUID`.
    public init(call callUUID: UUID) {
        self.callUUID = callUUID
        super.init()
    }
}

// Follows cxstartcallaction (`init(call: UUID, handle: CXHandle)`; `var handle: CXHandle`,
// `var contactIdentifier: String?`, `var isVideo: Bool`, `{ get set }`;
// `func fulfill(withDateStarted: Date)`).
/// Start an outgoing call.
open class CXStartCallAction: CXCallAction {
    open var handle: CXHandle
    open var contactIdentifier: String?
    open var isVideo = false

    /// A start of `callUUID` to `handle`.
    public init(call callUUID: UUID, handle: CXHandle) {
        self.handle = handle
        super.init(call: callUUID)
    }

    /// Fulfilled, the call having started at `dateStarted`.
    open func fulfill(withDateStarted dateStarted: Date) { fulfill() }
}

// Follows cxanswercallaction (`func fulfill(withDateConnected: Date)`).
/// Answer an incoming call.
open class CXAnswerCallAction: CXCallAction {
    /// Fulfilled, the call having connected at `dateConnected`.
    open func fulfill(withDateConnected dateConnected: Date) { fulfill() }
}

// Follows cxendcallaction (`func fulfill(withDateEnded: Date)`).
/// End or decline a call.
open class CXEndCallAction: CXCallAction {
    /// Fulfilled, the call having ended at `dateEnded`.
    open func fulfill(withDateEnded dateEnded: Date) { fulfill() }
}

// Follows cxsetmutedcallaction (`init(call: UUID, muted: Bool)`; `var isMuted: Bool { get set }`).
/// Mute or unmute a call.
open class CXSetMutedCallAction: CXCallAction {
    open var isMuted: Bool

    /// Mute (`muted`) or unmute `callUUID`.
    public init(call callUUID: UUID, muted: Bool) {
        isMuted = muted
        super.init(call: callUUID)
    }
}

// Follows cxsetheldcallaction (`init(call: UUID, onHold: Bool)`; `var isOnHold: Bool { get set }`).
/// Hold or resume a call.
open class CXSetHeldCallAction: CXCallAction {
    open var isOnHold: Bool

    /// Hold (`onHold`) or resume `callUUID`.
    public init(call callUUID: UUID, onHold: Bool) {
        isOnHold = onHold
        super.init(call: callUUID)
    }
}

// Follows cxtransaction (`class CXTransaction : NSObject`; `init(action: CXAction)`,
// `init(actions: [CXAction])`; `var uuid: UUID { get }`, `var isComplete: Bool { get }`,
// `var actions: [CXAction] { get }`).
/// Actions the app asks the system to perform together.
open class CXTransaction: NSObject {
    public let uuid = UUID()
    public let actions: [CXAction]

    /// A transaction of `actions`.
    public init(actions: [CXAction]) {
        self.actions = actions
        super.init()
    }

    /// A transaction of one action.
    public convenience init(action: CXAction) { self.init(actions: [action]) }

    /// Whether every action is complete.
    open var isComplete: Bool { actions.allSatisfy(\.isComplete) }
}
