/// Where a `JitterBuffer`'s playout ticks fall relative to the RTP timeline, over the
/// last few ticks: `now - time(playout point)` per tick, and the earliest of them.
///
/// A tick's wake-up can only be late, never early, so one tick's value is the phase plus
/// that tick's lateness; the earliest of recent ticks is the phase itself. Deciding on it
/// keeps a millisecond of lateness from looking like a whole frame of excess delay.
/// Playout moves by whole frames on a stretch or shrink; `shift` moves the remembered
/// ticks with it so they stay comparable with the next one.
struct JitterBufferPlayoutPhase: Sendable, Hashable {
    /// Values of the recent ticks, a ring of at most `capacity`.
    private var values: [Int64] = []
    private var nextSlot = 0
    private let capacity: Int

    init(ticks: Int) {
        capacity = max(ticks, 1)
        values.reserveCapacity(capacity)
    }

    /// The earliest of the recent ticks (0 before any).
    private(set) var earliest: Int64 = 0

    /// Accounts for one tick.
    mutating func record(_ value: Int64) {
        if values.count < capacity {
            values.append(value)
        } else {
            values[nextSlot] = value
            nextSlot = (nextSlot + 1) % capacity
        }
        earliest = values.min() ?? value
    }

    /// Playout moved by `nanoseconds` (a stretch holds it back a frame: +frame; a dropped
    /// frame moves it on: -duration).
    mutating func shift(by nanoseconds: Int64) {
        for index in values.indices { values[index] = values[index] &+ nanoseconds }
        earliest = earliest &+ nanoseconds
    }

    /// Playout (re)started with this tick: older ticks no longer say anything.
    mutating func restart(with value: Int64) {
        values.removeAll(keepingCapacity: true)
        nextSlot = 0
        record(value)
    }
}
