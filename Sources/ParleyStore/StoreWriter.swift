import Dispatch
import Synchronization
import ParleyWireCore

/// Writes to the store in order, many per commit, on a connection and a queue of its own,
/// retrying what the store could not commit now, so that no caller ever waits on the disk.
/// It works on any `CallStore` (it uses `transaction(durable:)` and `StoreError.isTransient`).
///
/// `enqueue` hands over one write and returns its ticket at once; the writes run in
/// ticket order on the writer's queue, as many as are waiting (up to `maxBatch`) in one
/// transaction (a group commit). `onCommitted` is called with the highest ticket whose
/// write is done (committed, or refused for good and reported through `onFailure`), so a
/// caller that must not act before a write is durable waits for that ticket without
/// blocking a thread.
///
/// A transaction that fails for a reason that passes (the file is locked or busy past
/// the busy timeout, disk full, an I/O error) is rolled back and retried, all of its
/// writes in the same order, after a back-off that doubles from `retryDelay` up to
/// `maxRetryDelay`, for as long as it takes: a write is never lost to a locked store. A
/// write refused for good (an unknown call, a call already ended, a constraint) is left
/// out, reported, and the others commit without it.
///
/// ```swift
/// let writer = try StoreWriter(opening: stores, onCommitted: { ticket in loop.execute { release(upTo: ticket) } })
/// let ticket = writer.enqueue(.init(name: "createCall", subject: id, durable: false) { try $0.createCall(...) })
/// ```
public final class StoreWriter: Sendable {
    /// One write: a closure run with the writer's store inside the batch's transaction.
    public struct Write: Sendable {
        /// What it does, for logs (`createCall`, `finishCall`, ...).
        public var name: String
        /// What it is about (a call id), for logs; nil for none.
        public var subject: String?
        /// Whether its commit must be as durable as the store's `durability` allows
        /// (with `.powerLoss`, the batch's commit waits for `fsync`).
        public var durable: Bool
        /// Runs in the transaction; it may run more than once (a retried transaction), so it
        /// must only change the store.
        public var body: @Sendable (any CallStore) throws(StoreError) -> Void
        /// Runs on the writer's queue once the write is committed (logs, counters).
        public var committed: (@Sendable () -> Void)?

        public init(name: String, subject: String?, durable: Bool, committed: (@Sendable () -> Void)? = nil,
                    _ body: @escaping @Sendable (any CallStore) throws(StoreError) -> Void) {
            self.name = name
            self.subject = subject
            self.durable = durable
            self.committed = committed
            self.body = body
        }
    }

    /// Why a write or a transaction did not commit.
    public struct Failure: Sendable, CustomStringConvertible {
        /// The write refused for good, or nil when the whole transaction failed and will be retried.
        public var write: String?
        public var subject: String?
        public var error: StoreError
        /// Whether the writes will be tried again (false: this write is dropped).
        public var willRetry: Bool
        /// How long until the next attempt, when `willRetry`.
        public var retryAfter: Duration?

        public var description: String {
            let what = write.map { "\($0)\(subject.map { " \($0)" } ?? "")" } ?? "transaction"
            return willRetry ? "\(what): \(error) (retrying in \(retryAfter ?? .zero))" : "\(what): \(error) (dropped)"
        }
    }

    /// Counts since the writer started.
    public struct Statistics: Sendable, Hashable {
        /// Writes handed over and not yet done.
        public var pending = 0
        /// Writes committed.
        public var committed = 0
        /// Transactions that failed and were retried.
        public var retries = 0
        /// Writes refused for good and left out.
        public var dropped = 0
        /// Transactions committed.
        public var commits = 0
    }

    private struct State: Sendable {
        var queued: [(ticket: UInt64, write: Write)] = []
        var nextTicket: UInt64 = 1
        var done: UInt64 = 0
        var draining = false
        var closed = false
        var statistics = Statistics()
        var waiters: [(ticket: UInt64, semaphore: DispatchSemaphore)] = []
    }

    /// Writes per transaction, at most.
    public let maxBatch: Int
    public let retryDelay: Duration
    public let maxRetryDelay: Duration

    // The store is used only on `queue` (one block at a time), which is what makes a
    // non-Sendable connection safe here.
    private nonisolated(unsafe) let store: any CallStore
    private let queue: DispatchQueue
    private let state = Mutex(State())
    private let onCommitted: @Sendable (UInt64) -> Void
    private let onFailure: @Sendable (Failure) -> Void

    /// Takes over `store`, a connection nobody else uses, for the writes.
    public init(
        store: sending any CallStore,
        maxBatch: Int = 256, retryDelay: Duration = .milliseconds(20), maxRetryDelay: Duration = .seconds(1),
        label: String = "parley.store.writer",
        onCommitted: @escaping @Sendable (UInt64) -> Void = { _ in },
        onFailure: @escaping @Sendable (Failure) -> Void = { _ in }
    ) {
        self.store = store
        queue = DispatchQueue(label: label)
        self.maxBatch = max(1, maxBatch)
        self.retryDelay = retryDelay
        self.maxRetryDelay = max(retryDelay, maxRetryDelay)
        self.onCommitted = onCommitted
        self.onFailure = onFailure
    }

    /// Opens a connection of its own (`.writer`) through `factory`.
    public convenience init(
        opening factory: CallStoreFactory,
        maxBatch: Int = 256, retryDelay: Duration = .milliseconds(20), maxRetryDelay: Duration = .seconds(1),
        label: String = "parley.store.writer",
        onCommitted: @escaping @Sendable (UInt64) -> Void = { _ in },
        onFailure: @escaping @Sendable (Failure) -> Void = { _ in }
    ) throws(StoreError) {
        self.init(store: try factory.open(for: .writer), maxBatch: maxBatch, retryDelay: retryDelay, maxRetryDelay: maxRetryDelay,
                  label: label, onCommitted: onCommitted, onFailure: onFailure)
    }

