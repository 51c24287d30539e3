import ParleyNetCore
import ParleySIP
import Testing

@testable import ParleySIPIO

/// What the server transport writes into a received request's top Via (RFC 3261
/// §18.2.1, RFC 3581 §4).
@Suite struct SIPViaStampTests {
    private func stamped(_ via: String, source: String, force: Bool = false) throws -> String {
        var message = try SIPMessage(datagram: options(callID: "stamp", via: via, rport: false))
        try message.headers.set(name: "Via", value: via)
        try SIPViaStamp.stamp(&message, source: try SocketAddress(parsing: source), forceReturnPort: force)
        return message.headers.first("via") ?? ""
    }

    @Test func rportAsksForTheSourcePortAndAlwaysGetsReceived() throws {
        // RFC 3581 §4: received even when it equals the sent-by.
        #expect(try stamped("SIP/2.0/UDP 192.0.2.1:5060;branch=z9hG4bK1;rport", source: "192.0.2.1:40000")
                == "SIP/2.0/UDP 192.0.2.1:5060;branch=z9hG4bK1;rport=40000;received=192.0.2.1")
        #expect(try stamped("SIP/2.0/UDP 10.0.0.2:5060;rport;branch=z9hG4bK1", source: "203.0.113.9:1024")
                == "SIP/2.0/UDP 10.0.0.2:5060;rport=1024;branch=z9hG4bK1;received=203.0.113.9")
    }

    @Test func receivedOnlyWhenTheSentByDiffersWithoutRport() throws {
        #expect(try stamped("SIP/2.0/UDP 192.0.2.1:5062;branch=z9hG4bK1", source: "192.0.2.1:5062")
                == "SIP/2.0/UDP 192.0.2.1:5062;branch=z9hG4bK1")
        #expect(try stamped("SIP/2.0/UDP 10.0.0.2;branch=z9hG4bK1", source: "203.0.113.9:5060")
                == "SIP/2.0/UDP 10.0.0.2;branch=z9hG4bK1;received=203.0.113.9")
        // A name is never the source address (§18.2.1).
        #expect(try stamped("SIP/2.0/TCP pc33.example.com:5060;branch=z9hG4bK1", source: "192.0.2.4:5060")
                == "SIP/2.0/TCP pc33.example.com:5060;branch=z9hG4bK1;received=192.0.2.4")
    }

    @Test func forcedReturnPortStampsEveryRequest() throws {
        #expect(try stamped("SIP/2.0/UDP 192.0.2.1:5060;branch=z9hG4bK1", source: "192.0.2.1:40000", force: true)
                == "SIP/2.0/UDP 192.0.2.1:5060;branch=z9hG4bK1;received=192.0.2.1;rport=40000")
    }

    @Test func ipv6SourcesAreWrittenBare() throws {
        // received holds a bare IPv6 address (RFC 3261 §20.42, RFC 5118 §4.5).
        #expect(try stamped("SIP/2.0/UDP [2001:db8::9:1];branch=z9hG4bK1;rport", source: "[2001:db8::9:255]:5070")
                == "SIP/2.0/UDP [2001:db8::9:1];branch=z9hG4bK1;rport=5070;received=2001:db8::9:255")
        // The same address written otherwise is the same address.
        #expect(try stamped("SIP/2.0/UDP [2001:DB8:0::1];branch=z9hG4bK1", source: "[2001:db8::1]:5060")
                == "SIP/2.0/UDP [2001:DB8:0::1];branch=z9hG4bK1")
    }

    @Test func onlyTheTopViaChangesAndFieldsKeepTheirPlaces() throws {
        let text = """
            OPTIONS sip:a@example.test SIP/2.0\r
            v: SIP/2.0/UDP 10.0.0.1;branch=z9hG4bKtop, SIP/2.0/UDP proxy.example.test;branch=z9hG4bKp\r
            Max-Forwards: 70\r
            Via: SIP/2.0/UDP origin.example.test;branch=z9hG4bKo\r
            To: <sip:a@example.test>\r
            From: <sip:b@example.test>;tag=1\r
            Call-ID: v1\r
            CSeq: 1 OPTIONS\r
            Content-Length: 0\r
            \r

            """
        var message = try SIPMessage(datagram: Array(text.utf8))
        try SIPViaStamp.stamp(&message, source: try SocketAddress(parsing: "198.51.100.7:6000"), forceReturnPort: false)
        #expect(message.headers.fields.map(\.canonicalName) == ["via", "via", "max-forwards", "via", "to", "from", "call-id", "cseq", "content-length"])
        #expect(try message.vias().map(\.description) == [
            "SIP/2.0/UDP 10.0.0.1;branch=z9hG4bKtop;received=198.51.100.7",
            "SIP/2.0/UDP proxy.example.test;branch=z9hG4bKp",
            "SIP/2.0/UDP origin.example.test;branch=z9hG4bKo",
        ])
    }
}
