/// A binary min-heap in an array: O(log n) push and pop, O(1) peek; the one heap of the
/// package. The event loop keeps its timers in one, ordered by (deadline, sequence) so
/// equal deadlines fire in the order they were scheduled; the nonce replay cache keeps
/// its expiries in one. Not stable: give equal elements a tie-breaker when order matters.
public struct MinHeap<Element: Comparable> {
    /// The elements in heap order (the smallest first, the rest in no useful order).
    public private(set) var elements: [Element] = []

    /// An empty heap.
    public init() {}

    /// Number of elements.
    public var count: Int { elements.count }
    /// True when there is no element.
    public var isEmpty: Bool { elements.isEmpty }
    /// The smallest element, if any.
    public var min: Element? { elements.first }

    /// Adds `element`.
    public mutating func push(_ element: Element) {
        elements.append(element)
        var child = elements.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard elements[child] < elements[parent] else { break }
            elements.swapAt(child, parent)
            child = parent
        }
    }

    /// Removes and returns the smallest element, if any.
    @discardableResult
    public mutating func popMin() -> Element? {
        guard !elements.isEmpty else { return nil }
        elements.swapAt(0, elements.count - 1)
        let smallest = elements.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1, right = left + 1
            var smallestChild = parent
            if left < elements.count && elements[left] < elements[smallestChild] { smallestChild = left }
            if right < elements.count && elements[right] < elements[smallestChild] { smallestChild = right }
            guard smallestChild != parent else { break }
            elements.swapAt(parent, smallestChild)
            parent = smallestChild
        }
        return smallest
    }

    /// Removes every element.
    public mutating func removeAll() { elements.removeAll() }
}

extension MinHeap: Sendable where Element: Sendable {}
