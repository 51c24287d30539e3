import Testing
@testable import ParleySIP

/// RFC 5118 §4: the IPv6 torture messages.
@Suite("RFC 5118 §4 IPv6 torture messages")
struct RFC5118Tests {
    @Test("RFC 5118 4.1 ipv6-good: valid SIP message with an IPv6 reference")
    func ipv6Good() throws {
        let message = try receive(RFC5118.ipv6Good)
        #expect(message.requestURI?.host == .ipv6("2001:db8::10"))
        #expect(message.requestURI?.description == "sip:[2001:db8::10]")
        let via = try #require(try message.topVia())
        #expect(via.host == .ipv6("2001:db8::9:1"))
        #expect(via.host.addressBytes == [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x09, 0, 0x01])
        #expect(try message.contacts()?.addresses.first?.uri.host == .ipv6("2001:db8::1"))
    }

    @Test("RFC 5118 4.2 ipv6-bad: invalid SIP message with an IPv6 reference")
    func ipv6Bad() {
        expectAnswer(RFC5118.ipv6Bad, .malformedURI, status: 400, reason: "Bad Request-URI")
    }

    /// Well-formed, and the port is part of the address: 2001:db8::10:5070 with no port.
    @Test("RFC 5118 4.3 port-ambiguous: port ambiguous in a SIP URI")
    func portAmbiguous() throws {
        let uri = try #require(try receive(RFC5118.portAmbiguous).requestURI)
        #expect(uri.host == .ipv6("2001:db8::10:5070"))
        #expect(uri.port == nil)
    }

    @Test("RFC 5118 4.4 port-unambiguous: port unambiguous in a SIP URI")
    func portUnambiguous() throws {
        let uri = try #require(try receive(RFC5118.portUnambiguous).requestURI)
        #expect(uri.host == .ipv6("2001:db8::10"))
        #expect(uri.port == 5070)
    }

    @Test("RFC 5118 4.5 via-received-param-with-delim: IPv6 reference delimiters in Via received")
    func viaReceivedBracketed() throws {
        let via = try #require(try receive(RFC5118.viaReceivedBracketed).topVia())
        #expect(via.received?.addressBytes == SIPHost.ipv6("2001:db8::9:255").addressBytes)
        #expect(via.branch == "z9hG4bKas3-111")
    }

    @Test("RFC 5118 4.5 via-received-param-no-delim: bare IPv6 address in Via received")
    func viaReceivedBare() throws {
        let message = try receive(RFC5118.viaReceivedBare)
        let via = try #require(try message.topVia())
        #expect(via.received == .ipv6("2001:db8::9:255"))
        #expect(try message.contacts()?.addresses.first?.uri.host == .ipv6("2001:db8::9:1"))
    }

    @Test("RFC 5118 4.6 ipv6-in-sdp: SIP request with IPv6 addresses in the SDP body")
    func ipv6InSDP() throws {
        let message = try receive(RFC5118.ipv6InSDP)
        #expect(message.requestURI?.host == .ipv6("2001:db8::10"))
        #expect(try message.to()?.uri.host == .ipv6("2001:db8::10"))
        let sdp = try #require(try message.sessionDescription())
        #expect(String(decoding: sdp, as: UTF8.self).contains("c=IN IP6 2001:db8::20\r\n"))
    }

    @Test("RFC 5118 4.7 mult-ip-in-header: multiple IP addresses in SIP headers")
    func multipleAddressesInHeaders() throws {
        let message = try receive(RFC5118.multipleAddressesInHeaders)
        let vias = try message.vias()
        #expect(vias.map(\.host) == [.ipv6("2001:db8::9:1"), .ipv4("192.0.2.1"), .ipv6("2001:db8::9:255")])
        #expect(vias[0].port == 6050)
        #expect(vias[2].transport == "TCP")
        #expect(vias[2].received == .ipv4("192.0.2.200"))
        #expect(message.requestURI?.host == .name("host.example.net"))
    }

    @Test("RFC 5118 4.8 mult-ip-in-sdp: multiple IP addresses in SDP")
    func multipleAddressesInSDP() throws {
        let message = try receive(RFC5118.multipleAddressesInSDP)
        let sdp = String(decoding: try #require(try message.sessionDescription()), as: UTF8.self)
        #expect(sdp.contains("c=IN IP4 192.0.2.1\r\n"))
        #expect(sdp.contains("c=IN IP6 2001:db8::1\r\n"))
    }

    @Test("RFC 5118 4.9 ipv4-mapped-ipv6: IPv4-mapped IPv6 addresses")
    func ipv4MappedIPv6() throws {
        let message = try receive(RFC5118.ipv4MappedIPv6)
        let vias = try message.vias()
        #expect(vias[0].host == .ipv6("::ffff:192.0.2.10"))
        #expect(vias[0].port == 19823)
        #expect(vias[0].host.addressBytes == [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 0, 2, 10])
        #expect(vias[1].host == .ipv6("::ffff:192.0.2.2"))
        let contact = try #require(try message.contacts()?.addresses.first)
        #expect(contact.displayName == "T. desk phone")
        #expect(contact.uri.host == .ipv6("::ffff:192.0.2.2"))
    }

    /// The three-colon form RFC 3261's ABNF let through is no IPv6 address (RFC 4291); the
    /// RFC allows either accepting it or not, and it is refused here.
    @Test("RFC 5118 4.10 ipv6-bug-abnf-3-colons: three colons in an IPv6 reference")
    func threeColons() {
        expectAnswer(RFC5118.threeColons, .malformedURI, status: 400)
    }

    @Test("RFC 5118 4.10 ipv6-correct-abnf-2-colons: the correct IPv6 reference")
    func twoColons() throws {
        let message = try receive(RFC5118.twoColons)
        #expect(message.requestURI?.host == .ipv6("2001:db8::192.0.2.1"))
        #expect(message.requestURI?.host?.addressBytes == [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 192, 0, 2, 1])
    }

    @Test("RFC 5118 §4: every message round-trips and survives being cut short",
          arguments: [RFC5118.ipv6Good, RFC5118.portAmbiguous, RFC5118.portUnambiguous, RFC5118.viaReceivedBracketed,
                      RFC5118.viaReceivedBare, RFC5118.ipv6InSDP, RFC5118.multipleAddressesInHeaders,
                      RFC5118.multipleAddressesInSDP, RFC5118.ipv4MappedIPv6, RFC5118.twoColons])
    func roundTrip(_ bytes: [UInt8]) throws {
        let message = try receive(bytes)
        #expect(try receive(message.serialized()) == message)
        #expect(try streamMessage(bytes) == message)
        expectNoTrapOnPrefixes(bytes)
    }
}
