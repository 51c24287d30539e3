import ParleyMediaCore
import ParleyRTP
import ParleyTestSupport
import Testing

private let ms = JitterBufferSimulation.millisecond

@Suite("JitterBuffer")
struct JitterBufferTests {
    @Test("in-order stream plays every packet, in order, at the minimum delay")
    func inOrder() {
        var sim = JitterBufferSimulation()
        sim.send(count: 500) { _ in 30 * ms }
        let result = sim.run(ticks: 520)
        #expect(result.playedIndices == Array(0..<500))
        #expect(result.lostSequenceNumbers.isEmpty)
        let stats = result.buffer.statistics
        #expect(stats.late == 0)
        #expect(stats.lost == 0)
        #expect(stats.duplicates == 0)
        #expect(stats.reordered == 0)
        #expect(stats.stretched == 0)
        #expect(stats.discardedForDelay == 0)
        #expect(result.maximumTarget == 20 * Int64(ms))
        // Tick phase 7 ms after a 30 ms network delay: each packet waits 17 ms + one tick.
        #expect(stats.lastBufferDelayNanoseconds >= 20 * Int64(ms))
        #expect(stats.lastBufferDelayNanoseconds < 40 * Int64(ms))
        #expect(stats.meanBufferDelayNanoseconds < 40 * Int64(ms))
    }

    @Test("a delay floor raises the target at once (one stretch); lowered, the target comes down in shrink steps")
    func delayFloor() {
        var buffer = JitterBuffer()
        let frame = UInt64(20 * ms)
        var now = UInt64(1_000_000_000)
        var sequence: UInt16 = 100
        func step(_ buffer: inout JitterBuffer) {
            buffer.push(payload: [1, 2, 3], sequenceNumber: sequence, timestamp: UInt32(sequence) &* 960, ssrc: 7, now: now &+ UInt64(3 * ms))
            sequence &+= 1
            _ = buffer.pop(now: now &+ UInt64(9 * ms))
            now &+= frame
        }
        for _ in 0..<100 { step(&buffer) }
        #expect(buffer.statistics.targetDelayNanoseconds == 20 * Int64(ms))
        #expect(buffer.statistics.stretched == 0)
        buffer.delayFloor = .milliseconds(45)
        #expect(buffer.statistics.targetDelayNanoseconds == 45 * Int64(ms))
        for _ in 0..<200 { step(&buffer) }
        #expect(buffer.statistics.targetDelayNanoseconds == 45 * Int64(ms))
        #expect(buffer.statistics.stretched >= 1 && buffer.statistics.stretched <= 2)
        #expect(buffer.statistics.currentDelayNanoseconds >= 45 * Int64(ms))
        #expect(buffer.delayFloor == .milliseconds(45))
        buffer.delayFloor = .zero
        // One re-estimate per 25 packets, 10 ms each: 45 -> 20 within 75 packets.
        for _ in 0..<100 { step(&buffer) }
        #expect(buffer.statistics.targetDelayNanoseconds == 20 * Int64(ms))
        #expect(buffer.statistics.discardedForDelay >= 1)
        #expect(buffer.statistics.lost == 0)
    }

    @Test("jittery stream (uniform 0-60 ms): the delay adapts up and under 2 % arrive late")
    func jitterAdapts() {
        var generator = SeededGenerator(seed: 0x6a17)
        var sim = JitterBufferSimulation()
        let count = 3000
        sim.send(count: count) { _ in UInt64(generator.below(60_001)) * 1000 }
        let result = sim.run(ticks: count + 30)
        let stats = result.buffer.statistics
        #expect(stats.targetDelayNanoseconds > 40 * Int64(ms))
        #expect(stats.targetDelayNanoseconds <= 80 * Int64(ms))
        #expect(Double(stats.late) / Double(count) < 0.02)
        #expect(stats.lost == stats.late)
        #expect(stats.played + stats.late == UInt64(count) - stats.discardedForDelay)
        // Whatever plays, plays in order.
        let played = result.playedIndices
        #expect(zip(played, played.dropFirst()).allSatisfy { $0 < $1 })
        #expect(result.maximumTarget <= 400 * Int64(ms))
    }

