/// The calls' deadlines, earliest first: a binary min-heap with lazy deletion, so that
/// `CallRegistry.nextDeadline` is O(1) and an update O(log n).
///
/// `current` holds each call's true deadline; the heap may also hold outdated entries,
/// which are dropped when they reach the top and by a rebuild when they outnumber the
/// true ones. After every mutating call the top is a true entry (or the heap is empty).
struct DeadlineQueue: Sendable {
    private struct Entry: Sendable {
        var deadline: ContinuousClock.Instant
        var callID: String
    }

    private var heap: [Entry] = []
    private var current: [String: ContinuousClock.Instant] = [:]

    /// The earliest deadline of any call.
    var earliest: ContinuousClock.Instant? { heap.first?.deadline }

    /// Sets (or with nil, removes) a call's deadline.
    mutating func set(_ callID: String, to deadline: ContinuousClock.Instant?) {
        guard current[callID] != deadline else { return }
        current[callID] = deadline
        if let deadline { push(Entry(deadline: deadline, callID: callID)) }
        if heap.count > 2 * current.count + 64 {
            heap = []
            for (callID, deadline) in current { push(Entry(deadline: deadline, callID: callID)) }
        }
        dropOutdated()
    }

    /// The call with the earliest deadline.
    var next: (callID: String, deadline: ContinuousClock.Instant)? {
        heap.first.map { ($0.callID, $0.deadline) }
    }

    private func isCurrent(_ entry: Entry) -> Bool {
        current[entry.callID] == entry.deadline
    }

    private mutating func dropOutdated() {
        while let top = heap.first, !isCurrent(top) {
            popTop()
        }
    }

    private mutating func push(_ entry: Entry) {
        heap.append(entry)
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].deadline < heap[parent].deadline else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func popTop() {
        guard !heap.isEmpty else { return }
        heap.swapAt(0, heap.count - 1)
        heap.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < heap.count, heap[left].deadline < heap[smallest].deadline { smallest = left }
            if right < heap.count, heap[right].deadline < heap[smallest].deadline { smallest = right }
            guard smallest != parent else { return }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
