import Testing
@testable import ParleySIP

/// RFC 4475 §3.1.1: every valid torture message parses, validates, and reads as the RFC
/// says it should.
@Suite("RFC 4475 §3.1.1 valid messages")
struct RFC4475ValidMessageTests {
    @Test("RFC 4475 3.1.1.1 wsinv: short tortuous INVITE")
    func wsinv() throws {
        let message = try receive(RFC4475.wsinv)
        #expect(message.method == .invite)
        let uri = try #require(message.requestURI)
        #expect(uri.user == "vivekg")
        #expect(uri.host == .name("chair-dnrc.example.com"))
        #expect(uri.parameters.map(\.name) == ["unknownparam"])
        #expect(uri.parameters.first?.value == nil)

        let to = try #require(try message.to())
        #expect(to.displayName == nil)
        #expect(to.uri.user == "vivekg")
        #expect(to.tag == "1918181833n")
        let from = try #require(try message.from())
        #expect(from.displayName == #"J Rosenberg \""#)
        #expect(from.uri.description == "sip:jdrosen@example.com")
        #expect(from.tag == "98asjd8")
        #expect(try message.maxForwards() == 68)
        #expect(try message.callID() == "wsinv.ndaksdj@192.0.2.1")
        #expect(try message.contentLength() == 150)
        #expect(try message.cseq() == SIPCSeq(sequence: 9, method: .invite))

        let vias = try message.vias()
        #expect(vias.map(\.host) == [.ipv4("192.0.2.2"), .name("spindle.example.com"), .ipv4("192.168.255.111")])
        #expect(vias.map(\.transport) == ["UDP", "TCP", "UDP"])
        #expect(vias.map(\.branch) == ["390skdjuw", "z9hG4bK9ikj8", "z9hG4bK30239"])
        #expect(vias.map(\.hasRFC3261Branch) == [false, true, true])
        #expect(vias.allSatisfy { $0.protocolName == "SIP" && $0.protocolVersion == "2.0" && $0.port == nil })

        // The empty Subject, the unknown headers (one value each, commas and all), folding.
        #expect(message.headers["Subject"] == [""])
        #expect(message.headers["newfangledheader"] == ["newfangled value continued newfangled value"])
        #expect(message.headers.values("UnknownHeaderWithUnusualValue") == [";;,,;;,;"])

        let route = try #require(try message.routes().first)
        #expect(route.uri.isLooseRouting)
        #expect(route.uri.parameter(named: "unknownwith")?.value == "value")
        #expect(route.uri.parameter(named: "unknown-no-value") != nil)

        let contact = try #require(try message.contacts()?.addresses.first)
        #expect(contact.displayName == #"Quoted string """#)
        #expect(contact.parameter(named: "newparam")?.value == "newvalue")
        #expect(contact.parameter(named: "secondparam")?.value == nil)
        #expect(try contact.qValue() == 330)
        #expect(try message.contentType()?.isSDP == true)
        #expect(message.body.count == 150)
        #expect(try message.sessionDescription() == message.body)
    }

    @Test("RFC 4475 3.1.1.2 intmeth: wide range of valid characters")
    func intmeth() throws {
        let message = try receive(RFC4475.intmeth)
        let method = "!interesting-Method0123456789_*+`.%indeed'~"
        #expect(message.method == .extension(method))
        let uri = try #require(message.requestURI)
        #expect(uri.user == "1_unusual.URI~(to-be!sure)&isn't+it$/crazy?,/;;*")
        #expect(uri.password == "&it+has=1,weird!*pas$wo~d_too.(doesn't-it)")
        #expect(uri.host == .name("example.com"))
        #expect(uri.parameters.isEmpty)
        #expect(try message.topVia()?.branch == "z9hG4bK-.!%66*_+`'~")
        let to = try #require(try message.to())
        #expect(to.displayName == "BEL:\u{07} NUL:\u{00} DEL:\u{7F}")
        #expect(to.uri.user == "1_unusual.URI~(to-be!sure)&isn't+it$/crazy?,/;;*")
        let from = try #require(try message.from())
        #expect(from.displayName == "token1~` token2'+_ token3*%!.-")
        #expect(from.parameter(named: "fromParam''~+*_!.-%")?.value == "работающий")
        #expect(from.parameter(named: "fromParam''~+*_!.-%")?.isQuoted == true)
        #expect(from.tag == "_token~1'+`*%!-.")
        #expect(try message.callID() == #"intmeth.word%ZK-!.*_+'@word`~)(><:\/"][?}{"#)
        #expect(try message.cseq() == SIPCSeq(sequence: 139122385, method: .extension(method)))
        #expect(try message.maxForwards() == 255)
        #expect(message.headers["extensionHeader-!.%*+_`'~"] == ["\u{FEFF}大停電"])
    }

