import Testing
import ParleyWireCore

@Suite struct DurationConversionsTests {
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

    @Test func wholeNanosecondsRoundTowardZeroAndSaturate() {
        #expect(Duration.zero.wholeNanoseconds == 0)
        #expect(Duration.milliseconds(20).wholeNanoseconds == 20_000_000)
        #expect(Duration.seconds(3).wholeNanoseconds == 3_000_000_000)
        #expect((Duration.seconds(2) + .nanoseconds(7)).wholeNanoseconds == 2_000_000_007)
        // Below a nanosecond: toward zero on both sides.
        #expect(Duration(secondsComponent: 0, attosecondsComponent: 999_999_999).wholeNanoseconds == 0)
        #expect((Duration.nanoseconds(-3) - Duration(secondsComponent: 0, attosecondsComponent: 5)).wholeNanoseconds == -3)
        #expect(Duration.nanoseconds(-1_500_000_000).wholeNanoseconds == -1_500_000_000)
        // Int64 nanoseconds end after about 292 years.
        let edge = Duration(secondsComponent: Int64.max / 1_000_000_000, attosecondsComponent: 0)
        #expect(edge.wholeNanoseconds == Int64.max / 1_000_000_000 * 1_000_000_000)
        let past = Duration(secondsComponent: Int64.max / 1_000_000_000 + 1, attosecondsComponent: 0)
        #expect(past.wholeNanoseconds == .max)
        #expect((Duration.zero - past).wholeNanoseconds == .min)
        // The seconds fit but adding the fraction does not.
        let almost = Duration(secondsComponent: Int64.max / 1_000_000_000, attosecondsComponent: 999_999_999_000_000_000)
        #expect(almost.wholeNanoseconds == .max)
    }

    @Test func fractionalSecondsKeepTheFraction() {
        #expect(Duration.zero.fractionalSeconds == 0)
        #expect(Duration.milliseconds(1500).fractionalSeconds == 1.5)
        #expect(Duration.milliseconds(-250).fractionalSeconds == -0.25)
        #expect(Duration.seconds(86_400).fractionalSeconds == 86_400)
        #expect(abs(Duration.nanoseconds(1).fractionalSeconds - 1e-9) < 1e-24)
        let huge = Duration(secondsComponent: Int64.max, attosecondsComponent: 0)
        #expect(huge.fractionalSeconds == Double(Int64.max))
    }
}
