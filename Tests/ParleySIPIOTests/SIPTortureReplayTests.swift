import ParleySIPIO
import Testing

/// The torture replay (`SIPTortureReplay`) against a `SIPTransportServer` in this process,
/// its counters checked too. Tests/ParleyEndToEndTests replays it against parleyd.
@Suite struct SIPTortureReplayTests {
    private static func torturedServer() throws -> SIPTransportServer {
        try startServer {
            // Many requests from one source in a burst; and the messages' Vias name hosts
            // that are not this test, so answers go to the packet's source.
            $0.rateLimit = SIPSourceRateLimit(requestsPerSecond: 100_000, burst: 100_000)
            $0.forceReturnPort = true
        }
    }

    @Test func everyTortureMessageOverUDP() throws {
        let server = try Self.torturedServer()
        defer { server.shutdown() }
        try SIPTortureReplay.replayOverUDP(to: server.localAddress)
        let statistics = server.statistics
        #expect(statistics.received[.udp] == 2 * SIPTortureReplay.messages.count)
        #expect(statistics.dropped[.rateLimited] == 0)
    }

    @Test func everyTortureMessageOverTCP() throws {
        let server = try Self.torturedServer()
        defer { server.shutdown() }
        try SIPTortureReplay.replayOverTCP(to: server.localAddress)
        #expect((server.statistics.received[.tcp] ?? 0) >= SIPTortureReplay.messages.count)
    }
}
