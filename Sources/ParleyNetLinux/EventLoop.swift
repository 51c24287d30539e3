import ParleyWireCore
public import ParleyNetCore
import Glibc
import CLinux
import Dispatch
import Synchronization

/// Anything an ``EventLoop`` can watch: an object owning one file descriptor, which the
/// loop closes on shutdown when registered with `closeOnShutdown`. ``UDPSocket``,
/// ``TCPSocket`` and ``TCPListener`` conform.
public protocol EventLoopDescriptor: AnyObject, Sendable {
    /// The descriptor to poll; stays valid until ``close()``.
    var fileDescriptor: Int32 { get }
    /// Closes the descriptor; later calls do nothing.
    func close()
}

extension UDPSocket: EventLoopDescriptor {}

/// One I/O thread: `epoll_wait` over registered sockets, an `eventfd` so other threads can
/// hand it closures (``execute(_:)``), and a min-heap of timers. It never spins: when idle it
/// sleeps in `epoll_wait` with the timeout set to the next timer's deadline.
///
/// Each iteration: wait for readiness -> call the read handlers of ready sockets -> fire the
/// timers that are due (in deadline order) -> run the closures queued by other threads.
///
/// Threading: ``execute(_:)``, ``schedule(at:_:)``, ``cancel(_:)`` and ``shutdown()`` may be
/// called from any thread. ``register(_:closeOnShutdown:onReadable:onWritable:)``, ``setWritableInterest(_:_:)`` and
/// ``deregister(_:)`` must run on the loop (inside ``execute(_:)`` or a handler); their
/// handlers then run only on the loop thread, so they may own non-Sendable state such as a
/// ``UDPReceiveBatch``.
///
/// The loop also serves as a `SerialExecutor`, so an actor owning sockets can run its
/// methods on the loop that does its I/O.
public final class EventLoop: Scheduler, @unchecked Sendable {
    // @unchecked Sendable: state shared between threads lives in `shared` (a Mutex) and in
    // atomics; `registrations`, `nextGeneration` and the task buffer are touched only by the
    // loop thread (register/deregister check `inEventLoop`).

    private struct TimerEntry: Comparable {
        let deadline: ContinuousClock.Instant
        let id: UInt64
        static func < (a: TimerEntry, b: TimerEntry) -> Bool {
            a.deadline == b.deadline ? a.id < b.id : a.deadline < b.deadline
        }
    }

    private enum State { case running, stopping, stopped }

    private struct Shared {
        var tasks: [@Sendable () -> Void] = []
        var timers = MinHeap<TimerEntry>()
        var timerWork: [UInt64: @Sendable () -> Void] = [:]
        var nextTimerID: UInt64 = 1
        var wakePending = false
        var state = State.running
        var thread: pthread_t?
    }

    private struct Registration {
        let socket: any EventLoopDescriptor
        let closeOnShutdown: Bool
        let onReadable: () -> Void
        let onWritable: (() -> Void)?
    }

    /// The name given to the thread (visible in `top -H`).
    public let name: String
    private let epollFD: Int32
    private let wakeFD: Int32
    private let shared = Mutex(Shared())
    private let threadID = Atomic<UInt>(0)
    /// After shutdown, jobs of actors that live on this loop still arrive (a task resuming
    /// after an `await`, a call racing the shutdown). They run one at a time on this serial
    /// queue once the loop's thread has exited, so the actor keeps exclusive access to its
    /// state; the thread running one is `afterlifeThread` meanwhile.
    private let afterlife = DispatchQueue(label: "parley.loop.afterlife")
    private let afterlifeThread = Atomic<UInt>(0)
    private let threadExited = DispatchSemaphore(value: 0)
    /// Loop iterations so far (tests check that an idle loop sleeps instead of spinning).
    let iterations = Atomic<Int>(0)
    private var registrations: [UInt64: Registration] = [:]
    private var tokens: [Int32: UInt64] = [:]
    private var nextGeneration: UInt64 = 1
    private static let wakeToken: UInt64 = 0
    private static let maxEvents = 64

