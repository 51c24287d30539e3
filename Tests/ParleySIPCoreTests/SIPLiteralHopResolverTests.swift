import Testing
import ParleySIP
import ParleySIPCore

/// Where a dialog's target goes without DNS (RFC 3263 §4.1 for numeric hosts).
@Suite struct SIPLiteralHopResolverTests {
    private let resolver = SIPLiteralHopResolver(routes: [
        "Carrier.Example.Test": SIPHop(transport: .tcp, host: .ipv4("198.51.100.40"), port: 5080),
    ])

    @Test func numericHostsResolveToThemselves() {
        #expect(resolver.hop(for: Messages.uri("sip:gw@198.51.100.20:5070"))
                == SIPHop(transport: .udp, host: .ipv4("198.51.100.20"), port: 5070))
        #expect(resolver.hop(for: Messages.uri("sip:gw@198.51.100.20;transport=TCP"))
                == SIPHop(transport: .tcp, host: .ipv4("198.51.100.20"), port: 5060))
        #expect(resolver.hop(for: Messages.uri("sips:gw@[2001:db8::7]"))
                == SIPHop(transport: .tls, host: .ipv6("2001:db8::7"), port: 5061))
        #expect(resolver.hop(for: Messages.uri("sip:gw@198.51.100.20;maddr=198.51.100.21"))
                == SIPHop(transport: .udp, host: .ipv4("198.51.100.21"), port: 5060))
    }

    @Test func namesResolveOnlyThroughTheRoutes() {
        #expect(resolver.hop(for: Messages.uri("sip:gw@carrier.example.test;lr"))
                == SIPHop(transport: .tcp, host: .ipv4("198.51.100.40"), port: 5080))
        #expect(resolver.hop(for: Messages.uri("sip:gw@elsewhere.example.test")) == nil)
    }

    @Test func unreachableURIsResolveToNothing() {
        #expect(resolver.hop(for: Messages.uri("sip:gw@198.51.100.20;transport=sctp")) == nil)
        #expect(resolver.hop(for: Messages.uri("tel:+4615550101")) == nil)
    }
}
