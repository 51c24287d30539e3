import ParleyMediaCore
import ParleyTestSupport
import Testing

private let ms = JitterBufferSimulation.millisecond

/// The buffer's delay decisions must not hunt: with a constant network delay no frame is
/// dropped or stretched once playout began, whatever the phase of the playout ticks
/// against the packets and however late (within the tolerance) a tick wakes up.
@Suite("JitterBuffer holds still")
struct JitterBufferHoldStillTests {
    /// Per-tick wake-up lateness, uniform in 0...`maximum`, from a seeded generator.
    static func lateness(seed: UInt64, ticks: Int, maximum: UInt64) -> [UInt64] {
        var generator = SeededGenerator(seed: seed)
        return (0..<ticks).map { _ in maximum == 0 ? 0 : UInt64(generator.below(Int(maximum) + 1)) }
    }

    @Test("constant network delay: no shrink, no stretch at any tick phase, with and without wake-up lateness",
          arguments: [0, 1 * ms, 2 * ms])
    func clean(maximumLateness: UInt64) {
        for phaseMilliseconds in 0..<20 {
            for networkDelay in [5 * ms, 30 * ms] {
                var sim = JitterBufferSimulation()
                sim.tickPhase = UInt64(phaseMilliseconds) * ms
                let late = Self.lateness(seed: 0x1a7e + UInt64(phaseMilliseconds), ticks: 1020, maximum: maximumLateness)
                sim.wakeUpLateness = { late[$0] }
                sim.send(count: 1000) { _ in networkDelay }
                let result = sim.run(ticks: 1020)
                let stats = result.buffer.statistics
                let label = "phase \(phaseMilliseconds) ms, delay \(networkDelay / ms) ms, lateness 0-\(maximumLateness / ms) ms"
                #expect(stats.discardedForDelay == 0, "\(label): \(stats)")
                #expect(stats.stretched == 0, "\(label): \(stats)")
                #expect(stats.late == 0 && stats.lost == 0, "\(label): \(stats)")
                #expect(result.playedIndices == Array(0..<1000), "\(label)")
                #expect(stats.targetDelayNanoseconds == 20 * Int64(ms))
            }
        }
    }

    @Test("a +60 ms step in network delay and back: the buffer grows at once and shrinks back within bounded time")
    func stepAndBack() {
        for phaseMilliseconds in [0, 9, 19] {
            var sim = JitterBufferSimulation()
            sim.tickPhase = UInt64(phaseMilliseconds) * ms
            let late = Self.lateness(seed: 0x57e9, ticks: 2520, maximum: 2 * ms)
            sim.wakeUpLateness = { late[$0] }
            // 10 ms for 8 s, 70 ms for 10 s, then 10 ms again for 32 s.
            sim.send(count: 2500) { k in k >= 400 && k < 900 ? 70 * ms : 10 * ms }
            let result = sim.run(ticks: 2520)
            var delayByPacket: [Int: Int64] = [:]
            for output in result.outputs {
                if case .packet(let frame) = output {
                    delayByPacket[JitterBufferSimulation.index(of: frame.payload)] = frame.bufferDelayNanoseconds
                }
            }
            let label = "phase \(phaseMilliseconds) ms"
            // Up: the packets of the step are late until the buffer grew; within 200 ms
            // (10 packets) every packet plays again.
            let stepPlayed = (400..<900).filter { delayByPacket[$0] != nil }
            #expect(stepPlayed.first.map { $0 - 400 } ?? 999 <= 10, "\(label): first played after the step \(stepPlayed.first ?? -1)")
            #expect(stepPlayed.count >= 490, "\(label)")
            // Back: the delay returns under target + a frame + hysteresis (45 ms) within
            // 12 s (the slow packets leave the 5 s window, the target shrinks 10 ms per
            // 25 packets, one frame is dropped per 25 ticks).
            let settled = (900..<2500).first { k in (k..<(k + 50)).allSatisfy { (delayByPacket[$0] ?? .max) < 45 * Int64(ms) } }
            #expect(settled.map { $0 - 900 } ?? 9999 <= 600, "\(label): settled at packet \(settled ?? -1)")
            // And then holds still: no drop and no stretch in the last 10 s.
            let lastOutputs = result.outputs.suffix(500)
            #expect(!lastOutputs.contains(.stretch), "\(label)")
            let played = lastOutputs.compactMap { output -> Int? in
                if case .packet(let frame) = output { return JitterBufferSimulation.index(of: frame.payload) }
                return nil
            }
            #expect(zip(played, played.dropFirst()).allSatisfy { $1 == $0 + 1 }, "\(label): a frame dropped in the calm")
            print("step +60 ms and back, \(label): up -> playing again after \(stepPlayed.first.map { $0 - 400 } ?? -1) packets; back -> settled under 45 ms after \(settled.map { $0 - 900 } ?? -1) packets; stretched \(result.buffer.statistics.stretched), dropped \(result.buffer.statistics.discardedForDelay)")
        }
    }
}
