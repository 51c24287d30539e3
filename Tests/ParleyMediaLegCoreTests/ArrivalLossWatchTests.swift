@testable import ParleyMediaLegCore
import Testing

@Suite struct ArrivalLossWatchTests {
    @Test("one stray loss does not count; a second within 100 packets, or two in a row, does")
    func losses() {
        var watch = ArrivalLossWatch()
        var fired: [UInt16] = []
        // 0...99 with 10 missing, then 11...199 with 150 missing: 140 packets apart.
        for sequence in UInt16(0)..<200 where sequence != 10 && sequence != 150 {
            if watch.note(sequence) { fired.append(sequence) }
        }
        #expect(fired.isEmpty)
        // 160 missing: 10 packets after the loss at 150.
        for sequence in UInt16(200)..<260 where sequence != 210 {
            if watch.note(sequence) { fired.append(sequence) }
        }
        #expect(fired == [211])
        var burst = ArrivalLossWatch()
        let first = burst.note(65_534)
        let afterWrap = burst.note(1)  // 65535 and 0 lost across the wrap
        #expect(!first && afterWrap)
    }

    @Test("reordering, duplicates and a restart's jump are not loss")
    func notLoss() {
        var watch = ArrivalLossWatch()
        var fired = 0
        for sequence: UInt16 in [1, 2, 3, 3, 2, 4, 5, 5_000, 5_001, 5_002] where watch.note(sequence) { fired += 1 }
        #expect(fired == 0)
    }
}
