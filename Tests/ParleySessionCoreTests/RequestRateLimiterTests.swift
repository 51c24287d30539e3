import Testing

import ParleySessionCore

/// The soft request limit's token bucket, with time as an argument.
@Suite struct RequestRateLimiterTests {
    @Test func aBurstThenOnePerIntervalAndNeverMoreThanTheBurst() {
        let start = ContinuousClock.now
        var limiter = RequestRateLimiter(perSecond: 20, burst: 50)
        // (requests at a time, how many of them are allowed)
        var outcomes: [Int] = []
        for (count, time) in [(51, start), (1, start + .milliseconds(40)), (1, start + .milliseconds(55)),
                              (1, start + .milliseconds(60)), (60, start + .seconds(3600)),
                              // Earlier than the last (frames are stamped on the edge's thread): adds nothing.
                              (1, start + .seconds(3599))] {
            var allowed = 0
            for _ in 0..<count where limiter.allow(at: time) { allowed += 1 }
            outcomes.append(allowed)
        }
        // The burst, then one token per 50 ms (20 per second), then a long pause refills
        // the bucket to the burst and not beyond.
        #expect(outcomes == [50, 0, 1, 0, 50, 0])
    }
}
