import Testing
import ParleyWireCore

@Suite struct ClockReadingTests {
    let start = ContinuousClock.now

    @Test func unixMillisecondsRoundTowardThePast() {
        #expect(ClockReading(instant: start, unixNanoseconds: 1_764_421_200_123_999_999).unixMilliseconds == 1_764_421_200_123)
        #expect(ClockReading(instant: start, unixNanoseconds: 0).unixMilliseconds == 0)
        // Before 1970 the floor is one millisecond earlier, not toward zero.
        #expect(ClockReading(instant: start, unixNanoseconds: -1).unixMilliseconds == -1)
        #expect(ClockReading(instant: start, unixNanoseconds: -1_000_000).unixMilliseconds == -1)
        #expect(ClockReading(instant: start, unixNanoseconds: -1_000_001).unixMilliseconds == -2)
    }

    @Test func millisecondReadingsRoundTripAndSaturate() {
        let reading = ClockReading(instant: start, unixMilliseconds: 1_764_421_200_000)
        #expect(reading.unixNanoseconds == 1_764_421_200_000_000_000)
        #expect(reading.unixMilliseconds == 1_764_421_200_000)
        #expect(reading == ClockReading(instant: start, unixNanoseconds: 1_764_421_200_000_000_000))
        #expect(ClockReading(instant: start, unixMilliseconds: .max).unixNanoseconds == .max)
        #expect(ClockReading(instant: start, unixMilliseconds: .min).unixNanoseconds == .min)
    }

    @Test func advancingMovesBothClocksTogether() {
        let reading = ClockReading(instant: start, unixMilliseconds: 50_000)
        let later = reading.advanced(by: .milliseconds(1500))
        #expect(later.instant == start.advanced(by: .milliseconds(1500)))
        #expect(later.unixMilliseconds == 51_500)
        // Sub-millisecond steps add up instead of being dropped one by one.
        var stepped = reading
        for _ in 0..<4 { stepped = stepped.advanced(by: .microseconds(250)) }
        #expect(stepped.unixMilliseconds == 50_001)
        #expect(reading.advanced(by: .seconds(-2)).unixMilliseconds == 48_000)
        let end = ClockReading(instant: start, unixNanoseconds: .max - 5)
        #expect(end.advanced(by: .seconds(1)).unixNanoseconds == .max)
    }
}