    @Test("packets reordered within the delay play in order")
    func reorderWithinWindow() {
        var sim = JitterBufferSimulation()
        sim.configuration.minimumDelay = .milliseconds(60)
        // Every 7th packet is 35 ms slower, so it arrives after the one sent after it.
        sim.send(count: 400) { k in k % 7 == 3 ? 45 * ms : 10 * ms }
        let result = sim.run(ticks: 420)
        #expect(result.playedIndices == Array(0..<400))
        let stats = result.buffer.statistics
        #expect(stats.reordered == UInt64((0..<400).filter { $0 % 7 == 3 }.count))
        #expect(stats.late == 0)
        #expect(stats.lost == 0)
    }

    @Test("a burst pushed out of order pops in sequence order")
    func burstReorder() {
        var buffer = JitterBuffer()
        let order = [0, 2, 1, 4, 3, 7, 5, 6]
        for k in order {
            buffer.push(payload: JitterBufferSimulation.payload(index: k), sequenceNumber: UInt16(k),
                        timestamp: UInt32(k * 960), ssrc: 1, now: 0)
        }
        var played: [Int] = []
        for tick in 0..<20 {
            if case .packet(let frame) = buffer.pop(now: UInt64(tick) * 20 * ms + 20 * ms) {
                played.append(JitterBufferSimulation.index(of: frame.payload))
            }
        }
        #expect(played == Array(0..<8))
        #expect(buffer.statistics.reordered == 4)  // 1, 3, 5 and 6
    }

    @Test("duplicates are dropped and counted, before and after their playout")
    func duplicates() {
        var sim = JitterBufferSimulation()
        sim.send(count: 300) { _ in 10 * ms }
        var copies = 0
        for k in stride(from: 5, to: 300, by: 5) {
            // One copy right behind the original, one long after it played.
            sim.deliver(index: k, delay: 12 * ms)
            sim.deliver(index: k, delay: 90 * ms)
            copies += 2
        }
        let result = sim.run(ticks: 320)
        #expect(result.playedIndices == Array(0..<300))
        let stats = result.buffer.statistics
        #expect(stats.duplicates == UInt64(copies))
        #expect(stats.late == 0)
        #expect(stats.lost == 0)
        #expect(stats.received == UInt64(300 + copies))
    }

