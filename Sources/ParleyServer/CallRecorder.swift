import ParleyCallModel
import ParleyWireCore
import ParleyCallCore
import ParleySignaling
import ParleyStore
import ParleyVoiceAPI
import Synchronization

/// Persists the call engine's `CallRecord` versions: `createCall` for a new call,
/// `updateCallState` for each state reached (with that state's time), `finishCall` with
/// the cause and the legs' statistics for the last one.
///
/// Every write goes to a `StoreWriter` (a connection and a thread of its own, group
/// commits, retried while the store is locked or failing), so the engine's loop never
/// waits on the store. `persist` returns the write's ticket and whether the engine must
/// wait for it before acting on this version: a new call (its `result` reply, the
/// callee's `call.incoming`) and an ended one (its `call.ended`) are acted on only once
/// their record is committed; the engine learns that through `committed`, on its loop.
/// Used on the engine's loop only.
final class CallRecorder: @unchecked Sendable {
    // @unchecked: `progress` and `sipWritten` are touched on the engine's loop only; the writer is Sendable.
    private let writer: StoreWriter
    private let log: ServerLog
    private let metrics: ServerMetrics
    /// The states already written per call in progress.
    private var progress: [String: Set<CallState>] = [:]
    /// The SIP Call-ID and final status already written per call in progress.
    private var sipWritten: [String: SIPFields] = [:]

    /// A record's SIP fields, to write them once each time they change.
    private struct SIPFields: Equatable {
        var callID: String?
        var status: Int?
    }
    /// Who hears of commits (set once by the engine; called on the writer's thread).
    private let relay: CommitRelay

    /// Opens a store connection of its own through `stores` for the writes.
    init(stores: CallStoreFactory, log: ServerLog, metrics: ServerMetrics) throws(StoreError) {
        self.log = log
        self.metrics = metrics
        let relay = CommitRelay()
        self.relay = relay
        writer = try StoreWriter(
            opening: stores, label: "parley.recorder",
            onCommitted: { ticket in
                relay.handler.withLock { $0 }?(ticket)
            },
            onFailure: { failure in
                if failure.willRetry {
                    metrics.update { $0.storeWriteRetries += 1 }
                    log.warning("store.write.retry", ["error": failure.error.description,
                                                       "retryInMs": String((failure.retryAfter ?? .zero).wholeMilliseconds)])
                } else {
                    metrics.update { $0.storeWritesDropped += 1 }
                    log.error("call.record.failed", ["call": failure.subject ?? "-", "operation": failure.write ?? "-",
                                                     "error": failure.error.description])
                }
            })
    }

    /// Sets who is called (on the writer's thread) with the highest ticket whose write is
    /// done; it must hop to the engine's loop before touching the engine's state.
    func onCommitted(_ body: @escaping @Sendable (UInt64) -> Void) {
        relay.handler.withLock { $0 = body }
    }

    /// The ticket of the last write handed over.
    var lastTicket: UInt64 { writer.lastTicket }

    /// The highest ticket whose write is done.
    var doneTicket: UInt64 { writer.doneTicket }

    /// Writes waiting for the store.
    var pendingWrites: Int { writer.statistics.pending }

