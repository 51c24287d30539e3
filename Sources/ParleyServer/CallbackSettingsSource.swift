import Dispatch
public import ParleyNetCore
public import ParleyStore
import Synchronization

/// Where a running server gets each application's callback settings (issue 12: the
/// backend its ICE, ACE, DiCE, PIE and notify events go to): the store's, all of them read
/// at `start` and again every `refreshInterval`, kept here as one snapshot any thread may
/// read without waiting on the store.
///
/// Why a periodic reread, as for the dialling settings (`DiallingSettingsSource`):
/// `parleyd app callback set` changes the store from another process, which tells the
/// server nothing, and neither the call engine's loop nor the callback client may wait on
/// the store when a call arrives. A reread that fails keeps the last settings read (a
/// store hiccup must not switch every application to its static number rules) and logs a
/// warning; the next interval tries again.
///
/// Threads: `settings(applicationKey:)` and `all` from anywhere; `start` and `stop` from
/// anywhere; the store is read on a queue of the source's own, never on `loop`, and the
/// result is applied and the next reread scheduled back on `loop`.
public final class CallbackSettingsSource: Sendable {
    /// How stale a change made outside the server may be before calls follow it.
    public let refreshInterval: Duration

    private struct State {
        var settings: [String: CallbackSettings] = [:]
        var timer: TimerID?
        var loop: (any Scheduler)?
        var stopped = false
        var generation = 0
    }

    private let state = Mutex(State())
    private let reads = DispatchQueue(label: "parley.callbacks.reads")

    public init(refreshInterval: Duration = .seconds(5)) {
        self.refreshInterval = refreshInterval
    }

    /// An application's settings as last read, or nil when it has none (its calls ask no
    /// backend).
    public func settings(applicationKey: String) -> CallbackSettings? {
        state.withLock { $0.settings[applicationKey] }
    }

    /// Every application's settings as last read, by application key.
    public var all: [String: CallbackSettings] {
        state.withLock { $0.settings }
    }

    /// Reads every application's settings now, on the calling thread (start-up, tools and
    /// tests; never the engine's loop). On failure the settings read before stay.
    /// - Throws: the store's error.
    public func refreshNow(from store: StoreQueue) throws(StoreError) {
        let settings = try store.performAndWait { (store) throws(StoreError) in try store.callbackSettingsByApplication() }
        state.withLock { $0.settings = settings }
    }

    /// Reads the settings now (logging a failure), then again every `refreshInterval` on
    /// `loop`'s timers until `stop`. A second `start` is ignored.
    public func start(loop: any Scheduler, store: StoreQueue, log: ServerLog) {
        let started = state.withLock { state -> Bool in
            guard state.loop == nil, !state.stopped else { return false }
            state.loop = loop
            return true
        }
        guard started else { return }
        do {
            try refreshNow(from: store)
        } catch {
            log.error("callback.settings.failed", ["error": error.description])
        }
        scheduleRefresh(loop: loop, store: store, log: log)
    }

    /// Stops the rereads; the settings last read stay readable.
    public func stop() {
        let (timer, loop) = state.withLock { state -> (TimerID?, (any Scheduler)?) in
            state.stopped = true
            state.generation += 1
            defer { state.timer = nil }
            return (state.timer, state.loop)
        }
        if let timer, let loop { loop.cancel(timer) }
    }

    private func scheduleRefresh(loop: any Scheduler, store: StoreQueue, log: ServerLog) {
        state.withLock { state in
            guard !state.stopped else { return }
            let generation = state.generation
            state.timer = loop.schedule(after: refreshInterval) { [self] in
                reads.async { [self] in refresh(generation: generation, loop: loop, store: store, log: log) }
            }
        }
    }

    /// One reread: the store on `reads`, the result back on `loop`, where a `stop` that came
    /// meanwhile drops it.
    private func refresh(generation: Int, loop: any Scheduler, store: StoreQueue, log: ServerLog) {
        let result = Result { () throws(StoreError) in
            try store.performAndWait { (store) throws(StoreError) in try store.callbackSettingsByApplication() }
        }
        loop.execute { [self] in
            let current = state.withLock { state -> Bool in
                guard !state.stopped, state.generation == generation else { return false }
                if case .success(let settings) = result { state.settings = settings }
                return true
            }
            guard current else { return }
            switch result {
            case .success(let settings): log.debug("callback.settings.refreshed", ["applications": String(settings.count)])
            case .failure(let error): log.warning("callback.settings.failed", ["error": error.description])
            }
            scheduleRefresh(loop: loop, store: store, log: log)
        }
    }
}
