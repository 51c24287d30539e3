import ParleySIPIO
import Testing

/// `SIPInviteFlood` against a `SIPTransportServer` with the default limit (50 requests/s,
/// a burst of 100; 503s at 5/s, a burst of 10), its counters checked too.
@Suite struct SIPRateLimitFloodTests {
    @Test func aFloodFromOneSourceIsLimitedWhileAnotherIsServed() throws {
        let server = try startServer()
        defer { server.shutdown() }
        let size = 600
        let outcome = try SIPInviteFlood.run(against: server.localAddress, limit: server.configuration.rateLimit, size: size)
        let statistics = server.statistics
        #expect(statistics.rateLimitRefused == outcome.refused)
        #expect(statistics.rateLimitDropped > 0)
        // Every INVITE was admitted, refused or dropped (a few may be lost on the way).
        #expect(statistics.rateLimitDropped >= size - outcome.answered - outcome.refused - 5)
    }
}
