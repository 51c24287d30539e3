/// A binary min-heap in an array: O(log n) push and pop, O(1) peek. The event loop keeps
/// its timers in one, ordered by (deadline, sequence) so equal deadlines fire in the order
/// they were scheduled.
struct MinHeap<Element: Comparable> {
    private(set) var elements: [Element] = []

    var count: Int { elements.count }
    var isEmpty: Bool { elements.isEmpty }
    var min: Element? { elements.first }

    mutating func push(_ element: Element) {
        elements.append(element)
        var child = elements.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard elements[child] < elements[parent] else { break }
            elements.swapAt(child, parent)
            child = parent
        }
    }

    mutating func popMin() -> Element? {
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

    mutating func removeAll() { elements.removeAll() }
}
