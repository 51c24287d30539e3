import Dispatch
import ParleyCalling
import ParleySignaling
import ParleyStore

/// Persists the call engine's `CallRecord` versions: `createCall` for a new call,
/// `updateCallState` for each state reached (with that state's time), `finishCall` with
/// the cause and the legs' statistics for the last one.
///
/// In-progress updates go to the store in order on a queue of their own (the engine's
/// loop does not wait for them). The final version is written synchronously, behind every
/// earlier write, before the engine sends `call.ended`: a call a device has seen end is
/// in the store (committed, WAL) by then. Used on the engine's loop only.
final class CallRecorder: @unchecked Sendable {
    // @unchecked: `progress` is touched on the engine's loop only; the store is Sendable.
    private let store: StoreQueue
    private let log: ServerLog
    private let metrics: ServerMetrics
    /// Serializes the writes so a call's create, updates and finish reach SQLite in order.
    private let writes = DispatchQueue(label: "parley.recorder")
    /// The states already written per call in progress.
    private var progress: [String: Set<CallState>] = [:]

    init(store: StoreQueue, log: ServerLog, metrics: ServerMetrics) {
        self.store = store
        self.log = log
        self.metrics = metrics
    }

    /// Stores this version of a record. `legs` are the final figures, for an ended record.
    func persist(_ record: CallRecord, legs: [CallLeg]) {
        let id = record.callID
        var written = progress[id]
        if written == nil {
            written = []
            metrics.update { $0.callsStarted += 1 }
            log.info("call.record.created", ["call": id, "caller": record.caller.userID, "callee": record.callee.userID])
            let applicationKey = record.caller.applicationKey
            let caller = record.caller.userID
            let callee = record.callee.userID
            let started = record.startedTime
            enqueue(id) { (store) throws(StoreError) in
                try store.createCall(id: id, applicationKey: applicationKey, caller: caller, callee: callee, startedTime: started)
            }
        }
        let reached: [(CallState, Int64?)] = [
            (.progressing, record.progressedTime), (.ringing, record.rungTime),
            (.answered, record.answeredTime), (.established, record.establishedTime),
        ]
        for (state, time) in reached {
            guard let time, written?.contains(state) == false else { continue }
            written?.insert(state)
            if state == .established { metrics.update { $0.callsEstablished += 1 } }
            enqueue(id) { (store) throws(StoreError) in try store.updateCallState(id: id, to: state, at: time) }
        }
        guard record.state == .ended, let cause = record.endCause else {
            progress[id] = written
            return
        }
        progress[id] = nil
        let endedTime = record.endedTime ?? ServerClock.unixMillis()
        let error = cause == .error
            ? CallError(code: record.errorCode ?? "internal_error", message: record.errorMessage ?? "call failed") : nil
        metrics.update { $0.callsEnded[cause.rawValue, default: 0] += 1 }
        let result: Result<StoredCall, StoreError> = writes.sync {
            Result { () throws(StoreError) -> StoredCall in
                try store.performAndWait { (store) throws(StoreError) -> StoredCall in
                    try store.finishCall(id: id, cause: cause, error: error, at: endedTime, legs: legs)
                }
            }
        }
        switch result {
        case .success(let stored):
            log.info("call.record.finished", [
                "call": id, "cause": cause.rawValue, "error": error?.code ?? "-", "durationMs": String(stored.durationMs ?? 0),
            ])
        case .failure(let failure):
            log.error("call.record.failed", ["call": id, "operation": "finishCall", "error": failure.description])
        }
    }

    /// Stores a leg's figures of a call in progress, so the record keeps them even if the
    /// process dies before the call ends.
    func recordLeg(callID: String, _ leg: CallLeg) {
        enqueue(callID) { (store) throws(StoreError) in try store.recordLeg(callId: callID, leg) }
    }

    /// Notes (in order with the call writes) that a device of `user` connected.
    func recordUserSeen(_ user: AppUser, at time: Int64) {
        enqueue(nil) { (store) throws(StoreError) in
            _ = try store.recordUserSeen(applicationKey: user.applicationKey, userId: user.userID, at: time)
        }
    }

    /// Waits until every queued write is done (shutdown, tests).
    func flush() {
        writes.sync {}
    }

    private func enqueue(_ id: String?, _ body: @escaping @Sendable (SQLiteStore) throws(StoreError) -> Void) {
        let store = self.store
        let log = self.log
        writes.async {
            do throws(StoreError) {
                try store.performAndWait(body)
            } catch {
                if let id {
                    log.error("call.record.failed", ["call": id, "error": error.description])
                } else {
                    log.error("store.write.failed", ["error": error.description])
                }
            }
        }
    }
}