    @Test("lost packets come out as .lost at their slots, with the next packet for FEC")
    func lossPositions() {
        var sim = JitterBufferSimulation()
        // 80 ms of buffer: every loss run (at most 3) is seen before its slot is due.
        sim.configuration.minimumDelay = .milliseconds(80)
        let dropped: Set<Int> = [10, 11, 50, 123, 124, 125, 299]
        sim.send(count: 300) { k in dropped.contains(k) ? nil : 5 * ms }
        sim.deliver(index: 300, delay: 5 * ms)
        let result = sim.run(ticks: 330)
        #expect(result.playedIndices == (0...300).filter { !dropped.contains($0) })
        let expectedLost = dropped.sorted().map { sim.firstSequenceNumber &+ UInt16($0) }
        #expect(result.lostSequenceNumbers == expectedLost)
        // Playout order: lost slots sit exactly where their packets would have played.
        var slots: [Int] = []
        for output in result.outputs {
            switch output {
            case .packet(let frame): slots.append(JitterBufferSimulation.index(of: frame.payload))
            case .lost(let loss): slots.append(Int(loss.expectedSequenceNumber &- sim.firstSequenceNumber))
            default: break
            }
        }
        #expect(slots == Array(0...300))
        // FEC: the packet after the last of each run is buffered.
        let fec = result.losses.filter(\.nextPacketAvailable).map(\.expectedSequenceNumber)
        #expect(fec == [11, 50, 125, 299].map { sim.firstSequenceNumber &+ UInt16($0) })
        for loss in result.losses {
            #expect(loss.samples == 960)
            if let next = loss.nextPacket { #expect(next.sequenceNumber == loss.expectedSequenceNumber &+ 1) }
        }
        #expect(result.buffer.statistics.lost == UInt64(dropped.count))
    }

    @Test("a loss run longer than the buffer: underrun ticks stand in for the first losses, the delay does not grow")
    func lossLongerThanBuffer() {
        var sim = JitterBufferSimulation()
        let dropped = Set(100..<110)
        sim.send(count: 300) { k in dropped.contains(k) ? nil : 5 * ms }
        let result = sim.run(ticks: 320)
        #expect(result.playedIndices == (0..<300).filter { !dropped.contains($0) })
        let stats = result.buffer.statistics
        #expect(stats.lost == 10)
        #expect(stats.discardedForDelay == 0)
        #expect(stats.stretched == 0)
        #expect(stats.underruns > 0)
        // The reported slots are the last of the run; the very last can use FEC.
        let lost = result.lostSequenceNumbers.map { Int($0 &- sim.firstSequenceNumber) }
        #expect(!lost.isEmpty)
        #expect(lost == Array((110 - lost.count)..<110))
        #expect(result.losses.last?.nextPacket?.sequenceNumber == sim.firstSequenceNumber &+ 110)
        // Every packet waited the same before and after the run.
        var delays: [Int64] = []
        for output in result.outputs { if case .packet(let frame) = output { delays.append(frame.bufferDelayNanoseconds) } }
        #expect(Set(delays).count == 1)
    }

    @Test("a step up in network delay: playout follows without late packets")
    func delayStep() {
        var sim = JitterBufferSimulation()
        sim.send(count: 400) { k in k < 200 ? 10 * ms : 110 * ms }
        let result = sim.run(ticks: 420)
        #expect(result.playedIndices == Array(0..<400))
        #expect(result.buffer.statistics.late == 0)
        #expect(result.buffer.statistics.lost == 0)
    }

    @Test("sequence numbers and timestamps wrap across 65535 and 2^32")
    func wrap() {
        var sim = JitterBufferSimulation()
        sim.firstSequenceNumber = 65_400
        sim.firstTimestamp = 0xffff_ffff - 960 * 100
        sim.configuration.minimumDelay = .milliseconds(60)
        // Lose the packet carrying sequence 65535, reorder 0 and 1.
        sim.send(count: 300) { k in
            let sequence = UInt16(truncatingIfNeeded: 65_400 + k)
            if sequence == 65_535 { return nil }
            if sequence == 0 { return 40 * ms }
            return 10 * ms
        }
        let result = sim.run(ticks: 320)
        #expect(result.playedIndices == (0..<300).filter { $0 != 135 })
        #expect(result.lostSequenceNumbers == [65_535])
        #expect(result.buffer.statistics.reordered == 1)
        #expect(result.buffer.statistics.resets == 0)
    }

    @Test("a flood of far-future sequence numbers resets the stream; memory stays bounded")
    func flood() {
        var buffer = JitterBuffer()
        var now: UInt64 = 0
        for k in 0..<100 {
            now = UInt64(k) * 20 * ms
            buffer.push(payload: [1, 2, 3], sequenceNumber: UInt16(k), timestamp: UInt32(k * 960), ssrc: 7, now: now)
            _ = buffer.pop(now: now)
        }
        var outcomes: [JitterBuffer.PushOutcome] = []
        var maximumBuffered = 0
        for i in 0..<20_000 {
            outcomes.append(buffer.push(payload: [0xff], sequenceNumber: UInt16(truncatingIfNeeded: 30_000 + i),
                                        timestamp: UInt32(truncatingIfNeeded: i &* 7), ssrc: 7, now: now))
            maximumBuffered = max(maximumBuffered, buffer.statistics.bufferedPackets)
        }
        #expect(outcomes[0] == .discardedJump)
        #expect(outcomes[1] == .bufferedAfterReset)
        #expect(maximumBuffered <= buffer.configuration.capacity)
        #expect(buffer.statistics.resets == 1)
        #expect(buffer.statistics.overflowed > 0)
        // Still serviceable.
        for tick in 1...50 { _ = buffer.pop(now: now + UInt64(tick) * 20 * ms) }
        #expect(buffer.statistics.bufferedPackets <= buffer.configuration.capacity)
    }

    @Test("a single stray far-future packet is dropped without a reset")
    func strayJump() {
        var sim = JitterBufferSimulation()
        sim.send(count: 200) { _ in 10 * ms }
        var result = sim.run(ticks: 0)
        var buffer = result.buffer
        var played = 0
        for k in 0..<200 {
            let now = sim.start + UInt64(k) * 20 * ms + 10 * ms
            buffer.push(payload: JitterBufferSimulation.payload(index: k), sequenceNumber: UInt16(k), timestamp: UInt32(k * 960),
                        ssrc: 1, now: now)
            if k == 100 {
                #expect(buffer.push(payload: [9], sequenceNumber: 40_000, timestamp: 5, ssrc: 1, now: now) == .discardedJump)
            }
            if case .packet = buffer.pop(now: now + 5 * ms) { played += 1 }
        }
        result.buffer = buffer
        #expect(buffer.statistics.resets == 0)
        #expect(buffer.statistics.jumpDiscarded == 1)
        #expect(buffer.statistics.lost == 0)
        #expect(played >= 198)
    }

    @Test("late packets are counted and dropped; their slot is played as lost")
    func latePackets() {
        var sim = JitterBufferSimulation()
        sim.send(count: 200) { k in k == 80 || k == 150 ? 300 * ms : 10 * ms }
        let result = sim.run(ticks: 240)
        let stats = result.buffer.statistics
        #expect(stats.late == 1 || stats.late == 2)
        #expect(result.pushOutcomes.filter { $0 == .late }.count == Int(stats.late))
        #expect(result.lostSequenceNumbers.first == sim.firstSequenceNumber &+ 80)
        #expect(result.buffer.statistics.late + result.buffer.statistics.played + stats.discardedForDelay == 200)
    }

    @Test("an SSRC change restarts the stream")
    func ssrcChange() {
        var buffer = JitterBuffer()
        for k in 0..<10 {
            buffer.push(payload: [1], sequenceNumber: UInt16(k), timestamp: UInt32(k * 960), ssrc: 1, now: UInt64(k) * 20 * ms)
        }
        let outcome = buffer.push(payload: [2], sequenceNumber: 5000, timestamp: 77, ssrc: 2, now: 200 * ms)
        #expect(outcome == .bufferedAfterReset)
        #expect(buffer.statistics.resets == 1)
        #expect(buffer.statistics.bufferedPackets == 1)
        guard case .packet(let frame) = buffer.pop(now: 260 * ms) else {
            Issue.record("expected the new stream's packet")
            return
        }
        #expect(frame.sequenceNumber == 5000)
    }

    @Test("40 ms packets play as a packet then a continuation tick")
    func longPackets() {
        var sim = JitterBufferSimulation()
        sim.packetInterval = 40 * ms
        sim.samplesPerPacket = 1920
        sim.configuration.minimumDelay = .milliseconds(40)
        sim.send(count: 100) { _ in 10 * ms }
        let result = sim.run(ticks: 210)
        #expect(result.playedIndices == Array(0..<100))
        #expect(result.buffer.statistics.lost == 0)
        let started = result.outputs.drop { if case .packet = $0 { false } else { true } }
        for (i, output) in started.prefix(190).enumerated() {
            if i % 2 == 0 {
                guard case .packet(let frame) = output else { Issue.record("tick \(i): \(output)"); break }
                #expect(frame.samples == 1920)
            } else {
                #expect(output == .continuation)
            }
        }
    }

    @Test("10 ms packets fill a 20 ms tick in two pops")
    func shortPackets() {
        var sim = JitterBufferSimulation()
        sim.packetInterval = 10 * ms
        sim.samplesPerPacket = 480
        sim.send(count: 400) { _ in 5 * ms }
        let result = sim.run(ticks: 210)
        #expect(result.playedIndices.prefix(380) == ArraySlice(0..<380))
        #expect(result.buffer.statistics.lost == 0)
        #expect(result.buffer.statistics.late == 0)
        #expect(result.buffer.statistics.bufferedPackets < 10)
    }

    @Test("a timestamp gap with consecutive sequence numbers is silence, not loss")
    func silenceGap() {
        var sim = JitterBufferSimulation()
        // Packets 0..<100 then DTX for 1 s: the next packet's timestamp jumps 50 frames.
        sim.send(count: 100) { _ in 10 * ms }
        for k in 100..<200 {
            sim.deliveries.append(.init(index: k, sequenceNumber: sim.firstSequenceNumber &+ UInt16(k),
                                        timestamp: sim.firstTimestamp &+ UInt32(k + 50) * 960,
                                        arrival: sim.start + UInt64(k + 50) * 20 * ms + 10 * ms))
        }
        let result = sim.run(ticks: 270)
        #expect(result.playedIndices == Array(0..<200))
        #expect(result.buffer.statistics.lost == 0)
        #expect(result.buffer.statistics.late == 0)
        let empties = result.outputs.filter { $0 == .empty }.count
        #expect(empties >= 50)
    }

    @Test("random pushes and pops never trap and stay within capacity")
    func hostile() {
        var generator = SeededGenerator(seed: 0xbad5eed)
        var configuration = JitterBuffer.Configuration()
        configuration.capacity = 32
        var buffer = JitterBuffer(configuration: configuration)
        var now: UInt64 = 0
        for _ in 0..<20_000 {
            now &+= UInt64(generator.below(5_000_000))
            switch generator.below(4) {
            case 0:
                _ = buffer.pop(now: now)
            default:
                let sequence = generator.below(3) == 0 ? UInt16(truncatingIfNeeded: generator.next()) : UInt16(generator.below(40))
                let timestamp = generator.below(3) == 0 ? UInt32(truncatingIfNeeded: generator.next()) : UInt32(generator.below(40_000))
                buffer.push(payload: [0], sequenceNumber: sequence, timestamp: timestamp,
                            ssrc: UInt32(generator.below(2) == 0 ? 1 : generator.below(3)), now: now)
            }
            #expect(buffer.statistics.bufferedPackets <= 32)
        }
        // Extreme clock values.
        _ = buffer.pop(now: .max)
        buffer.push(payload: [], sequenceNumber: 1, timestamp: .max, ssrc: 1, now: .max)
        _ = buffer.pop(now: 0)
    }
}

@Suite("JitterBuffer adaptation")
struct JitterBufferAdaptationTests {
    @Test("after jitter stops the target shrinks back to the minimum, one frame at a time")
    func shrinksWhenCalm() {
        var generator = SeededGenerator(seed: 0x5_4e1)
        var sim = JitterBufferSimulation()
        // 20 s of 0-100 ms jitter, then 40 s of a steady 10 ms.
        sim.send(count: 3000) { k in k < 1000 ? UInt64(generator.below(100_001)) * 1000 : 10 * ms }
        let result = sim.run(ticks: 3020)
        let stats = result.buffer.statistics
        #expect(result.maximumTarget > 80 * Int64(ms))
        #expect(stats.targetDelayNanoseconds == 20 * Int64(ms))
        #expect(stats.discardedForDelay > 0)
        // Shrinking drops at most one frame per shrink interval.
        #expect(stats.discardedForDelay <= UInt64(2000 / sim.configuration.shrinkIntervalTicks) + 1)
        // The calm phase ends near the minimum delay: 10 ms network + at most 20 + one tick.
        #expect(stats.lastBufferDelayNanoseconds < 45 * Int64(ms))
        let played = result.playedIndices
        #expect(zip(played, played.dropFirst()).allSatisfy { $0 < $1 })
        #expect(played.suffix(1000) == ArraySlice(2000..<3000))
    }
}

@Suite("MediaClock")
struct MediaClockTests {
    @Test("monotonic time maps to NTP through the fixed offset")
    func ntp() {
        let clock = MediaClock(monotonicNanoseconds: 5_000_000_000, unixNanoseconds: 1_700_000_000_000_000_000)
        #expect(clock.ntpTimestamp(at: 5_000_000_000) == NTPTimestamp(unixNanoseconds: 1_700_000_000_000_000_000))
        let later = clock.ntpTimestamp(at: 6_500_000_000)
        #expect(later.seconds == UInt32(1_700_000_001 + NTPTimestamp.unixEpochOffset))
        #expect(later.fraction == 1 << 31)
    }

    @Test("RTP unit conversions are exact for whole units and never overflow")
    func rtpUnits() {
        #expect(MediaClock.rtpUnits(nanoseconds: 20_000_000, clockRate: 48_000) == 960)
        #expect(MediaClock.rtpUnits(nanoseconds: 1_000_000_000, clockRate: 8_000) == 8_000)
        #expect(MediaClock.nanoseconds(rtpUnits: 960, clockRate: 48_000) == 20_000_000)
        #expect(MediaClock.nanoseconds(rtpUnits: -480, clockRate: 48_000) == -10_000_000)
        _ = MediaClock.rtpUnits(nanoseconds: .max, clockRate: .max)
        _ = MediaClock.nanoseconds(rtpUnits: .max, clockRate: 1)
        _ = MediaClock.nanoseconds(rtpUnits: .min, clockRate: 0)
    }
}
