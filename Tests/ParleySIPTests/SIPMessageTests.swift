import Testing
@testable import ParleySIP

/// An INVITE as RFC 3261 §24.2 (F1) sends it, with an SDP body.
let exampleInvite = wire("""
INVITE sip:bob@biloxi.com SIP/2.0
Via: SIP/2.0/UDP pc33.atlanta.com;branch=z9hG4bKnashds8;rport
Max-Forwards: 70
To: Bob <sip:bob@biloxi.com>
From: Alice <sip:alice@atlanta.com>;tag=1928301774
Call-ID: a84b4c76e66710
CSeq: 314159 INVITE
Contact: <sip:alice@pc33.atlanta.com>
Timestamp: 54
Allow: INVITE, ACK, CANCEL, OPTIONS, BYE
Supported: timer, 100rel
P-Asserted-Identity: "Alice" <sip:alice@atlanta.com>, <tel:+15551001>
Session-Expires: 1800;refresher=uac
Min-SE: 90
Expires: 120
WWW-Authenticate: Digest realm="atlanta.com", nonce="84a4cc6f3082121f32b42a2187831a9e", qop="auth"
Content-Type: application/sdp
Content-Length: 14

v=0
o=x y z

""")

@Suite("SIP messages: headers, typed reads, builders, writing")
struct SIPMessageTests {
    @Test("RFC 3261 §7.3: headers keep order and names, look up any case and compact form")
    func headerLookup() throws {
        let message = try receive(exampleInvite)
        #expect(message.headers.fields.first?.name == "Via")
        #expect(message.headers["v"] == message.headers["VIA"])
        #expect(message.headers.first("call-id") == "a84b4c76e66710")
        #expect(message.headers.first("i") == "a84b4c76e66710")
        #expect(message.headers.values("Allow") == ["INVITE", "ACK", "CANCEL", "OPTIONS", "BYE"])
        // Authentication headers keep their commas (the digest layer reads them).
        #expect(message.headers.values("WWW-Authenticate") == [#"Digest realm="atlanta.com", nonce="84a4cc6f3082121f32b42a2187831a9e", qop="auth""#])
        #expect(message.headers.count(of: "f") == 1)
        #expect(!message.headers.contains("Route"))
        #expect(message.body == wire("v=0\no=x y z\n"))
    }

    @Test("Typed reads of the common headers")
    func typedReads() throws {
        let message = try receive(exampleInvite)
        let via = try #require(try message.topVia())
        #expect(via.transport == "UDP")
        #expect(via.host == .name("pc33.atlanta.com"))
        #expect(via.branch == "z9hG4bKnashds8")
        #expect(via.hasRFC3261Branch)
        #expect(via.returnPort == .requested)
        #expect(try message.to()?.displayName == "Bob")
        #expect(try message.to()?.tag == nil)
        #expect(try message.from()?.tag == "1928301774")
        #expect(try message.cseq()?.sequence == 314159)
        #expect(try message.allow() == [.invite, .ack, .cancel, .options, .bye])
        #expect(try message.supported() == ["timer", "100rel"])
        #expect(try message.require() == [])
        let identities = try message.assertedIdentities()
        #expect(identities.map(\.uri.scheme) == [.sip, .tel])
        #expect(identities.first?.displayName == "Alice")
        let sessionExpires = try #require(try message.sessionExpires())
        #expect(sessionExpires.interval == 1800)
        #expect(sessionExpires.refresher == .uac)
        #expect(try message.minSE() == 90)
        #expect(try message.expires() == 120)
        #expect(try message.contentType() == .sdp)
        #expect(try message.sessionDescription() == message.body)
    }

    @Test("A field that may appear once, twice, is refused where it is read")
    func duplicates() throws {
        var headers = SIPHeaders()
        try headers.add(name: "Expires", value: "10")
        try headers.add(name: "Expires", value: "20")
        let message = try SIPMessage(request: .options, uri: SIPURI(parsing: "sip:a@b"), headers: headers)
        #expect(throws: SIPError.self) { try message.expires() }
    }