    @Test("RFC 4475 3.1.1.3 esc01: valid use of the % escaping mechanism")
    func esc01() throws {
        let message = try receive(RFC4475.esc01)
        let uri = try #require(message.requestURI)
        #expect(uri.user == "sips:user@example.com")
        #expect(uri.escapedUser == "sips%3Auser%40example.com")
        #expect(uri.host == .name("example.net"))
        #expect(try message.to()?.uri.user == "user")
        #expect(try message.from()?.uri.user == "I have spaces")
        #expect(try message.callID() == "esc01.239409asdfakjkn23onasd0-3234")
        #expect(try message.contentType()?.isSDP == true)
        let contact = try #require(try message.contacts()?.addresses.first)
        #expect(contact.uri.user == "caller")
        // "%6C%72" is lr, and n%61me's value is "value%41", never "valueA" (RFC 3986: no
        // recursive unescaping).
        #expect(contact.uri.isLooseRouting)
        #expect(contact.uri.parameter(named: "name")?.value == "value%41")
    }

    @Test("RFC 4475 3.1.1.4 escnull: escaped nulls in URIs")
    func escnull() throws {
        let message = try receive(RFC4475.escnull)
        #expect(message.method == .register)
        #expect(try message.to()?.uri.user == "null-\u{00}-null")
        #expect(try message.from()?.uri.user == "null-\u{00}-null")
        let contacts = try #require(try message.contacts()?.addresses)
        // Two distinct bindings: the NULs do not shorten the user parts.
        #expect(contacts.map(\.uri.user) == ["\u{00}", "\u{00}\u{00}"])
        #expect(!contacts[0].uri.isEquivalent(to: contacts[1].uri))
        #expect(try message.contentLength() == 0)
    }

    @Test("RFC 4475 3.1.1.5 esc02: use of % when it is not an escape")
    func esc02() throws {
        let message = try receive(RFC4475.esc02)
        #expect(message.method == .extension("RE%47IST%45R"))
        #expect(message.method != .register)
        #expect(try message.to()?.displayName == "%Z%45")
        #expect(try message.from()?.displayName == "%Z%45")
        #expect(try message.topVia()?.branch == "z9hG4bK209%fzsnel234")
        #expect(try message.cseq()?.method == .extension("RE%47IST%45R"))
        // Two Contact values; C%6Fntact is an unknown header, not a third.
        #expect(try message.contacts()?.addresses.map(\.uri.user) == ["alias1", "alias3"])
        #expect(message.headers["C%6Fntact"] == ["<sip:alias2@host2.example.com>"])
    }

    @Test("RFC 4475 3.1.1.6 lwsdisp: no LWS between display name and <")
    func lwsdisp() throws {
        let message = try receive(RFC4475.lwsdisp)
        let from = try #require(try message.from())
        #expect(from.displayName == "caller")
        #expect(from.uri.description == "sip:caller@example.com")
        #expect(from.tag == "323")
    }

    @Test("RFC 4475 3.1.1.7 longreq: long values in header fields")
    func longreq() throws {
        let message = try receive(RFC4475.longreq)
        let to = try #require(try message.to())
        #expect(to.displayName == RFC4475.longDisplayName)
        #expect(to.uri.port == 6000)
        #expect(to.uri.parameters.count == 3)
        #expect(to.uri.parameters.last?.value == nil)
        let from = try #require(try message.from())
        #expect(from.uri.user == RFC4475.longCaller)
        #expect(from.tag == RFC4475.longFromTag)
        #expect(from.parameters.count == 3)
        #expect(try message.callID() == RFC4475.longCallID)
        let vias = try message.vias()
        #expect(vias.count == 34)
        #expect(vias.prefix(33).map(\.host.text) == (1...33).reversed().map { "sip\($0).example.com" })
        #expect(vias.last?.branch == RFC4475.longBranch)
        #expect(vias.last?.received == .ipv4("192.0.2.5"))
        #expect(try message.contacts()?.addresses.first?.uri.user == RFC4475.longCaller)
        #expect(message.body.count == 150)
    }

