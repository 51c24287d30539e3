import ParleyTestSupport
import ParleyWireCore
import Testing

@Suite struct MinHeapTests {
    @Test func popsInOrderUnderRandomPushesAndPops() {
        var generator = SeededGenerator(seed: 11)
        var heap = MinHeap<Int>()
        var model: [Int] = []
        for _ in 0..<5000 {
            if model.isEmpty || Int.random(in: 0..<3, using: &generator) > 0 {
                let value = Int.random(in: -50...50, using: &generator)
                heap.push(value)
                model.append(value)
            } else {
                let smallest = model.min()!
                model.remove(at: model.firstIndex(of: smallest)!)
                #expect(heap.popMin() == smallest)
            }
            #expect(heap.count == model.count && heap.min == model.min())
        }
        var drained: [Int] = []
        while let next = heap.popMin() { drained.append(next) }
        #expect(drained == model.sorted())
        #expect(heap.isEmpty && heap.popMin() == nil && heap.min == nil)
    }

    @Test func removeAllEmptiesIt() {
        var heap = MinHeap<String>()
        for word in ["c", "a", "b"] { heap.push(word) }
        #expect(heap.min == "a" && heap.elements.count == 3)
        heap.removeAll()
        #expect(heap.isEmpty)
    }
}