    @Test("Writing keeps every field in order, unfolded, and writes the body's length")
    func writing() throws {
        let text = wire("""
        OPTIONS sip:a@example.com SIP/2.0
        Via: SIP/2.0/UDP h.example.com;branch=z9hG4bK1
        l: 5
        Subject: folded
         over two lines
        X-Empty:
        Max-Forwards: 70
        To: <sip:a@example.com>
        From: <sip:b@example.com>;tag=1
        Call-ID: c1
        CSeq: 1 OPTIONS

        abc
        """)
        let message = try SIPMessage(datagram: text + wire("\n"))
        #expect(message.body == Array("abc\r\n".utf8))
        #expect(message.headers["Subject"] == ["folded over two lines"])
        let written = String(decoding: message.serialized(), as: UTF8.self)
        #expect(written == "OPTIONS sip:a@example.com SIP/2.0\r\nVia: SIP/2.0/UDP h.example.com;branch=z9hG4bK1\r\nl: 5\r\n"
            + "Subject: folded over two lines\r\nX-Empty: \r\nMax-Forwards: 70\r\nTo: <sip:a@example.com>\r\n"
            + "From: <sip:b@example.com>;tag=1\r\nCall-ID: c1\r\nCSeq: 1 OPTIONS\r\n\r\nabc\r\n")
        var changed = message
        changed.body = Array("abc".utf8)
        #expect(String(decoding: changed.serialized(), as: UTF8.self).contains("\r\nl: 3\r\n"))
        changed.body = []
        changed.headers.remove(name: "content-length")
        #expect(String(decoding: changed.serialized(), as: UTF8.self).hasSuffix("CSeq: 1 OPTIONS\r\nContent-Length: 0\r\n\r\n"))
    }

    @Test("RFC 3261 §8.2.6: a response copies Via, From, To, Call-ID, CSeq and adds a To tag")
    func makeResponse() throws {
        let request = try receive(exampleInvite)
        let trying = try request.makeResponse(statusCode: 100, toTag: "ignored")
        #expect(trying.reasonPhrase == "Trying")
        #expect(trying.headers["Timestamp"] == ["54"])
        #expect(try trying.to()?.tag == "ignored")
        let ringing = try request.makeResponse(statusCode: 180, toTag: "a6c85cf")
        #expect(ringing.headers.fields.map(\.name) == ["Via", "To", "From", "Call-ID", "CSeq"])
        #expect(ringing.headers["Via"] == request.headers["Via"])
        #expect(ringing.headers["To"] == ["Bob <sip:bob@biloxi.com>;tag=a6c85cf"])
        #expect(try ringing.to()?.tag == "a6c85cf")
        let written = ringing.serialized()
        let again = try receive(written)
        #expect(again.statusCode == 180)
        #expect(again.reasonPhrase == "Ringing")
        #expect(String(decoding: written, as: UTF8.self).hasPrefix("SIP/2.0 180 Ringing\r\n"))
        #expect(String(decoding: written, as: UTF8.self).hasSuffix("Content-Length: 0\r\n\r\n"))
        // A To that has a tag keeps it.
        var inDialogRequest = request
        try inDialogRequest.headers.set(name: "To", value: "Bob <sip:bob@biloxi.com>;tag=a6c85cf")
        let inDialog = try inDialogRequest.makeResponse(statusCode: 200, toTag: "other")
        #expect(try inDialog.to()?.tag == "a6c85cf")
        #expect(throws: SIPError.self) { try again.makeResponse(statusCode: 200) }
        #expect(throws: SIPError.self) { try request.makeResponse(statusCode: 200, toTag: "bad tag") }
        #expect(throws: SIPError.self) { try request.makeResponse(statusCode: 700) }
    }

    @Test("RFC 3261 §8.1.1: a request built from typed values reads back")
    func buildRequest() throws {
        let via = try SIPVia(transport: "TCP", host: .ipv6("2001:db8::5"), port: 5060, branch: "z9hG4bK776asdhds")
        let from = try SIPNameAddress(displayName: #"Alice "the" caller"#, uri: SIPURI(user: "alice", host: .name("atlanta.com")),
                                      parameters: [SIPParameter(name: "tag", value: "1928301774")])
        let to = try SIPNameAddress(displayName: "Bob", uri: SIPURI(user: "bob", host: .name("biloxi.com")))
        var request = try SIPMessage.request(method: .invite, uri: SIPURI(user: "bob", host: .name("biloxi.com")), via: via,
                                             from: from, to: to, callID: "a84b4c76e66710@pc33.atlanta.com", cseq: 314159,
                                             contact: SIPNameAddress(uri: SIPURI(user: "alice", host: .ipv4("192.0.2.4"))),
                                             contentType: .sdp, body: Array("v=0\r\n".utf8))
        try request.headers.add(name: "Supported", value: "timer")
        let written = request.serialized()
        #expect(String(decoding: written, as: UTF8.self).hasPrefix("INVITE sip:bob@biloxi.com SIP/2.0\r\nVia: SIP/2.0/TCP [2001:db8::5]:5060;branch=z9hG4bK776asdhds\r\nMax-Forwards: 70\r\n"))
        let again = try receive(written)
        #expect(again == request.withContentLength())
        #expect(try again.from()?.displayName == #"Alice "the" caller"#)
        #expect(try again.cseq() == SIPCSeq(sequence: 314159, method: .invite))
        #expect(try again.topVia()?.host == .ipv6("2001:db8::5"))
        #expect(try again.supported() == ["timer"])
        #expect(throws: SIPError.self) {
            try SIPMessage.request(method: .invite, uri: SIPURI(host: .name("b.com")), via: via, from: from, to: to, callID: "a b", cseq: 1)
        }
        #expect(throws: SIPError.self) { try SIPMessage(request: .extension("BAD METHOD"), uri: SIPURI(host: .name("b.com"))) }
        #expect(throws: SIPError.self) { try SIPNameAddress(displayName: "line\r\nbreak", uri: SIPURI(host: .name("b.com"))) }
    }

    @Test("Header values that could inject a line are refused")
    func headerInjection() {
        var headers = SIPHeaders()
        #expect(throws: SIPError.self) { try headers.add(name: "X-A", value: "ok\r\nVia: evil") }
        #expect(throws: SIPError.self) { try headers.add(name: "X A", value: "ok") }
        #expect(throws: SIPError.self) { try headers.add(name: "", value: "ok") }
        #expect(throws: SIPError.self) { try SIPMessage(response: 200, reasonPhrase: "OK\r\nX: y") }
        #expect(headers.count == 0)
    }

    @Test("A proxy's edits: a Via put first, the first value of a list removed")
    func proxyEdits() throws {
        var message = try receive(RFC4475.wsinv)
        try message.headers.insert(name: "Via", value: "SIP/2.0/UDP proxy.example.com;branch=z9hG4bKp1", at: 0)
        #expect(try message.vias().map(\.host.text) == ["proxy.example.com", "192.0.2.2", "spindle.example.com", "192.168.255.111"])
        message.headers.removeFirstValue(name: "via")
        message.headers.removeFirstValue(name: "via")
        #expect(try message.vias().map(\.host.text) == ["spindle.example.com", "192.168.255.111"])
        message.headers.removeFirstValue(name: "v")
        #expect(try message.vias().map(\.host.text) == ["192.168.255.111"])
        try message.setRequestURI(SIPURI(parsing: "sip:other@example.org"))
        #expect(message.requestURI?.user == "other")
    }

    @Test("Validation: a response with a bad header is dropped, a request without Via too")
    func dropRules() throws {
        expectDrop(wire("""
        SIP/2.0 200 OK
        Via: SIP/2.0/UDP a.example.com;branch=z9hG4bK1
        From: <sip:a@example.com>;tag=1
        To: <sip:b@example.com>;tag=2
        Call-ID: x
        CSeq: one INVITE
        Content-Length: 0


        """), .malformedHeader)
        expectDrop(wire("""
        OPTIONS sip:b@example.com SIP/2.0
        From: <sip:a@example.com>;tag=1
        To: <sip:b@example.com>
        Call-ID: x
        CSeq: 1 OPTIONS
        Content-Length: 0


        """), .missingHeader)
        // A request whose Via has no usable sent-by cannot be answered either.
        expectDrop(wire("""
        OPTIONS sip:b@example.com SIP/2.0
        Via: SIP/2.0/UDP
        From: <sip:a@example.com>;tag=1
        To: <sip:b@example.com>
        Call-ID: x
        CSeq: 1 OPTIONS
        Content-Length: 0


        """), .malformedHeader)
        expectDrop([], .emptyMessage)
        expectDrop(wire("\n\n"), .emptyMessage)
    }

    @Test("Malformed lines are answered 400 with the fields that could be read")
    func malformedLines() {
        let error = expectAnswer(wire("""
        OPTIONS sip:b@example.com SIP/2.0
        Via: SIP/2.0/UDP a.example.com;branch=z9hG4bK1
        this line has no colon
        From: <sip:a@example.com>;tag=1
        To: <sip:b@example.com>
        Call-ID: x
        CSeq: 1 OPTIONS
        Content-Length: 0


        """), .malformedHeaderLine, status: 400)
        #expect(error?.requestHeaders.count == 5)
        expectAnswer(wire("OPTIONS sip:b@example.com SIP/2.0\nVia: SIP/2.0/UDP a.example.com\nX: a\u{0A}b\nContent-Length: 0\n\n")
            .replacing(from: "a\r\nb", to: "a\nb"), .invalidText, status: 400)
        expectAnswer(wire("OPTIONS sip:b@example.com SIP/2.0\nVia: SIP/2.0/UDP a.example.com\nX: \u{FF}\n\n").replacing(from: Array("\u{FF}".utf8), to: [0xff]),
                     .invalidText, status: 400)
        expectAnswer(wire("OPTIONS sip:b@example.com SIP/2.0\nVia: SIP/2.0/UDP a.example.com\nX: a\n"), .malformedHeaderLine, status: 400)
        expectAnswer(wire("OPTIONS sip:b@example.com HTTP/1.1\nVia: SIP/2.0/UDP a.example.com\n\n"), .malformedStartLine, status: 400)
        expectAnswer(wire("OPTIONS sip:b@example.com SIP/2.0\n folded first\nVia: SIP/2.0/UDP a.example.com\n\n"), .malformedHeaderLine, status: 400)
    }

    @Test("RFC 3261 §20.10: Contact * stands alone")
    func contactWildcard() throws {
        let text = "REGISTER sip:example.com SIP/2.0\nVia: SIP/2.0/UDP a.example.com;branch=z9hG4bK1\nFrom: <sip:a@example.com>;tag=1\nTo: <sip:a@example.com>\nCall-ID: r\nCSeq: 2 REGISTER\nExpires: 0\n"
        #expect(try receive(wire(text + "Contact: *\nContent-Length: 0\n\n")).contacts() == .wildcard)
        expectAnswer(wire(text + "Contact: *, <sip:a@h.example.com>\nContent-Length: 0\n\n"), .malformedHeader, status: 400, reason: "Bad Contact")
    }
}

extension SIPMessage {
    /// The message as it reads back after writing: with its Content-Length field.
    func withContentLength() -> SIPMessage {
        var copy = self
        if !copy.headers.contains("content-length") { try? copy.headers.add(name: "Content-Length", value: String(body.count)) }
        return copy
    }
}

extension Array where Element == UInt8 {
    /// The bytes with the first run equal to `from` replaced by `to`.
    func replacing(from: [UInt8], to: [UInt8]) -> [UInt8] {
        guard !from.isEmpty, count >= from.count else { return self }
        for index in 0...(count - from.count) where self[index..<(index + from.count)].elementsEqual(from) {
            return Array(self[..<index]) + to + Array(self[(index + from.count)...])
        }
        return self
    }

    func replacing(from: String, to: String) -> [UInt8] { replacing(from: Array(from.utf8), to: Array(to.utf8)) }
}
