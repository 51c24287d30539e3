/// Identifies work scheduled on a ``Scheduler``, for ``Scheduler/cancel(_:)``.
public struct TimerID: Hashable, Sendable {
    /// Unique per scheduler, increasing in scheduling order.
    public let value: UInt64

    public init(value: UInt64) {
        self.value = value
    }
}

/// The scheduling surface of one serial executor: run work in order, run it at a deadline,
/// cancel it, and tell the time it schedules by. The Linux event loop (`ParleyNetLinux`'s
/// `EventLoop`) is the running implementation; the test support's `ManualScheduler` runs
/// the same code in virtual time (time moves only when a test advances it), so a call
/// engine, a session or a media anchor is tested without sleeping.
///
/// Work handed to one scheduler runs one piece at a time, in the order it was handed
/// over; timers with equal deadlines run in scheduling order.
public protocol Scheduler: AnyObject, Sendable {
    /// The scheduler's monotonic time: the real clock for an event loop, the virtual one
    /// for a manual scheduler. Code driven by a scheduler reads time here, never from
    /// `ContinuousClock.now`.
    var now: ContinuousClock.Instant { get }

    /// True when called from the work the scheduler is running (its thread).
    var inScheduler: Bool { get }

    /// Runs `work` after what is queued before it; false (and `work` dropped) once the
    /// scheduler stopped.
    @discardableResult
    func execute(_ work: @escaping @Sendable () -> Void) -> Bool

    /// Runs `work` at `deadline` or soon after.
    @discardableResult
    func schedule(at deadline: ContinuousClock.Instant, _ work: @escaping @Sendable () -> Void) -> TimerID

    /// Cancels scheduled work that has not run; true if it was pending.
    @discardableResult
    func cancel(_ timer: TimerID) -> Bool

    /// Runs `body` on the scheduler and waits for its result (at once when called from
    /// the scheduler's own work); nil when the scheduler no longer takes work. For
    /// shutdown, counters and tests, never where the scheduler may wait on the caller.
    func runAndWait<T: Sendable>(_ body: @escaping @Sendable () -> T) -> T?
}

extension Scheduler {
    /// Runs `work` after `delay` from the scheduler's ``now``.
    @discardableResult
    public func schedule(after delay: Duration, _ work: @escaping @Sendable () -> Void) -> TimerID {
        schedule(at: now.advanced(by: delay), work)
    }
}
