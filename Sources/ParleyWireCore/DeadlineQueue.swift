/// One deadline per key, earliest first: the calls' timers in the call registry, the
/// connections' and sessions' timers in the server's session core. A ``MinHeap`` with lazy
/// deletion, so the earliest deadline is O(1) and setting one O(log n) however many keys
/// there are.
///
/// `current` holds each key's true deadline; the heap may also hold outdated entries, which
/// are dropped when they reach the top and by a rebuild when they outnumber the true ones.
/// After every mutating call the top is a true entry (or the queue is empty). Equal
/// deadlines come out in the order they were set.
public struct DeadlineQueue<Key: Hashable & Sendable>: Sendable {
    private struct Entry: Comparable, Sendable {
        var deadline: ContinuousClock.Instant
        var sequence: UInt64
        var key: Key

        static func < (a: Entry, b: Entry) -> Bool { (a.deadline, a.sequence) < (b.deadline, b.sequence) }
        static func == (a: Entry, b: Entry) -> Bool { a.deadline == b.deadline && a.sequence == b.sequence }
    }

    private var heap = MinHeap<Entry>()
    private var current: [Key: (deadline: ContinuousClock.Instant, sequence: UInt64)] = [:]
    private var sequence: UInt64 = 0

    /// An empty queue.
    public init() {}

    /// The earliest deadline of any key.
    public var earliest: ContinuousClock.Instant? { heap.min?.deadline }

    /// The key with the earliest deadline.
    public var next: (key: Key, deadline: ContinuousClock.Instant)? {
        heap.min.map { ($0.key, $0.deadline) }
    }

    /// Keys with a deadline.
    public var count: Int { current.count }

    /// The key's deadline, if it has one.
    public func deadline(of key: Key) -> ContinuousClock.Instant? {
        current[key]?.deadline
    }

    /// Sets (or with nil, removes) a key's deadline.
    public mutating func set(_ key: Key, to deadline: ContinuousClock.Instant?) {
        guard current[key]?.deadline != deadline else { return }
        if let deadline {
            sequence += 1
            current[key] = (deadline, sequence)
            heap.push(Entry(deadline: deadline, sequence: sequence, key: key))
        } else {
            current[key] = nil
        }
        if heap.count > 2 * current.count + 64 {
            heap.removeAll()
            for (key, entry) in current { heap.push(Entry(deadline: entry.deadline, sequence: entry.sequence, key: key)) }
        }
        while let top = heap.min, current[top.key]?.sequence != top.sequence {
            _ = heap.popMin()
        }
    }
}
