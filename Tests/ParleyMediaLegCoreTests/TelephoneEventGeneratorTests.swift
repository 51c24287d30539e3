import ParleyMediaLegCore
import ParleyRTP
import Testing

/// The RFC 4733 pacer on its own, tick by tick: digits, forwarded events, ends that come
/// late or never, and the limits.
@Suite struct TelephoneEventGeneratorTests {
    /// Ticks the generator `count` times from `timestamp`, the stream's clock moving a
    /// frame per tick; returns the packets (nil for a tick without one).
    static func run(_ generator: inout TelephoneEventGenerator, ticks count: Int, from timestamp: inout UInt32) -> [TelephoneEventGenerator.Packet?] {
        (0..<count).map { _ in
            defer { timestamp &+= generator.unitsPerTick }
            return generator.tick(timestamp: timestamp)
        }
    }

    @Test func digitsAreTonesOfFiveTicksWithTheirEndThreeTimesThenAGap() {
        var generator = TelephoneEventGenerator(clockRate: 8000)
        #expect(generator.unitsPerTick == 160 && generator.toneTicks == 5 && generator.gapTicks == 4)
        #expect(generator.isIdle && !generator.isSending)
        let accepted = generator.enqueueDigits([1, 11])
        #expect(accepted)
        var timestamp: UInt32 = 1000
        let packets = Self.run(&generator, ticks: 20, from: &timestamp)
        let first = packets[0..<8].compactMap { $0 }
        #expect(first.count == 8)
        #expect(first.allSatisfy { $0.timestamp == 1000 && $0.event.event == 1 && $0.event.volume == 10 })
        #expect(first.map(\.marker) == [true] + Array(repeating: false, count: 7))
        #expect(first.map(\.event.duration) == [160, 320, 480, 640, 800, 800, 800, 800])
        #expect(first.map(\.event.isEnd) == [false, false, false, false, false, true, true, true])
        // The gap: 70 ms rounded up to four ticks from the end, three of which carry its copies.
        #expect(packets[8] == nil)
        let second = packets[9..<17].compactMap { $0 }
        #expect(second.count == 8 && second.allSatisfy { $0.event.event == 11 && $0.timestamp == 1000 + 9 * 160 })
        #expect(second.first?.marker == true)
        #expect(packets[17...].allSatisfy { $0 == nil })
        #expect(generator.isIdle && generator.packetsSent == 16)
    }

    @Test func aForwardedEventGrowsUntilItsEndArrives() {
        var generator = TelephoneEventGenerator(clockRate: 48_000)
        var accepted = generator.forwardBegin(event: 7, volume: 12, key: 555)
        #expect(accepted)
        accepted = generator.forwardBegin(event: 7, volume: 12, key: 555)
        #expect(accepted, "a repeat of the begin is the same event")
        var timestamp: UInt32 = 0
        var packets = Self.run(&generator, ticks: 4, from: &timestamp).compactMap { $0 }
        #expect(packets.map(\.event.duration) == [960, 1920, 2880, 3840])
        #expect(generator.isSending)
        // Its source said 100 ms: 4800 here.
        accepted = generator.forwardEnd(event: 7, volume: 12, key: 555, duration: 4800)
        #expect(accepted)
        packets += Self.run(&generator, ticks: 6, from: &timestamp).compactMap { $0 }
        #expect(packets.map(\.event.duration) == [960, 1920, 2880, 3840, 4800, 4800, 4800, 4800])
        #expect(packets.map(\.event.isEnd) == [false, false, false, false, false, true, true, true])
        #expect(packets.allSatisfy { $0.event.volume == 12 && $0.timestamp == 0 })
        #expect(generator.isIdle)
    }

    @Test func anEndShorterThanTheUpdatesSentKeepsTheLongestDuration() {
        var generator = TelephoneEventGenerator(clockRate: 8000)
        _ = generator.forwardBegin(event: 2, volume: 10, key: 1)
        var timestamp: UInt32 = 0
        _ = Self.run(&generator, ticks: 6, from: &timestamp)
        _ = generator.forwardEnd(event: 2, volume: 10, key: 1, duration: 500)
        let ends = Self.run(&generator, ticks: 3, from: &timestamp).compactMap { $0 }
        #expect(ends.map(\.event.duration) == [960, 960, 960] && ends.allSatisfy(\.event.isEnd))
    }

