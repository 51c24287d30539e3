public import ParleyCallModel

/// The store port: everything parleyd keeps across restarts, behind one protocol so the
/// server, the REST API, the push coordinator and the record writer never name a
/// database. `SQLiteStore` is its first adapter; a shared database for several nodes
/// (PostgreSQL) is meant to be the second, passing the same test suite
/// (Tests/ParleyStoreTests, run once per store factory). See docs/store.md.
///
/// What it holds: applications with their secrets and dialling settings, the users each application has seen,
/// call records (`StoredCall`) with their legs, each call's timeline (`CallEvent`),
/// devices' push registrations, applications' push credentials and callback settings.
///
/// One value is one connection. Its methods block on the database, so callers run them
/// on a thread of their own (a `StoreQueue`, a `StoreWriter`, a command-line tool), never
/// on an event loop or the cooperative pool; a store is not `Sendable` and is used by one
/// thread at a time. Any number of connections may share one database.
///
/// Every time is a parameter in milliseconds since the Unix epoch: a store never reads a
/// clock. Every method is one transaction: when it returns, its change is committed and
/// visible to every other connection of the same database, and survives the process
/// being killed. Rules every adapter keeps (the test suite checks each):
///
/// - A state's time is set the first time a call reaches it; states are not checked for
///   order (that is the call state machine's job).
/// - An ended call does not change again: `updateCallState`, `recordLeg` and `finishCall`
///   on it throw `callEnded`.
/// - `error` is given exactly when the cause is `error`, else `invalidArgument`.
/// - `durationMs` is `endedTime - answeredTime` (at least 0), and 0 for a call never
///   answered. NaN or infinite statistics are stored as 0 (required members) or absent.
/// - Strings are stored and matched exactly as given (quotes, NULs, any Unicode).
/// - A call's ends are kept as their address text with the call's direction, which names
///   their kinds; a `CallQuery.user` matches only ends that are users.
/// - A value the store wrote but this build does not know (a newer state or cause) reads
///   as `corruptRecord` (checked on SQLite only, where a raw edit can plant one).
///
/// The convenience forms in the extension below (`createCall` without a direction,
/// `finishCall` without legs, ...) fill in the usual arguments.
public protocol CallStore {
    /// Schema versions this connection applied when it opened the database (empty when it
    /// was up to date).
    var appliedMigrations: [Int64] { get }

    /// Runs several of this store's changes as one transaction: all of them commit
    /// together, or none (each method's own transaction nests inside it). With `durable`,
    /// the commit is as durable as the store's settings allow for finishing a call.
    /// `StoreWriter` uses it for group commits; `body` gets this store.
    func transaction<T>(durable: Bool, _ body: (any CallStore) throws(StoreError) -> T) throws(StoreError) -> T

    // MARK: Applications

    /// Creates an application.
    /// - Throws: `.alreadyExists` when the key is taken.
    @discardableResult
    func createApplication(key: String, name: String, secret: String, at time: Int64) throws(StoreError) -> Application

    /// Every application, oldest first (by creation time, then key).
    func applications() throws(StoreError) -> [Application]

    /// The application with `key`, or nil.
    func application(key: String) throws(StoreError) -> Application?

    /// Replaces an application's secret. The old secret stays valid for
    /// `gracePeriodMilliseconds` after `time` (0: at once invalid), replacing any earlier
    /// previous secret.
    /// - Throws: `.notFound` for an unknown key; `.invalidArgument` for a negative grace
    ///   period or a new secret equal to the current one.
    @discardableResult
    func rotateSecret(key: String, newSecret: String, at time: Int64, gracePeriodMilliseconds: Int64) throws(StoreError) -> Application

    /// Replaces an application's dialling settings (`Application.dialling`: what it may
    /// dial outside the app, and how much).
    /// - Returns: the application with them.
    /// - Throws: `.notFound` for an unknown key; `.invalidArgument` when the settings have a
    ///   `problem` (nothing is changed).
    @discardableResult
    func setDiallingSettings(applicationKey: String, _ settings: DiallingSettings) throws(StoreError) -> Application

    // MARK: Users

    /// Notes that `userId` connected to `applicationKey` at `time`: the first time makes
    /// the user known; a later time moves `lastSeenTime` forward (an earlier one moves
    /// `firstSeenTime` back).
    /// - Throws: `.notFound` for an unknown application.
    @discardableResult
    func recordUserSeen(applicationKey: String, userId: String, at time: Int64) throws(StoreError) -> KnownUser

    /// The user if `applicationKey` has seen it, else nil.
    func knownUser(applicationKey: String, userId: String) throws(StoreError) -> KnownUser?

    /// Every user seen, of one application or (nil) of all, ordered by application key and
    /// user id.
    func knownUsers(applicationKey: String?) throws(StoreError) -> [KnownUser]

    // MARK: Calls