    /// Hands over a write; returns its ticket (increasing from 1). Never blocks. After
    /// `close()` the write is refused: the ticket returned is 0.
    @discardableResult
    public func enqueue(_ write: Write) -> UInt64 {
        let (ticket, start) = state.withLock { state -> (UInt64, Bool) in
            guard !state.closed else { return (0, false) }
            let ticket = state.nextTicket
            state.nextTicket += 1
            state.queued.append((ticket, write))
            state.statistics.pending += 1
            let start = !state.draining
            state.draining = true
            return (ticket, start)
        }
        if start { queue.async { self.drain(attempt: 0) } }
        return ticket
    }

    /// The highest ticket whose write is done (committed or dropped); every lower one is too.
    public var doneTicket: UInt64 { state.withLock { $0.done } }

    /// The ticket the next `enqueue` will return, minus one: the last handed out.
    public var lastTicket: UInt64 { state.withLock { $0.nextTicket - 1 } }

    public var statistics: Statistics { state.withLock { $0.statistics } }

    /// Waits until every write handed over so far is done, at most `timeout`; returns
    /// whether they are (false: the store stayed unavailable; the writes are still queued).
    @discardableResult
    public func flush(timeout: Duration) -> Bool {
        let semaphore = DispatchSemaphore(value: 0)
        let waiting = state.withLock { state -> Bool in
            let target = state.nextTicket - 1
            guard state.done < target else { return false }
            state.waiters.append((target, semaphore))
            return true
        }
        guard waiting else { return true }
        if semaphore.wait(timeout: .now() + .nanoseconds(Int(clamping: max(0, timeout.wholeNanoseconds)))) == .success { return true }
        state.withLock { state in state.waiters.removeAll { $0.semaphore === semaphore } }
        return false
    }

    /// Refuses new writes; those queued still run (use `flush` first to wait for them).
    public func close() {
        state.withLock { $0.closed = true }
    }

    // MARK: The writer's queue

    private func drain(attempt: Int) {
        let batch = state.withLock { Array($0.queued.prefix(maxBatch)) }
        guard !batch.isEmpty else {
            let more = state.withLock { state -> Bool in
                if state.queued.isEmpty { state.draining = false }
                return !state.queued.isEmpty
            }
            if more { queue.async { self.drain(attempt: 0) } }
            return
        }
        var excluded: Set<UInt64> = []
        var dropped: [Failure] = []
        while true {
            do throws(BatchError) {
                try commit(batch, excluding: excluded)
                break
            } catch {
                guard case .transient(let error) = error else {
                    // Refused for good inside a transaction that was rolled back: run the
                    // batch again without it.
                    if case .refused(let ticket, let write, let error) = error {
                        excluded.insert(ticket)
                        dropped.append(Failure(write: write.name, subject: write.subject, error: error, willRetry: false, retryAfter: nil))
                    }
                    continue
                }
                let delay = retryDelay(after: attempt)
                state.withLock { $0.statistics.retries += 1 }
                onFailure(Failure(write: nil, subject: nil, error: error, willRetry: true, retryAfter: delay))
                queue.asyncAfter(deadline: .now() + Self.dispatchInterval(delay)) { self.drain(attempt: attempt + 1) }
                return
            }
        }
        for failure in dropped { onFailure(failure) }
        for (ticket, write) in batch where !excluded.contains(ticket) { write.committed?() }
        let last = batch[batch.count - 1].ticket
        let wake = state.withLock { state -> [DispatchSemaphore] in
            state.queued.removeFirst(batch.count)
            state.done = last
            state.statistics.pending -= batch.count
            state.statistics.committed += batch.count - excluded.count
            state.statistics.dropped += excluded.count
            state.statistics.commits += 1
            let ready = state.waiters.filter { $0.ticket <= last }.map(\.semaphore)
            state.waiters.removeAll { $0.ticket <= last }
            return ready
        }
        onCommitted(last)
        for semaphore in wake { semaphore.signal() }
        drain(attempt: 0)
    }

    private enum BatchError: Error {
        case transient(StoreError)
        case refused(UInt64, Write, StoreError)
    }

    /// One transaction with every write of `batch` but `excluded`. A write's own refusal
    /// (not found, ended, ...) rolls back only its savepoint and is reported as `refused`
    /// after the transaction is abandoned, so the rest can go again without it.
    private func commit(_ batch: [(ticket: UInt64, write: Write)], excluding excluded: Set<UInt64>) throws(BatchError) {
        let durable = batch.contains { !excluded.contains($0.ticket) && $0.write.durable }
        var refusal: (UInt64, Write, StoreError)?
        do throws(StoreError) {
            try store.transaction(durable: durable) { (store) throws(StoreError) in
                for (ticket, write) in batch where !excluded.contains(ticket) {
                    do throws(StoreError) {
                        try write.body(store)
                    } catch where error.isTransient {
                        throw error
                    } catch {
                        refusal = (ticket, write, error)
                        throw error
                    }
                }
            }
        } catch {
            if let refusal { throw .refused(refusal.0, refusal.1, refusal.2) }
            throw .transient(error)
        }
    }

    private func retryDelay(after attempt: Int) -> Duration {
        var delay = retryDelay
        for _ in 0..<min(attempt, 16) where delay < maxRetryDelay { delay *= 2 }
        return min(delay, maxRetryDelay)
    }

    private static func dispatchInterval(_ duration: Duration) -> DispatchTimeInterval {
        .nanoseconds(Int(clamping: duration.wholeNanoseconds))
    }
}
