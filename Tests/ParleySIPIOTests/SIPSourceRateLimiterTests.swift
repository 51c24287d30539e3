import ParleyNetCore
import Testing

@testable import ParleySIPIO

/// The per-source token buckets, in virtual time.
@Suite struct SIPSourceRateLimiterTests {
    private let start = ContinuousClock.now
    private let alice = try! SocketAddress(parsing: "192.0.2.1:5060")
    private let bob = try! SocketAddress(parsing: "192.0.2.2:5060")

    @Test func aBurstThenRefusalsThenDrops() {
        var limiter = SIPSourceRateLimiter(limit: SIPSourceRateLimit(requestsPerSecond: 10, burst: 5, refusalsPerSecond: 1, refusalBurst: 2))
        let verdicts = (0..<10).map { _ in limiter.admit(from: alice, at: start) }
        #expect(verdicts == Array(repeating: .admit, count: 5) + [.refuse, .refuse] + Array(repeating: .drop, count: 3))
        // Another source is not affected.
        #expect(limiter.admit(from: bob, at: start) == .admit)
        // The port does not make another source: a flood changes ports freely.
        #expect(limiter.admit(from: alice.withPort(9999), at: start) == .drop)
        // 100 ms later one request has come back (10/s), and no refusal yet (1/s).
        #expect(limiter.admit(from: alice, at: start.advanced(by: .milliseconds(100))) == .admit)
        #expect(limiter.admit(from: alice, at: start.advanced(by: .milliseconds(100))) == .drop)
        // After a second, a refusal too.
        let later = start.advanced(by: .milliseconds(1100))
        let afterASecond = (0..<12).map { _ in limiter.admit(from: alice, at: later) }
        #expect(afterASecond.filter { $0 == .admit }.count == 5)
        #expect(afterASecond.filter { $0 == .refuse }.count == 1)
    }

    @Test func theSustainedRateIsKept() {
        var limiter = SIPSourceRateLimiter(limit: SIPSourceRateLimit(requestsPerSecond: 50, burst: 100))
        var admitted = 0
        // 1000 requests/s for 4 s: the burst plus 50 a second.
        for tick in 0..<4000 where limiter.admit(from: alice, at: start.advanced(by: .milliseconds(tick))) == .admit {
            admitted += 1
        }
        #expect(admitted >= 100 + 4 * 50 - 1 && admitted <= 100 + 4 * 50 + 1)
    }

    @Test func theTableStaysBoundedAndForgetsRefilledSources() {
        var limiter = SIPSourceRateLimiter(limit: SIPSourceRateLimit(requestsPerSecond: 10, burst: 2, refusalsPerSecond: 1, refusalBurst: 1,
                                                                     maxTrackedSources: 100))
        for index in 0..<100 {
            _ = limiter.admit(from: SocketAddress(ipv4: 10, 0, 0, UInt8(index), port: 5060), at: start)
        }
        #expect(limiter.trackedSources == 100)
        // Full, and no tracked source has refilled its bucket yet: newcomers share one
        // bucket of ten times the rate, so a spoofed flood cannot grow the table.
        let shared = (0..<30).map { index in
            limiter.admit(from: SocketAddress(ipv4: 10, 0, 1, UInt8(index), port: 5060), at: start)
        }
        #expect(limiter.trackedSources == 100)
        #expect(shared.filter { $0 == .admit }.count == 20)
        // Once their buckets have refilled, the old sources are forgotten for new ones.
        #expect(limiter.admit(from: bob, at: start.advanced(by: .seconds(2))) == .admit)
        #expect(limiter.trackedSources == 1)
    }
}