    /// Creates the epoll instance and the wake-up eventfd and starts the loop's thread.
    public init(name: String = "parley-loop") throws(NetError) {
        self.name = name
        let epollFD = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard epollFD >= 0 else { throw .lastSystemError("epoll_create1") }
        let wakeFD = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        guard wakeFD >= 0 else {
            let error = NetError.lastSystemError("eventfd")
            Glibc.close(epollFD)
            throw error
        }
        var event = epoll_event()
        event.events = EPOLLIN.rawValue
        event.data.u64 = EventLoop.wakeToken
        guard epoll_ctl(epollFD, EPOLL_CTL_ADD, wakeFD, &event) == 0 else {
            let error = NetError.lastSystemError("epoll_ctl(ADD eventfd)")
            Glibc.close(wakeFD)
            Glibc.close(epollFD)
            throw error
        }
        self.epollFD = epollFD
        self.wakeFD = wakeFD

        // The thread holds a strong reference until `run` returns.
        let context = Unmanaged.passRetained(self).toOpaque()
        var thread = pthread_t()
        let created = pthread_create(&thread, nil, { context in
            let loop = Unmanaged<EventLoop>.fromOpaque(context!).takeRetainedValue()
            loop.run()
            return nil
        }, context)
        guard created == 0 else {
            Unmanaged<EventLoop>.fromOpaque(context).release()
            Glibc.close(wakeFD)
            Glibc.close(epollFD)
            throw .system("pthread_create", errno: created)
        }
        shared.withLock { $0.thread = thread }
    }

    deinit {
        // Only reachable after shutdown (the running thread retains the loop).
        shared.withLock { state in
            if state.state != .stopped {
                Glibc.close(wakeFD)
                Glibc.close(epollFD)
            }
        }
    }

    /// The real monotonic clock (``Scheduler/now``).
    public var now: ContinuousClock.Instant { .now }

    /// True on the loop's own thread (``Scheduler/inScheduler``).
    public var inScheduler: Bool { inEventLoop }

    /// True on the loop's own thread.
    public var inEventLoop: Bool {
        let me = UInt(pthread_self())
        return threadID.load(ordering: .acquiring) == me || afterlifeThread.load(ordering: .acquiring) == me
    }

    /// True once `shutdown` has joined the loop's thread and closed its descriptors.
    private var isStopped: Bool { shared.withLock { $0.state == .stopped } }

    // MARK: Cross-thread work

    /// Runs `work` on the loop thread, after the current iteration's I/O and timers.
    /// - Returns: false (and drops `work`) once the loop is shutting down.
    @discardableResult
    public func execute(_ work: @escaping @Sendable () -> Void) -> Bool {
        // On the loop itself no wake-up is needed (the loop sees the task before it sleeps
        // again), and `wakePending` must stay false: a set flag with no eventfd write would
        // keep later calls from other threads from waking the sleeping loop.
        let onLoop = inEventLoop
        let (accepted, wake) = shared.withLock { state -> (Bool, Bool) in
            guard state.state == .running else { return (false, false) }
            state.tasks.append(work)
            let wake = !state.wakePending && !onLoop
            if wake { state.wakePending = true }
            return (true, wake)
        }
        if wake { wakeUp() }
        return accepted
    }

    /// Runs `body` on the loop thread and blocks the calling thread until it returned (at
    /// once when called on the loop itself); nil when the loop no longer takes work. For
    /// shutdown, tests and counters, never for a loop that may itself wait on the caller.
    public func runAndWait<T: Sendable>(_ body: @escaping @Sendable () -> T) -> T? {
        if inEventLoop { return body() }
        let result = ResultBox<T>()
        let done = DispatchSemaphore(value: 0)
        guard execute({
            let value = body()
            result.value.withLock { $0 = value }
            done.signal()
        }) else { return nil }
        done.wait()
        return result.value.withLock { $0 }
    }

    /// Runs `work` on the loop at `deadline` (monotonic clock), or soon after.
    /// Timers with equal deadlines fire in scheduling order.
    @discardableResult
    public func schedule(at deadline: ContinuousClock.Instant, _ work: @escaping @Sendable () -> Void) -> TimerID {
        let onLoop = inEventLoop
        let (id, wake) = shared.withLock { state -> (UInt64, Bool) in
            let id = state.nextTimerID
            state.nextTimerID += 1
            guard state.state == .running else { return (id, false) }
            state.timers.push(TimerEntry(deadline: deadline, id: id))
            state.timerWork[id] = work
            // The sleeping loop must recompute its epoll timeout if this timer is now first.
            // On the loop it recomputes it anyway before sleeping (see `execute`).
            let wake = state.timers.min?.id == id && !state.wakePending && !onLoop
            if wake { state.wakePending = true }
            return (id, wake)
        }
        if wake { wakeUp() }
        return TimerID(value: id)
    }

    /// Cancels a timer that has not fired yet.
    /// - Returns: true if the timer was pending and will not fire.
    @discardableResult
    public func cancel(_ timer: TimerID) -> Bool {
        // The heap entry stays until it reaches the top; without work it is skipped.
        shared.withLock { $0.timerWork.removeValue(forKey: timer.value) != nil }
    }