    /// Records a new call in state `initiating` between `caller` and `callee`, addresses
    /// of the kinds `direction` joins.
    /// - Throws: `.alreadyExists` for a call id already stored; `.notFound` for an unknown
    ///   application; `.invalidArgument` when an address is not of its direction's kind.
    @discardableResult
    func createCall(
        id: String, applicationKey: String, caller: PartyAddress, callee: PartyAddress, direction: CallDirection,
        startedTime: Int64
    ) throws(StoreError) -> StoredCall

    /// Moves a call to `state` and sets that state's time unless it was set before.
    /// - Throws: `.notFound`; `.callEnded` for an ended call; `.invalidArgument` for
    ///   `ended` (use `finishCall`).
    func updateCallState(id: String, to state: CallState, at time: Int64) throws(StoreError)

    /// Stores what the SIP gateway knows of a call to a phone number or SIP address: its
    /// INVITE's Call-ID and the status of the final response (200 when answered). A nil
    /// keeps what is stored; allowed after the call ended (the final status can come last).
    /// - Throws: `.notFound`; `.invalidArgument` for a status outside 100-699.
    func recordSIP(callId: String, sipCallId: String?, sipStatus: Int?) throws(StoreError)

    /// Stores (or replaces) the statistics of one leg (one per role) of a call in progress.
    /// - Throws: `.notFound`; `.callEnded` once the call ended.
    func recordLeg(callId: String, _ leg: CallLeg) throws(StoreError)

    /// Stores (or replaces) what the device of one leg reported about its playout
    /// (`call.stats`), during the call or after it ended; `call(id:)` shows it on that
    /// role's leg. Kept apart from the leg's row, so `finishCall` and this may come in
    /// either order.
    /// - Throws: `.notFound` when there is no such call.
    func recordLegPlayout(callId: String, role: CallLegRole, _ playout: CallLegPlayout) throws(StoreError)

    /// Ends a call: `ended`, the end time, the cause (and error), the duration and the
    /// final statistics of `legs`; durable (see `transaction(durable:)`).
    /// - Returns: the finished record.
    /// - Throws: `.notFound`; `.callEnded` when it had ended already (the record is left
    ///   as it was); `.invalidArgument` when `error` does not match the cause.
    @discardableResult
    func finishCall(id: String, cause: CallEndCause, error: CallError?, at time: Int64, legs: [CallLeg]) throws(StoreError) -> StoredCall

    /// Restart recovery: closes every call not yet ended with `cause` (and `error`), ended
    /// at `time`. parleyd runs it once at start, before accepting connections.
    /// - Returns: the calls closed, in the order they were created.
    /// - Throws: `.invalidArgument` when `error` does not match the cause.
    @discardableResult
    func closeCallsInProgress(cause: CallEndCause, error: CallError?, at time: Int64) throws(StoreError) -> [StoredCall]

    /// The call with `id`, with its legs; nil if there is none, or if `applicationKey` is
    /// given and the call belongs to another application.
    func call(id: String, applicationKey: String?) throws(StoreError) -> StoredCall?

    /// One page of an application's calls; see `CallQuery` for the order and paging.
    /// - Throws: `.invalidArgument` for a limit outside 1...`CallQuery.maximumLimit` or a
    ///   cursor this store did not write.
    func calls(_ query: CallQuery) throws(StoreError) -> CallPage

    /// How many calls are in each state (for metrics), of one application or (nil) of all.
    func callCountsByState(applicationKey: String?) throws(StoreError) -> [CallState: Int]

    // MARK: Call timeline

    /// Appends an event to a call's timeline; the call record need not exist yet.
    /// - Returns: false when the call already has `CallEvent.maximumPerCall` events (the
    ///   event is dropped).
    /// - Throws: `.notFound` for an unknown application; `.invalidArgument` for an empty
    ///   call id or kind.
    @discardableResult
    func recordCallEvent(callId: String, applicationKey: String, _ event: CallEvent) throws(StoreError) -> Bool

    /// A call's timeline in the order the events were recorded; empty for a call of
    /// another application when `applicationKey` is given.
    func callEvents(callId: String, applicationKey: String?) throws(StoreError) -> [CallEvent]

    // MARK: Push

    /// Stores a device's push registration, replacing the one for the same device and push
    /// type; the same token registered by another device moves to this one.
    /// - Throws: `.notFound` for an unknown application.
    func registerPushToken(_ registration: PushRegistration) throws(StoreError)

    /// Removes a device's push tokens (all types, or only the one with `token`).
    /// - Returns: how many were removed.
    @discardableResult
    func unregisterPushTokens(applicationKey: String, deviceId: String, token: String?) throws(StoreError) -> Int

    /// Removes one token wherever it is registered (the provider said it is gone).
    /// - Returns: how many were removed.
    @discardableResult
    func removePushToken(applicationKey: String, pushType: PushType, token: String) throws(StoreError) -> Int

