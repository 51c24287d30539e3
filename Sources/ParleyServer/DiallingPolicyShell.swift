import Dispatch
import ParleyCallModel
import ParleyCallCore
import ParleyNetCore
import ParleyStore

/// The call engine's side of the per-application dialling policy: it brings the store's
/// settings to the engine's `CallRegistry` (at start, then every refresh interval, off the
/// loop) and turns the registry's refusals into the `parley_dialling_refusals_total`
/// counter and `call.dialling.refused` log lines.
///
/// Threads: `start`, `stop` and `report` run on the engine's loop; the store is read on
/// a queue of its own, and the result is handed to `apply` back on the loop.
final class DiallingPolicyShell: @unchecked Sendable {
    // @unchecked: `timer` and `stopped` are touched only on `loop`; the rest is immutable.
    private let loop: any Scheduler
    private let store: StoreQueue
    private let interval: Duration
    private let log: ServerLog
    private let metrics: ServerMetrics
    private let apply: ([String: DiallingSettings]) -> Void
    private let reads = DispatchQueue(label: "parley.dialling.reads")
    private var timer: TimerID?
    private var stopped = false

    /// - Parameter apply: takes every application's settings, on the loop.
    init(source: DiallingSettingsSource, loop: any Scheduler, store: StoreQueue, log: ServerLog, metrics: ServerMetrics,
         apply: @escaping ([String: DiallingSettings]) -> Void) {
        self.loop = loop
        self.store = store
        interval = source.refreshInterval
        self.log = log
        self.metrics = metrics
        self.apply = apply
        // Every reason at 0 from the first scrape, so a rate can be taken at once.
        metrics.update { $0.diallingRefusals = [:] }
    }

    /// Every application's settings now, read on the calling thread (start-up only). A
    /// store that fails gives none: until a refresh succeeds every application has the
    /// defaults, which dial nothing.
    func loadNow() -> [String: DiallingSettings] {
        do {
            return try store.performAndWait { (store) throws(StoreError) in try Self.settings(in: store) }
        } catch {
            log.error("dialling.settings.failed", ["error": error.description])
            return [:]
        }
    }

    /// Rereads the settings every interval until `stop` (on the loop).
    func start() {
        guard !stopped else { return }
        timer = loop.schedule(after: interval) { [self] in
            timer = nil
            guard !stopped else { return }
            reads.async { [self] in
                let result = Result { () throws(StoreError) in
                    try store.performAndWait { (store) throws(StoreError) in try Self.settings(in: store) }
                }
                loop.execute { [self] in
                    guard !stopped else { return }
                    switch result {
                    case .success(let settings):
                        apply(settings)
                        log.debug("dialling.settings.refreshed", ["applications": String(settings.count)])
                    case .failure(let error): log.warning("dialling.settings.failed", ["error": error.description])
                    }
                    start()
                }
            }
        }
    }

    /// Stops the rereads (on the loop).
    func stop() {
        stopped = true
        if let timer { loop.cancel(timer) }
        timer = nil
    }

    /// Counts and logs what the policy refused (on the loop).
    func report(_ refusals: [DiallingRefusal]) {
        guard !refusals.isEmpty else { return }
        metrics.update { counters in
            for refusal in refusals { counters.diallingRefusals?[refusal.reason.rawValue, default: 0] += 1 }
        }
        for refusal in refusals {
            log.info("call.dialling.refused", [
                "call": refusal.callID, "app": refusal.applicationKey, "reason": refusal.reason.rawValue,
                "to": refusal.destination, "code": refusal.reason.code.rawValue,
            ])
        }
    }

    private static func settings(in store: any CallStore) throws(StoreError) -> [String: DiallingSettings] {
        var settings: [String: DiallingSettings] = [:]
        for application in try store.applications() { settings[application.key] = application.dialling }
        return settings
    }
}