    @Test func anEndWhoseBeginWasLostIsSentAsItsEndAlone() {
        var generator = TelephoneEventGenerator(clockRate: 8000)
        var accepted = generator.forwardEnd(event: 9, volume: 10, key: 42, duration: 800)
        #expect(accepted)
        var timestamp: UInt32 = 0
        let packets = Self.run(&generator, ticks: 4, from: &timestamp)
        #expect(packets[3] == nil)
        let sent = packets.compactMap { $0 }
        #expect(sent.map(\.marker) == [true, false, false])
        #expect(sent.allSatisfy { $0.event.isEnd && $0.event.duration == 800 && $0.event.event == 9 })
        // Its other copies are the same event: nothing more.
        accepted = generator.forwardEnd(event: 9, volume: 10, key: 42, duration: 800)
        #expect(accepted)
        #expect(Self.run(&generator, ticks: 4, from: &timestamp).allSatisfy { $0 == nil })
    }

    @Test func anEventWhoseEndNeverComesIsEndedByTheGenerator() {
        var generator = TelephoneEventGenerator(clockRate: 8000, maximumOpenDuration: .milliseconds(200))
        _ = generator.forwardBegin(event: 3, volume: 10, key: 9)
        var timestamp: UInt32 = 0
        let packets = Self.run(&generator, ticks: 20, from: &timestamp).compactMap { $0 }
        #expect(packets.count == 13)
        #expect(packets.prefix(10).map(\.event.duration) == (1...10).map { UInt16($0 * 160) })
        #expect(packets.suffix(3).allSatisfy { $0.event.isEnd && $0.event.duration == 1600 })
        // Its end, late: already ended, not sent again.
        let accepted = generator.forwardEnd(event: 3, volume: 10, key: 9, duration: 4000)
        #expect(accepted)
        #expect(Self.run(&generator, ticks: 5, from: &timestamp).allSatisfy { $0 == nil })
    }

    @Test func theDurationFieldIsNeverOverrun() {
        // At 48 kHz 16 bits hold 1.365 s: the event ends there.
        var generator = TelephoneEventGenerator(clockRate: 48_000, maximumOpenDuration: .seconds(10))
        _ = generator.forwardBegin(event: 0, volume: 10, key: 1)
        var timestamp: UInt32 = 0
        let packets = Self.run(&generator, ticks: 100, from: &timestamp).compactMap { $0 }
        #expect(packets.count == 72)
        #expect(packets.dropLast(3).last?.event.duration == UInt16.max)
        #expect(packets.suffix(3).allSatisfy { $0.event.isEnd && $0.event.duration == UInt16.max })
        #expect(zip(packets, packets.dropFirst()).allSatisfy { $0.event.duration <= $1.event.duration })
    }

    @Test func theNextEventFromTheSourceEndsTheOneWhoseEndWasLost() {
        var generator = TelephoneEventGenerator(clockRate: 8000)
        _ = generator.forwardBegin(event: 1, volume: 10, key: 100)
        var timestamp: UInt32 = 0
        _ = Self.run(&generator, ticks: 3, from: &timestamp)
        _ = generator.forwardBegin(event: 2, volume: 10, key: 200)
        let packets = Self.run(&generator, ticks: 5, from: &timestamp).compactMap { $0 }
        #expect(packets.prefix(3).allSatisfy { $0.event.event == 1 && $0.event.isEnd && $0.event.duration == 480 })
        #expect(packets[3].event.event == 2 && packets[3].marker && packets[3].timestamp == 6 * 160)
        // The lost event's end, arriving after all, is not sent as an event of its own.
        let accepted = generator.forwardEnd(event: 1, volume: 10, key: 100, duration: 800)
        #expect(accepted)
        let rest = Self.run(&generator, ticks: 20, from: &timestamp).compactMap { $0 }
        #expect(rest.allSatisfy { $0.event.event == 2 })
    }

    @Test func theQueueIsBounded() {
        var generator = TelephoneEventGenerator(clockRate: 8000, maximumQueued: 4)
        var accepted = generator.enqueueDigits([1, 2, 3, 4, 5])
        #expect(!accepted, "all or nothing")
        #expect(generator.isIdle)
        accepted = generator.enqueueDigits([1, 2, 3])
        #expect(accepted)
        accepted = generator.forwardBegin(event: 4, volume: 10, key: 1)
        #expect(accepted)
        accepted = generator.forwardBegin(event: 5, volume: 10, key: 2)
        #expect(!accepted)
        accepted = generator.enqueueDigits([6])
        #expect(!accepted)
        generator.reset()
        #expect(generator.isIdle)
    }
}
