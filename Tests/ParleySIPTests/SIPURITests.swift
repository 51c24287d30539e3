import Testing
@testable import ParleySIP

@Suite("SIP URIs (RFC 3261 §19.1, §25.1)")
struct SIPURITests {
    @Test("RFC 3261 §19.1.1: every component of a SIP URI")
    func components() throws {
        let uri = try SIPURI(parsing: "sips:alice:secretword@atlanta.com:5061;transport=tcp;user=phone;maddr=239.255.255.1;ttl=15;lr;method=INVITE;x=%41?subject=project%20x&priority=urgent")
        #expect(uri.scheme == .sips)
        #expect(uri.isSecure)
        #expect(uri.user == "alice")
        #expect(uri.password == "secretword")
        #expect(uri.host == .name("atlanta.com"))
        #expect(uri.port == 5061)
        #expect(uri.transport == "tcp")
        #expect(uri.userParameter == "phone")
        #expect(uri.maddr == "239.255.255.1")
        #expect(uri.ttl == 15)
        #expect(uri.isLooseRouting)
        #expect(uri.method == .invite)
        #expect(uri.parameter(named: "X")?.value == "A")
        #expect(uri.headers.map(\.name) == ["subject", "priority"])
        #expect(uri.headers.first?.value == "project x")
        #expect(uri.description == "sips:alice:secretword@atlanta.com:5061;transport=tcp;user=phone;maddr=239.255.255.1;ttl=15;lr;method=INVITE;x=%41?subject=project%20x&priority=urgent")
    }

