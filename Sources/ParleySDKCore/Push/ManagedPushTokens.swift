/// The push token this process got from the system, shared between whoever asks the
/// system for it (`ParleyManagedPush` on Apple platforms, created early in the app's life)
/// and every client that called `enableManagedPushNotifications()`, created later. As in
/// the Sinch SDK, the two need not know each other: the token reaches each client when it
/// is enabled and whenever it changes; an invalidated token unregisters.
///
/// Engines and adapters write it (`@_spi(ParleyEngines)`); apps do not see it.
@_spi(ParleyEngines) public final class ManagedPushTokens: Sendable {
    /// One token as the system gave it, and what the server needs with it.
    public struct Token: Sendable, Hashable {
        /// The push service.
        public var type: ParleyPushType
        /// The token as registered: APNs hex, or FCM's text.
        public var token: String
        /// The APNs environment of this build.
        public var environment: ParleyPushEnvironment
        /// The bundle id or package name.
        public var appId: String

        /// A token from its parts.
        public init(type: ParleyPushType, token: String, environment: ParleyPushEnvironment, appId: String) {
            self.type = type
            self.token = token
            self.environment = environment
            self.appId = appId
        }
    }

    /// The process's one hub.
    public static let shared = ManagedPushTokens()

    private struct State {
        var current: Token?
        var observers: [Int: @Sendable (Token?) -> Void] = [:]
        var nextID = 0
    }

    private let state = Locked(State())

    /// An empty hub (tests make their own; the SDK uses `shared`).
    public init() {}

    /// The token now, if the system gave one and has not invalidated it.
    public var current: Token? { state.current.current }

    /// The system gave a token (`nil`: it invalidated the last one). Observers hear it,
    /// unless it is the token they already have.
    public func update(_ token: Token?) {
        let observers: [@Sendable (Token?) -> Void] = state.withLock { state in
            guard state.current != token else { return [] }
            state.current = token
            return Array(state.observers.values)
        }
        for observer in observers { observer(token) }
    }

    /// Calls `observer` with the current token at once (if there is one) and with every
    /// change after; returns an id for `stopObserving`.
    @discardableResult
    func observe(_ observer: @escaping @Sendable (Token?) -> Void) -> Int {
        let (id, current) = state.withLock { state in
            let id = state.nextID
            state.nextID += 1
            state.observers[id] = observer
            return (id, state.current)
        }
        if let current { observer(current) }
        return id
    }

    /// Forgets an observer.
    func stopObserving(_ id: Int) {
        state.withLock { _ = $0.observers.removeValue(forKey: id) }
    }
}