    @Test("RFC 4475 3.1.1.8 dblreq: extra trailing octets in a UDP datagram")
    func dblreq() throws {
        let message = try receive(RFC4475.dblreq)
        #expect(message.method == .register)
        #expect(message.body.isEmpty)
        #expect(try message.callID() == "dblreq.0ha0isndaksdj99sdfafnl3lk233412")
        #expect(try message.contacts()?.addresses.first?.uri.user == "j.user")
        // Over a stream the same octets are two messages with a line break between them.
        let frames = try frameStream(RFC4475.dblreq, chunk: 64)
        let methods = frames.compactMap { frame -> SIPMethod? in
            if case .message(let message, _) = frame { return message.method }
            return nil
        }
        #expect(methods == [.register, .invite])
    }

    @Test("RFC 4475 3.1.1.9 semiuri: semicolon-separated parameters in URI user part")
    func semiuri() throws {
        let message = try receive(RFC4475.semiuri)
        let uri = try #require(message.requestURI)
        #expect(uri.user == "user;par=u@example.net")
        #expect(uri.host == .name("example.com"))
        #expect(uri.parameters.isEmpty)
        #expect(message.headers.values("Accept") == [
            "application/sdp", "application/pkcs7-mime", "multipart/mixed", "multipart/signed", "message/sip", "message/sipfrag",
        ])
    }

    @Test("RFC 4475 3.1.1.10 transports: varied and unknown transport types")
    func transports() throws {
        let message = try receive(RFC4475.transports)
        let vias = try message.vias()
        #expect(vias.map(\.transport) == ["UDP", "SCTP", "TLS", "UNKNOWN", "TCP"])
        #expect(vias.map(\.host.text) == ["t1.example.com", "t2.example.com", "t3.example.com", "t4.example.com", "t5.example.com"])
        #expect(try message.callID() == "transports.kijh4akdnaqjkwendsasfdj")
    }

    @Test("RFC 4475 3.1.1.11 mpart01: multipart MIME message")
    func mpart01() throws {
        let message = try receive(RFC4475.mpart01)
        #expect(message.method == .message)
        let via = try #require(try message.topVia())
        #expect(via.port == 5070)
        #expect(via.returnPort == .requested)
        #expect(message.body.count == 553)
        #expect(try message.contentType()?.boundary == "7a9cbec02ceef655")
        #expect(message.headers["Date"] == ["Sat, 15 Oct 2005 04:44:56 GMT"])
        #expect(message.headers.values("Identity").count == 1)
        let parts = try #require(try message.multipartBody()).parts
        #expect(parts.count == 2)
        #expect(try parts[0].contentType()?.matches(type: "text", subtype: "plain") == true)
        #expect(parts[0].body == Array("Hello".utf8))
        #expect(try parts[1].contentType()?.matches(type: "application", subtype: "octet-stream") == true)
        #expect(parts[1].body == RFC4475.mpart01BinaryPart)
        #expect(parts[1].body.contains(0))
        #expect(try message.sessionDescription() == nil)
    }

    @Test("RFC 4475 3.1.1.12 unreason: unusual reason phrase")
    func unreason() throws {
        let message = try receive(RFC4475.unreason)
        #expect(message.statusCode == 200)
        #expect(message.reasonPhrase == "= 2**3 * 5**2 но сто девяносто девять - простое")
        #expect(try message.to()?.tag == "2229")
        #expect(message.body.count == 154)
    }

    @Test("RFC 4475 3.1.1.13 noreason: empty reason phrase")
    func noreason() throws {
        let message = try receive(RFC4475.noreason)
        #expect(message.statusCode == 100)
        #expect(message.reasonPhrase == "")
        #expect(try message.contacts()?.addresses.first?.uri.host == .name("host105.example.com"))
    }

    /// Every valid message also frames over a stream (those with a Content-Length), whole
    /// or byte by byte, to the same message as the datagram parse; and writing it out and
    /// reading it back gives it again.
    @Test("RFC 4475 3.1.1: stream framing and round trip of every valid message",
          arguments: [RFC4475.wsinv, RFC4475.intmeth, RFC4475.esc01, RFC4475.escnull, RFC4475.esc02, RFC4475.lwsdisp,
                      RFC4475.longreq, RFC4475.semiuri, RFC4475.transports, RFC4475.mpart01, RFC4475.unreason, RFC4475.noreason])
    func streamAndRoundTrip(_ bytes: [UInt8]) throws {
        let datagram = try receive(bytes)
        #expect(try streamMessage(bytes) == datagram)
        let written = datagram.serialized()
        let again = try receive(written)
        #expect(again == datagram)
        #expect(again.serialized() == written)
        expectNoTrapOnPrefixes(bytes)
    }
}
