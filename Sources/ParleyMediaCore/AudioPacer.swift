/// Real-time pacing for 20 ms audio frames: tells the caller when the next frame is due on
/// the monotonic clock, and how many frames are due now.
///
/// Ticks sit on a fixed grid (`start + n * frameDuration`) so timer lateness never adds up
/// to drift. A caller that was late gets the missed ticks to catch up, up to
/// `maximumCatchUp`; beyond that (a stalled thread) the grid jumps forward and the skipped
/// ticks are counted rather than sent in a burst.
public struct AudioPacer: Sendable, Hashable {
    public let start: ContinuousClock.Instant
    public let frameDuration: Duration
    /// Most ticks handed out at once after a late wake-up.
    public let maximumCatchUp: Int
    /// Ticks handed out so far.
    public private(set) var ticks: UInt64 = 0
    /// Ticks given up after a stall longer than `maximumCatchUp` frames.
    public private(set) var skippedTicks: UInt64 = 0

    public init(start: ContinuousClock.Instant, frameDuration: Duration = .milliseconds(20), maximumCatchUp: Int = 5) {
        self.start = start
        self.frameDuration = frameDuration
        self.maximumCatchUp = max(1, maximumCatchUp)
    }

    /// When the next tick is due.
    public var nextTick: ContinuousClock.Instant { start + frameDuration * Int(clamping: ticks + skippedTicks) }

    /// The number of ticks due at `now` (0 if early), consuming them.
    public mutating func dueTicks(now: ContinuousClock.Instant) -> Int {
        guard now >= nextTick else { return 0 }
        let elapsed = start.duration(to: now)
        let gridIndex = UInt64(max(0, elapsed / frameDuration)) + 1  // ticks whose time has come
        let done = ticks + skippedTicks
        guard gridIndex > done else { return 0 }
        var due = Int(clamping: gridIndex - done)
        if due > maximumCatchUp {
            skippedTicks += UInt64(due - maximumCatchUp)
            due = maximumCatchUp
        }
        ticks += UInt64(due)
        return due
    }
}
