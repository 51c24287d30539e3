import Testing
import ParleyWireCore

@Suite struct DurationMillisecondsTests {
    @Test func wholeMillisecondsRoundTowardZero() {
        #expect(Duration.zero.wholeMilliseconds == 0)
        #expect(Duration.milliseconds(1500).wholeMilliseconds == 1500)
        #expect(Duration.seconds(90).wholeMilliseconds == 90_000)
        #expect(Duration.microseconds(1999).wholeMilliseconds == 1)
        #expect(Duration.microseconds(999).wholeMilliseconds == 0)
        #expect(Duration.microseconds(-1500).wholeMilliseconds == -1)
        #expect((Duration.seconds(2) - .nanoseconds(1)).wholeMilliseconds == 1999)
    }

    @Test func roundedUpNeverEndsEarly() {
        #expect(Duration.zero.wholeMillisecondsRoundedUp == 0)
        #expect(Duration.milliseconds(20).wholeMillisecondsRoundedUp == 20)
        #expect(Duration.nanoseconds(1).wholeMillisecondsRoundedUp == 1)
        #expect(Duration.microseconds(1001).wholeMillisecondsRoundedUp == 2)
        #expect((Duration.seconds(1) + Duration(secondsComponent: 0, attosecondsComponent: 1)).wholeMillisecondsRoundedUp == 1001)
        // Up means toward +∞: -1.5 ms is -1.
        #expect(Duration.microseconds(-1500).wholeMillisecondsRoundedUp == -1)
    }

    @Test func hugeDurationsSaturate() {
        let huge = Duration(secondsComponent: Int64.max / 10, attosecondsComponent: 0)
        #expect(huge.wholeMilliseconds == .max && huge.wholeMillisecondsRoundedUp == .max)
        #expect((Duration.zero - huge).wholeMilliseconds == .min)
        // Just inside the range: exact.
        let edge = Duration(secondsComponent: Int64.max / 1000, attosecondsComponent: 0)
        #expect(edge.wholeMilliseconds == Int64.max / 1000 * 1000)
    }
}