    /// Timers scheduled and neither fired nor cancelled.
    public var pendingTimerCount: Int { shared.withLock { $0.timerWork.count } }

    private func wakeUp() {
        var one: UInt64 = 1
        _ = write(wakeFD, &one, 8)
    }

    // MARK: Sockets (loop thread only)

    /// Watches `socket` for readability and calls `onReadable` on the loop thread each time
    /// it has datagrams or a pending error (level-triggered: a handler that leaves datagrams
    /// queued is called again on the next iteration, which keeps sockets fair). The loop
    /// keeps the socket alive while registered and, if `closeOnShutdown`, closes it when the
    /// loop stops. `onWritable` runs when the socket can take data again, only while
    /// ``setWritableInterest(_:_:)`` is on (turn it on after a flush reports `wouldBlock`,
    /// off once the queue drained, or the level-triggered loop would call it continuously).
    /// Must be called on the loop.
    public func register(
        _ socket: any EventLoopDescriptor,
        closeOnShutdown: Bool = true,
        onReadable: @escaping () -> Void,
        onWritable: (() -> Void)? = nil
    ) throws(NetError) {
        precondition(inEventLoop, "EventLoop.register must be called on the loop thread")
        // The epoll descriptor is closed (its number may belong to someone else by now).
        if isStopped { throw .system("epoll_ctl(ADD) on a stopped loop", errno: EBADF) }
        let fd = socket.fileDescriptor
        if tokens[fd] != nil { deregister(socket) }
        let token = nextGeneration
        nextGeneration += 1
        var event = epoll_event()
        event.events = EPOLLIN.rawValue
        event.data.u64 = token
        guard epoll_ctl(epollFD, EPOLL_CTL_ADD, fd, &event) == 0 else { throw .lastSystemError("epoll_ctl(ADD)") }
        registrations[token] = Registration(
            socket: socket, closeOnShutdown: closeOnShutdown, onReadable: onReadable, onWritable: onWritable)
        tokens[fd] = token
    }

    /// Asks for (or stops asking for) the `onWritable` calls of a registered socket.
    /// Must be called on the loop.
    public func setWritableInterest(_ socket: any EventLoopDescriptor, _ enabled: Bool) throws(NetError) {
        try setInterest(socket, readable: true, writable: enabled)
    }

    /// Sets both interests of a registered socket: a TCP connection turns `readable` off
    /// to stop reading while its write queue is over its limit (back-pressure). Errors and
    /// hang-ups still reach `onReadable` with reading off. Must be called on the loop.
    public func setInterest(_ socket: any EventLoopDescriptor, readable: Bool, writable: Bool) throws(NetError) {
        precondition(inEventLoop, "EventLoop.setInterest must be called on the loop thread")
        guard !isStopped, let token = tokens[socket.fileDescriptor] else { return }
        var event = epoll_event()
        event.events = (readable ? EPOLLIN.rawValue : 0) | (writable ? EPOLLOUT.rawValue : 0)
        event.data.u64 = token
        guard epoll_ctl(epollFD, EPOLL_CTL_MOD, socket.fileDescriptor, &event) == 0 else {
            throw .lastSystemError("epoll_ctl(MOD)")
        }
    }

    /// Stops watching `socket` (does not close it). Must be called on the loop.
    public func deregister(_ socket: any EventLoopDescriptor) {
        precondition(inEventLoop, "EventLoop.deregister must be called on the loop thread")
        guard let token = tokens.removeValue(forKey: socket.fileDescriptor) else { return }
        registrations[token] = nil
        guard !isStopped else { return }
        var event = epoll_event()
        _ = epoll_ctl(epollFD, EPOLL_CTL_DEL, socket.fileDescriptor, &event)
    }

    /// Number of registered sockets. Must be called on the loop.
    public var registeredSocketCount: Int {
        precondition(inEventLoop, "EventLoop.registeredSocketCount must be read on the loop thread")
        return registrations.count
    }

    // MARK: Shutdown

    /// Stops the loop, waits for its thread to finish, closes the sockets registered with
    /// `closeOnShutdown` and the loop's own descriptors. Queued closures and pending timers
    /// are dropped. Idempotent; must not be called on the loop thread itself.
    public func shutdown() {
        precondition(!inEventLoop, "EventLoop.shutdown would join its own thread")
        let thread = shared.withLock { state -> pthread_t? in
            guard state.state == .running else { return nil }
            state.state = .stopping
            return state.thread
        }
        guard let thread else { return }
        wakeUp()
        pthread_join(thread, nil)
        shared.withLock { state in
            state.state = .stopped
            state.tasks.removeAll()
            state.timers.removeAll()
            state.timerWork.removeAll()
        }
        Glibc.close(wakeFD)
        Glibc.close(epollFD)
        threadExited.signal()
    }

