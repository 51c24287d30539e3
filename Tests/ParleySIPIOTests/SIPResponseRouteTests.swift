import ParleyNetCore
import ParleySIP
import Testing

@testable import ParleySIPIO

/// Where a response goes (RFC 3261 §18.2.2, RFC 3581 §4).
@Suite struct SIPResponseRouteTests {
    private let udpSource = SIPMessageSource(transport: .udp, remoteAddress: try! SocketAddress(parsing: "203.0.113.9:40000"),
                                             localAddress: .ipv4Loopback(port: 5060), connectionID: nil)
    private let tcpSource = SIPMessageSource(transport: .tcp, remoteAddress: try! SocketAddress(parsing: "203.0.113.9:40001"),
                                             localAddress: .ipv4Loopback(port: 5060), connectionID: 7)

    private func route(_ via: String?, _ source: SIPMessageSource, open: Bool = true) throws -> SIPResponseRoute {
        SIPResponseRoute.resolve(topVia: try via.map { try SIPVia(parsing: $0) }, source: source, connectionOpen: open)
    }

    @Test func udpFollowsRportThenReceivedThenSentBy() throws {
        #expect(try route("SIP/2.0/UDP 10.0.0.2:5060;branch=z9hG4bK1;rport=40000;received=203.0.113.9", udpSource)
                == .datagram(try SocketAddress(parsing: "203.0.113.9:40000")))
        #expect(try route("SIP/2.0/UDP 10.0.0.2:5062;branch=z9hG4bK1;received=203.0.113.9", udpSource)
                == .datagram(try SocketAddress(parsing: "203.0.113.9:5062")))
        #expect(try route("SIP/2.0/UDP 198.51.100.1;branch=z9hG4bK1", udpSource)
                == .datagram(try SocketAddress(parsing: "198.51.100.1:5060")))
        #expect(try route("SIP/2.0/UDP [2001:db8::1]:5070;branch=z9hG4bK1", udpSource)
                == .datagram(try SocketAddress(parsing: "[2001:db8::1]:5070")))
        // A bare rport never stamped: the source is all there is.
        #expect(try route("SIP/2.0/UDP 10.0.0.2;branch=z9hG4bK1;rport", udpSource) == .datagram(udpSource.remoteAddress))
        // rport without received: the source's address.
        #expect(try route("SIP/2.0/UDP 10.0.0.2;branch=z9hG4bK1;rport=41000", udpSource)
                == .datagram(try SocketAddress(parsing: "203.0.113.9:41000")))
    }

    @Test func udpCannotReachANameAndFallsBackToTheSourceWithoutAVia() throws {
        guard case .unroutable = try route("SIP/2.0/UDP pc33.example.com;branch=z9hG4bK1", udpSource) else {
            Issue.record("a name without received must be unroutable")
            return
        }
        #expect(try route(nil, udpSource) == .datagram(udpSource.remoteAddress))
    }

    @Test func tcpUsesTheConnectionWhileOpenThenReceivedAndSentByPort() throws {
        let via = "SIP/2.0/TCP pc33.example.com:5070;branch=z9hG4bK1;received=203.0.113.9"
        #expect(try route(via, tcpSource) == .connection(7))
        #expect(try route(via, tcpSource, open: false) == .stream(try SocketAddress(parsing: "203.0.113.9:5070")))
        #expect(try route("SIP/2.0/TCP 198.51.100.1;branch=z9hG4bK1", tcpSource, open: false)
                == .stream(try SocketAddress(parsing: "198.51.100.1:5060")))
        guard case .unroutable = try route(nil, tcpSource, open: false) else {
            Issue.record("a closed connection and no Via must be unroutable")
            return
        }
    }
}