    /// Stores this version of a record. `legs` are the final figures, for an ended record.
    /// - Returns: the ticket of this version's last write, and whether the engine must
    ///   wait for it before acting (a new or an ended record).
    @discardableResult
    func persist(_ record: CallRecord, legs: [CallLeg]) -> (ticket: UInt64, mustWait: Bool) {
        let id = record.callID
        var written = progress[id]
        var ticket: UInt64 = writer.lastTicket
        var mustWait = false
        if written == nil {
            written = []
            mustWait = true
            metrics.update { $0.callsStarted += 1 }
            let applicationKey = record.applicationKey
            let (caller, callee, direction) = (record.caller, record.callee, record.direction)
            let started = record.times.startedTime
            let log = self.log
            ticket = enqueue(.init(name: "createCall", subject: id, durable: false, committed: {
                log.info("call.record.created", ["call": id, "caller": caller.address, "callee": callee.address])
            }) { (store) throws(StoreError) in
                try store.createCall(id: id, applicationKey: applicationKey, caller: caller, callee: callee, direction: direction,
                                     startedTime: started)
            })
        }
        let reached: [(CallState, Int64?)] = [
            (.progressing, record.times.progressedTime), (.ringing, record.times.rungTime),
            (.answered, record.times.answeredTime), (.established, record.times.establishedTime),
        ]
        // A state before one written already is not written: a call the server answered
        // itself (established) that goes on to a callee rings again, and its record stays
        // established while it does (`ServerAnsweredCalls`).
        let latest = reached.lastIndex { written?.contains($0.0) == true } ?? -1
        for (index, (state, time)) in reached.enumerated() where index > latest {
            guard let time, written?.contains(state) == false else { continue }
            written?.insert(state)
            if state == .established { metrics.update { $0.callsEstablished += 1 } }
            ticket = enqueue(.init(name: "updateCallState", subject: id, durable: false) { (store) throws(StoreError) in
                try store.updateCallState(id: id, to: state, at: time)
            })
        }
        let sip = SIPFields(callID: record.sipCallID, status: record.sipStatus)
        if sip != SIPFields(), sip != sipWritten[id] {
            sipWritten[id] = sip
            ticket = enqueue(.init(name: "recordSIP", subject: id, durable: false) { (store) throws(StoreError) in
                try store.recordSIP(callId: id, sipCallId: sip.callID, sipStatus: sip.status)
            })
        }
        guard record.state == .ended, let cause = record.endCause else {
            progress[id] = written
            return (ticket, mustWait)
        }
        progress[id] = nil
        sipWritten[id] = nil
        let endedTime = record.times.endedTime ?? ServerClock.unixMillis()
        let error = cause == .error ? record.error ?? CallError(code: "internal_error", message: "call failed") : nil
        let durationMs = record.times.answeredTime.map { max(0, endedTime - $0) } ?? 0
        metrics.update { $0.callsEnded[cause.rawValue, default: 0] += 1 }
        let log = self.log
        ticket = enqueue(.init(name: "finishCall", subject: id, durable: true, committed: {
            log.info("call.record.finished", [
                "call": id, "cause": cause.rawValue, "error": error?.code ?? "-", "durationMs": String(durationMs),
            ])
        }) { (store) throws(StoreError) in
            try store.finishCall(id: id, cause: cause, error: error, at: endedTime, legs: legs)
        })
        return (ticket, true)
    }

    /// The timeline event that keeps the `result` and `reason` of a call's DiCE:
    /// `{"result": "BUSY", "reason": "CALLEEHANGUP"}`, read back by
    /// `GET /calling/v1/calls/id/{callId}` so that it says what the DiCE said.
    static let outcomeEventKind = "call.outcome"

    /// Stores the `result` and `reason` of a call's DiCE on its timeline, in order with the
    /// call's other writes (so before its `finishCall` when that comes later). The call's
    /// record must have been created (`persist`) first.
    func recordOutcome(callID: String, applicationKey: String, _ outcome: SinchCallOutcome, at time: Int64) {
        let event = CallEvent(time: time, kind: Self.outcomeEventKind,
                              detail: ["result": outcome.result.rawValue, "reason": outcome.reason.rawValue])
        enqueue(.init(name: "recordOutcome", subject: callID, durable: false) { (store) throws(StoreError) in
            _ = try store.recordCallEvent(callId: callID, applicationKey: applicationKey, event)
        })
    }

    /// Stores a leg's figures of a call in progress, so the record keeps them even if the
    /// process dies before the call ends.
    func recordLeg(callID: String, _ leg: CallLeg) {
        enqueue(.init(name: "recordLeg", subject: callID, durable: false) { (store) throws(StoreError) in
            try store.recordLeg(callId: callID, leg)
        })
    }

    /// Stores the playout counters a device reported for its leg (`call.stats`), in order
    /// with the call's other writes (after its `createCall`, whether or not it ended).
    func recordPlayout(callID: String, role: CallLegRole, _ playout: CallLegPlayout) {
        enqueue(.init(name: "recordLegPlayout", subject: callID, durable: false) { (store) throws(StoreError) in
            try store.recordLegPlayout(callId: callID, role: role, playout)
        })
    }

    /// Notes (in order with the call writes) that a device of `user` connected.
    func recordUserSeen(_ user: AppUser, at time: Int64) {
        enqueue(.init(name: "recordUserSeen", subject: nil, durable: false) { (store) throws(StoreError) in
            _ = try store.recordUserSeen(applicationKey: user.applicationKey, userId: user.userID, at: time)
        })
    }

    /// Waits until every queued write is done, at most `timeout` (shutdown, tests);
    /// returns whether they are.
    @discardableResult
    func flush(timeout: Duration = .seconds(10)) -> Bool {
        writer.flush(timeout: timeout)
    }

    @discardableResult
    private func enqueue(_ write: StoreWriter.Write) -> UInt64 {
        let ticket = writer.enqueue(write)
        let pending = writer.statistics.pending
        metrics.update { $0.storeWritesPending = pending }
        return ticket
    }
}

/// Carries the engine's commit handler to the writer's callback, which exists before the
/// engine does.
private final class CommitRelay: Sendable {
    let handler = Mutex<(@Sendable (UInt64) -> Void)?>(nil)
}