    // MARK: The loop

    private func run() {
        threadID.store(UInt(pthread_self()), ordering: .releasing)
        _ = parley_pthread_setname_np(pthread_self(), String(name.utf8.prefix(15)) ?? "parley-loop")
        let events = UnsafeMutablePointer<epoll_event>.allocate(capacity: EventLoop.maxEvents)
        defer { events.deallocate() }
        var tasks: [@Sendable () -> Void] = []
        while true {
            iterations.add(1, ordering: .relaxed)
            guard let timeout = nextTimeout() else { break }
            let ready = epoll_wait(epollFD, events, Int32(EventLoop.maxEvents), timeout)
            if ready < 0 {
                if Glibc.errno == EINTR { continue }
                fatalError("epoll_wait failed: \(NetError.lastSystemError("epoll_wait"))")
            }
            for i in 0..<Int(ready) {
                let token = events[i].data.u64
                if token == EventLoop.wakeToken {
                    var value: UInt64 = 0
                    _ = read(wakeFD, &value, 8)
                } else {
                    // Looked up per call: an earlier handler may have deregistered it.
                    // EPOLLERR goes to the read handler: receiving clears the socket error
                    // (e.g. ECONNREFUSED), which would otherwise be reported forever.
                    let flags = events[i].events
                    if flags & (EPOLLIN.rawValue | EPOLLERR.rawValue | EPOLLHUP.rawValue) != 0 {
                        registrations[token]?.onReadable()
                    }
                    if flags & EPOLLOUT.rawValue != 0, let onWritable = registrations[token]?.onWritable {
                        onWritable()
                    }
                }
            }
            runDueTimers()
            shared.withLock { state in
                state.wakePending = false
                swap(&tasks, &state.tasks)
            }
            for task in tasks { task() }
            tasks.removeAll(keepingCapacity: true)
        }
        for registration in registrations.values where registration.closeOnShutdown {
            registration.socket.close()
        }
        registrations.removeAll()
        tokens.removeAll()
    }

    /// epoll_wait timeout in ms: 0 with work queued, -1 with nothing scheduled, else the time
    /// to the first timer rounded up (rounding down would wake early and spin). nil: stop.
    private func nextTimeout() -> Int32? {
        let deadline: ContinuousClock.Instant? = shared.withLock { state in
            if state.state != .running { return nil }
            if !state.tasks.isEmpty { return .now }
            return state.timers.min?.deadline ?? .now.advanced(by: .seconds(3600))
        }
        guard let deadline else { return nil }
        let remaining = ContinuousClock.now.duration(to: deadline)
        if remaining <= .zero { return 0 }
        // Rounded up: epoll_wait must not return before the earliest deadline.
        return Int32(clamping: remaining.wholeMillisecondsRoundedUp)
    }

    private func runDueTimers() {
        let now = ContinuousClock.now
        // Bounded by the heap size at entry, so a timer re-arming itself for "now" cannot
        // keep this iteration from reaching I/O.
        var budget = shared.withLock { $0.timers.count }
        while budget > 0 {
            budget -= 1
            let work: (@Sendable () -> Void)?? = shared.withLock { state in
                guard let first = state.timers.min, first.deadline <= now else { return .none }
                _ = state.timers.popMin()
                return .some(state.timerWork.removeValue(forKey: first.id))
            }
            guard let entry = work else { return }
            entry?()
        }
    }
}

extension EventLoop: SerialExecutor {
    /// Runs a job of an actor whose executor is this loop, as an ``execute(_:)`` closure.
    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let accepted = execute { [unowned self] in job.runSynchronously(on: self.asUnownedSerialExecutor()) }
        guard !accepted else { return }
        afterlife.async { [self] in
            if !isStopped {
                // Shutdown is still joining the thread: wait for it (once; pass it on).
                threadExited.wait()
                threadExited.signal()
            }
            afterlifeThread.store(UInt(pthread_self()), ordering: .releasing)
            job.runSynchronously(on: asUnownedSerialExecutor())
            afterlifeThread.store(0, ordering: .releasing)
        }
    }

    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    public func checkIsolated() {
        precondition(inEventLoop, "not on the EventLoop's thread")
    }
}

/// Where `runAndWait` leaves the body's value for the waiting thread.
private final class ResultBox<T: Sendable>: Sendable {
    let value = Mutex<T?>(nil)
}
