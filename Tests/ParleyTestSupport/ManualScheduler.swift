import Dispatch
import Glibc
public import ParleyNetCore
import ParleyWireCore
import Synchronization

/// A ``Scheduler`` in virtual time, for tests: work handed to it runs only when the test
/// calls ``run()`` or ``advance(by:)``, on the test's thread, and its clock moves only when
/// the test advances it (swift-nio's `EmbeddedEventLoop` with `advanceTime` is the model).
/// Code written against `Scheduler` (the call engine, the session shell, the media
/// anchor's timers) therefore runs its hello timeouts, heartbeats and reconnect graces in
/// microseconds of real time and in a repeatable order.
///
/// Other threads (a store's writer, a read queue) may call ``execute(_:)``; their work waits
/// for the test's next `run`, and ``run(until:timeout:)`` waits (bounded, without sleeping)
/// for such work to arrive.
public final class ManualScheduler: Scheduler, Sendable {
    private struct Timer: Comparable {
        let deadline: ContinuousClock.Instant
        let id: UInt64
        static func < (a: Timer, b: Timer) -> Bool { (a.deadline, a.id) < (b.deadline, b.id) }
    }

    private struct State {
        var now: ContinuousClock.Instant
        var tasks: [@Sendable () -> Void] = []
        var timers = MinHeap<Timer>()
        var timerWork: [UInt64: @Sendable () -> Void] = [:]
        var nextID: UInt64 = 1
        var runner: pthread_t?
        var stopped = false
    }

    private let state: Mutex<State>
    /// Signalled for work that arrives from other threads.
    private let arrived = DispatchSemaphore(value: 0)

    /// A scheduler whose virtual clock starts at `start` (the real now by default; the
    /// value only matters relative to the deadlines the code under test computes).
    public init(start: ContinuousClock.Instant = .now) {
        state = Mutex(State(now: start))
    }

    public var now: ContinuousClock.Instant { state.withLock { $0.now } }

    public var inScheduler: Bool {
        state.withLock { state in state.runner.map { pthread_equal($0, pthread_self()) != 0 } ?? false }
    }

    /// Work queued and not yet run (not counting timers).
    public var queuedCount: Int { state.withLock { $0.tasks.count } }

    /// Timers scheduled and neither run nor cancelled.
    public var pendingTimerCount: Int { state.withLock { $0.timerWork.count } }

    /// The earliest pending timer's deadline.
    public var nextDeadline: ContinuousClock.Instant? {
        state.withLock { state in
            while let top = state.timers.min, state.timerWork[top.id] == nil { _ = state.timers.popMin() }
            return state.timers.min?.deadline
        }
    }

    @discardableResult
    public func execute(_ work: @escaping @Sendable () -> Void) -> Bool {
        let accepted = state.withLock { state -> Bool in
            guard !state.stopped else { return false }
            state.tasks.append(work)
            return true
        }
        if accepted { arrived.signal() }
        return accepted
    }

    @discardableResult
    public func schedule(at deadline: ContinuousClock.Instant, _ work: @escaping @Sendable () -> Void) -> TimerID {
        state.withLock { state in
            let id = state.nextID
            state.nextID += 1
            if !state.stopped {
                state.timers.push(Timer(deadline: deadline, id: id))
                state.timerWork[id] = work
            }
            return TimerID(value: id)
        }
    }

    @discardableResult
    public func cancel(_ timer: TimerID) -> Bool {
        state.withLock { $0.timerWork.removeValue(forKey: timer.value) != nil }
    }

    /// Runs `body` now, on the calling thread, as the scheduler's work (work it would run
    /// later is not run first); nil once stopped.
    public func runAndWait<T: Sendable>(_ body: @escaping @Sendable () -> T) -> T? {
        guard !state.withLock({ $0.stopped }) else { return nil }
        if inScheduler { return body() }
        var result: T?
        runAsScheduler { result = body() }
        return result
    }

    /// Runs queued work, including what that work queues, until none is left; timers due
    /// at the current virtual time run too. Returns how many pieces ran.
    @discardableResult
    public func run() -> Int {
        var ran = 0
        while let work = nextDue() {
            runAsScheduler(work)
            ran += 1
        }
        return ran
    }

    /// Moves virtual time forward by `delay`, running every timer that falls due on the way
    /// at its own deadline (the clock reads that deadline while it runs), and queued work
    /// after each.
    public func advance(by delay: Duration) {
        advance(to: now.advanced(by: delay))
    }

    /// Moves virtual time forward to `instant` (never backward), as ``advance(by:)``.
    public func advance(to instant: ContinuousClock.Instant) {
        run()
        while let work = nextTimer(notAfter: instant) {
            runAsScheduler(work)
            run()
        }
        state.withLock { if $0.now < instant { $0.now = instant } }
        run()
    }

    /// Runs work as it comes, also work that other threads hand over, until `condition`
    /// holds or `timeout` of real time passed (waiting on the hand-over, never sleeping).
    /// Virtual time does not move. True if the condition held.
    @discardableResult
    public func run(until condition: () -> Bool, timeout: Duration = .seconds(10)) -> Bool {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while true {
            run()
            if condition() { return true }
            let left = ContinuousClock.now.duration(to: deadline)
            guard left > .zero else { return false }
            _ = arrived.wait(timeout: .now() + .milliseconds(Int(clamping: left.wholeMilliseconds) + 1))
        }
    }

    /// Drops all queued work and timers; later work is refused.
    public func stop() {
        state.withLock { state in
            state.stopped = true
            state.tasks = []
            state.timerWork = [:]
            state.timers.removeAll()
        }
    }

    private func nextDue() -> (@Sendable () -> Void)? {
        state.withLock { state in
            if !state.tasks.isEmpty { return state.tasks.removeFirst() }
            return Self.popTimer(&state, notAfter: state.now)
        }
    }

    private func nextTimer(notAfter limit: ContinuousClock.Instant) -> (@Sendable () -> Void)? {
        state.withLock { state in Self.popTimer(&state, notAfter: limit) }
    }

    /// The earliest live timer due by `limit`, with the clock moved to its deadline.
    private static func popTimer(_ state: inout State, notAfter limit: ContinuousClock.Instant) -> (@Sendable () -> Void)? {
        while let top = state.timers.min, top.deadline <= limit {
            _ = state.timers.popMin()
            guard let work = state.timerWork.removeValue(forKey: top.id) else { continue }
            if state.now < top.deadline { state.now = top.deadline }
            return work
        }
        return nil
    }

    private func runAsScheduler(_ work: () -> Void) {
        let previous = state.withLock { state -> pthread_t? in
            let previous = state.runner
            state.runner = pthread_self()
            return previous
        }
        work()
        state.withLock { $0.runner = previous }
    }
}
