import ParleyMediaCore
import Testing

@Suite struct AudioPacerTests {
    @Test func ticksOnAFixedGridWithoutDrift() {
        let start = ContinuousClock.now
        var pacer = AudioPacer(start: start)
        #expect(pacer.dueTicks(now: start) == 1)
        #expect(pacer.nextTick == start + .milliseconds(20))
        #expect(pacer.dueTicks(now: start + .milliseconds(19)) == 0)
        // Woken 3 ms late every time: still one tick per 20 ms, the grid does not move.
        for n in 1...100 {
            #expect(pacer.dueTicks(now: start + .milliseconds(20 * n + 3)) == 1)
        }
        #expect(pacer.nextTick == start + .milliseconds(20 * 101))
        #expect(pacer.ticks == 101)
    }

    @Test func catchesUpAfterALateWakeUpAndSkipsAfterAStall() {
        let start = ContinuousClock.now
        var pacer = AudioPacer(start: start, maximumCatchUp: 5)
        #expect(pacer.dueTicks(now: start + .milliseconds(65)) == 4)  // ticks at 0, 20, 40, 60
        #expect(pacer.dueTicks(now: start + .milliseconds(1000)) == 5)  // 47 were due
        #expect(pacer.skippedTicks == 42)
        #expect(pacer.nextTick == start + .milliseconds(1020))
        #expect(pacer.dueTicks(now: start + .milliseconds(1020)) == 1)
    }
}