    @Test("RFC 3261 §19.1.3: the example URIs parse and write back unchanged",
          arguments: ["sip:alice@atlanta.com", "sip:alice:secretword@atlanta.com;transport=tcp",
                      "sips:alice@atlanta.com?subject=project%20x&priority=urgent",
                      "sip:+1-212-555-1212:1234@gateway.com;user=phone", "sips:1212@gateway.com",
                      "sip:alice@192.0.2.4", "sip:atlanta.com;method=REGISTER?to=alice%40atlanta.com",
                      "sip:alice;day=tuesday@atlanta.com", "sip:[2001:db8::10]:5070;transport=udp",
                      "tel:+1-201-555-0123", "tel:7042;phone-context=example.com", "urn:service:sos",
                      "SIP:ALICE@AtLanTa.CoM;Transport=udp"])
    func examples(_ text: String) throws {
        let uri = try SIPURI(parsing: text)
        let written = uri.description
        #expect(try SIPURI(parsing: written) == uri)
        if text.hasPrefix("SIP:") { #expect(written == "sip:ALICE@AtLanTa.CoM;Transport=udp") } else { #expect(written == text) }
    }

    @Test("RFC 3261 §19.1.4: URIs that are equivalent", arguments: [
        ("sip:%61lice@atlanta.com;transport=TCP", "sip:alice@AtLanTa.CoM;Transport=tcp"),
        ("sip:carol@chicago.com", "sip:carol@chicago.com;newparam=5"),
        ("sip:carol@chicago.com", "sip:carol@chicago.com;security=on"),
        ("sip:carol@chicago.com;newparam=5", "sip:carol@chicago.com;security=on"),
        ("sip:biloxi.com;transport=tcp;method=REGISTER?to=sip:bob%40biloxi.com", "sip:biloxi.com;method=REGISTER;transport=tcp?to=sip:bob%40biloxi.com"),
        ("sip:alice@atlanta.com?subject=project%20x&priority=urgent", "sip:alice@atlanta.com?priority=urgent&subject=project%20x"),
        ("sip:alice@[2001:DB8::1]", "sip:alice@[2001:db8:0::1]"),
        ("tel:+1-201-555-0123", "tel:+12015550123"),
    ])
    func equivalent(_ pair: (String, String)) throws {
        let a = try SIPURI(parsing: pair.0)
        let b = try SIPURI(parsing: pair.1)
        #expect(a.isEquivalent(to: b))
        #expect(b.isEquivalent(to: a))
    }

    @Test("RFC 3261 §19.1.4: URIs that are not equivalent", arguments: [
        ("SIP:ALICE@AtLanTa.CoM;Transport=udp", "sip:alice@AtLanTa.CoM;Transport=UDP"),
        ("sip:bob@biloxi.com", "sip:bob@biloxi.com:5060"),
        ("sip:bob@biloxi.com", "sip:bob@biloxi.com;transport=udp"),
        ("sip:bob@biloxi.com", "sip:bob@biloxi.com:6000;transport=tcp"),
        ("sip:carol@chicago.com", "sip:carol@chicago.com?Subject=next%20meeting"),
        ("sip:bob@phone21.boxesbybob.com", "sip:bob@192.0.2.4"),
        ("sip:carol@chicago.com;security=on", "sip:carol@chicago.com;security=off"),
        ("sip:alice@atlanta.com", "sips:alice@atlanta.com"),
        ("sip:user%3Bx@example.com", "sip:user;x@example.com"),
    ])
    func notEquivalent(_ pair: (String, String)) throws {
        let a = try SIPURI(parsing: pair.0)
        let b = try SIPURI(parsing: pair.1)
        #expect(!a.isEquivalent(to: b))
        #expect(!b.isEquivalent(to: a))
    }

    @Test("RFC 5118: IPv6 references, and what is not one")
    func ipv6() throws {
        #expect(try SIPURI(parsing: "sip:[::1]").host == .ipv6("::1"))
        #expect(try SIPURI(parsing: "sip:[::]:5060").port == 5060)
        #expect(try SIPURI(parsing: "sip:u@[1:2:3:4:5:6:7:8]").host?.addressBytes?.count == 16)
        for bad in ["sip:[2001:db8::1", "sip:[2001:db8:::1]", "sip:[1:2:3:4:5:6:7:8:9]", "sip:[1::2::3]", "sip:[12345::]",
                    "sip:[::ffff:192.0.2.256]", "sip:[fe80::1%eth0]", "sip:2001:db8::1", "sip:[]"] {
            #expect(throws: SIPError.self, "\(bad)") { try SIPURI(parsing: bad) }
        }
    }

    @Test("RFC 3261 §25.1: malformed URIs are refused")
    func malformed() {
        for bad in ["", "sip:", "sip:@example.com", "sip:user@", "sip:user@exa mple.com", "<sip:a@b>", "sip:a@b:", "sip:a@b:99999",
                    "sip:a@b;=x", "sip:a@b;x=", "sip:a@b?x", "sip:a@b?=x", "sip:a%zz@b", "sip:a@-b.com", "sip:a@b.1com",
                    "sip:a@256.1.1.1x", "1sip:a@b", "tel:", "tel:+1-A", "tel:+1;x=", "urn:a b", "sip:a@b;lr junk"] {
            #expect(throws: SIPError.self, "\(bad)") { try SIPURI(parsing: bad) }
        }
    }

    @Test("Builders escape what they must and refuse what they cannot write")
    func builders() throws {
        var uri = try SIPURI(user: "I have spaces@home", host: .name("example.net"), port: 5062,
                             parameters: [SIPURI.Parameter(name: "transport", value: "tcp")])
        #expect(uri.description == "sip:I%20have%20spaces%40home@example.net:5062;transport=tcp")
        #expect(try SIPURI(parsing: uri.description).user == "I have spaces@home")
        uri.setParameter(name: "lr")
        uri.setParameter(name: "transport", value: "udp")
        #expect(uri.description == "sip:I%20have%20spaces%40home@example.net:5062;transport=udp;lr")
        uri.removeParameter(named: "LR")
        try uri.setUser("+4615550101")
        #expect(uri.description == "sip:+4615550101@example.net:5062;transport=udp")
        #expect(throws: SIPError.self) { try SIPURI(host: .name("bad host>")) }
        #expect(throws: SIPError.self) { try SIPURI(user: "", host: .name("example.com")) }
        #expect(try SIPURI(telephoneNumber: "+4615550101").description == "tel:+4615550101")
        #expect(throws: SIPError.self) { try SIPURI(telephoneNumber: "+46 15") }
        let header = SIPURI.Header(name: "Route", value: "<sip:x.example.com>")
        #expect(header.description == "Route=%3Csip:x.example.com%3E")
    }
}