    /// A user's push registrations, by device id then type.
    func pushRegistrations(applicationKey: String, userId: String) throws(StoreError) -> [PushRegistration]

    /// The registrations of one device, by type.
    func pushRegistrations(applicationKey: String, deviceId: String) throws(StoreError) -> [PushRegistration]

    /// Every device with a push token: (application key, user id, device id), sorted.
    func pushDevices() throws(StoreError) -> [(applicationKey: String, userId: String, deviceId: String)]

    /// Sets an application's credentials for one provider, replacing earlier ones.
    /// - Throws: `.notFound` for an unknown application.
    func setPushCredentials(_ credentials: StoredPushCredentials) throws(StoreError)

    /// An application's push credentials, APNs first; providers this build does not know
    /// are left out.
    func pushCredentials(applicationKey: String) throws(StoreError) -> [StoredPushCredentials]

    // MARK: Callbacks

    /// Sets how an application's backend is called back, replacing earlier settings.
    /// - Throws: `.notFound` for an unknown application; `.invalidArgument` when the
    ///   settings have a `problem` (nothing is changed).
    func setCallbackSettings(applicationKey: String, _ settings: CallbackSettings, at time: Int64) throws(StoreError)

    /// An application's callback settings, or nil when it has none (or is unknown).
    func callbackSettings(applicationKey: String) throws(StoreError) -> CallbackSettings?

    /// The callback settings of every application that has them, by application key.
    func callbackSettingsByApplication() throws(StoreError) -> [String: CallbackSettings]

    /// Removes an application's callback settings: its calls no longer ask a backend.
    /// - Returns: whether it had any.
    /// - Throws: `.notFound` for an unknown application.
    @discardableResult
    func clearCallbackSettings(applicationKey: String) throws(StoreError) -> Bool
}

extension CallStore {
    /// Whether `applicationKey` has seen `userId` (the "destination user not found" check).
    public func isKnownUser(applicationKey: String, userId: String) throws(StoreError) -> Bool {
        try knownUser(applicationKey: applicationKey, userId: userId) != nil
    }

    /// Every user seen, of every application.
    public func knownUsers() throws(StoreError) -> [KnownUser] {
        try knownUsers(applicationKey: nil)
    }

    /// Records a new app-to-app call between the users `caller` and `callee` in state
    /// `initiating`.
    @discardableResult
    public func createCall(id: String, applicationKey: String, caller: String, callee: String, startedTime: Int64) throws(StoreError) -> StoredCall {
        try createCall(id: id, applicationKey: applicationKey, caller: .user(caller), callee: .user(callee), direction: .appToApp,
                       startedTime: startedTime)
    }

    /// Ends a call with a cause other than `error`, without final leg statistics.
    @discardableResult
    public func finishCall(id: String, cause: CallEndCause, at time: Int64) throws(StoreError) -> StoredCall {
        try finishCall(id: id, cause: cause, error: nil, at: time, legs: [])
    }

    /// Ends a call with a cause other than `error` and the legs' final statistics.
    @discardableResult
    public func finishCall(id: String, cause: CallEndCause, at time: Int64, legs: [CallLeg]) throws(StoreError) -> StoredCall {
        try finishCall(id: id, cause: cause, error: nil, at: time, legs: legs)
    }

    /// Ends a call, without final leg statistics.
    @discardableResult
    public func finishCall(id: String, cause: CallEndCause, error: CallError?, at time: Int64) throws(StoreError) -> StoredCall {
        try finishCall(id: id, cause: cause, error: error, at: time, legs: [])
    }

    /// Restart recovery as parleyd runs it: cause `error`, error `server_restarted`.
    @discardableResult
    public func closeCallsInProgress(at time: Int64) throws(StoreError) -> [StoredCall] {
        try closeCallsInProgress(cause: .error, error: .serverRestarted, at: time)
    }

    /// Restart recovery with another cause and the `server_restarted` error (which only
    /// cause `error` accepts).
    @discardableResult
    public func closeCallsInProgress(cause: CallEndCause, at time: Int64) throws(StoreError) -> [StoredCall] {
        try closeCallsInProgress(cause: cause, error: .serverRestarted, at: time)
    }

    /// The call with `id` in any application.
    public func call(id: String) throws(StoreError) -> StoredCall? {
        try call(id: id, applicationKey: nil)
    }

    /// How many calls are in each state, over every application.
    public func callCountsByState() throws(StoreError) -> [CallState: Int] {
        try callCountsByState(applicationKey: nil)
    }

    /// A call's timeline, whatever its application.
    public func callEvents(callId: String) throws(StoreError) -> [CallEvent] {
        try callEvents(callId: callId, applicationKey: nil)
    }

    /// Removes every push token of a device.
    @discardableResult
    public func unregisterPushTokens(applicationKey: String, deviceId: String) throws(StoreError) -> Int {
        try unregisterPushTokens(applicationKey: applicationKey, deviceId: deviceId, token: nil)
    }
}
