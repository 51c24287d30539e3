import Testing
@testable import ParleySIP

/// RFC 4475 §3.2-3.4, as far as they concern the message layer: what parses and what the
/// parser hands the layers above to decide with.
@Suite("RFC 4475 §3.2-3.4 transaction, application and compatibility messages")
struct RFC4475SemanticsTests {
    /// Parsed and accepted; the transaction layer sees the branch is no RFC 3261 one.
    @Test("RFC 4475 3.2.1 badbranch: missing transaction identifier")
    func badbranch() throws {
        let message = try receive(RFC4475.badbranch)
        let via = try #require(try message.topVia())
        #expect(via.branch == "z9hG4bK")
        #expect(!via.hasRFC3261Branch)
    }

    @Test("RFC 4475 3.3.1 insuf: missing required header fields")
    func insuf() {
        let error = expectAnswer(RFC4475.insuf, .missingHeader, status: 400, reason: "Missing From")
        #expect(error?.requestHeaders.count(of: "via") == 1)
        #expect(error?.requestHeaders.count(of: "cseq") == 1)
    }

    @Test("RFC 4475 3.3.2 unkscm: Request-URI with unknown scheme")
    func unkscm() throws {
        expectAnswer(RFC4475.unkscm, .unsupportedURIScheme, status: 416, reason: "Unsupported URI Scheme")
        let uri = try #require(try SIPMessage(datagram: RFC4475.unkscm).requestURI)
        #expect(uri.scheme == .other("nobodyKnowsThisScheme"))
        #expect(uri.opaquePart == "totallyopaquecontent")
    }

    @Test("RFC 4475 3.3.3 novelsc: Request-URI with known but atypical scheme")
    func novelsc() {
        expectAnswer(RFC4475.novelsc, .unsupportedURIScheme, status: 416)
    }

    /// Unknown schemes in From, To and Contact are well-formed; what a registrar does with
    /// them is its business.
    @Test("RFC 4475 3.3.4 unksm2: unknown URI schemes in header fields")
    func unksm2() throws {
        let message = try receive(RFC4475.unksm2)
        #expect(try message.to()?.uri.scheme == .other("isbn"))
        #expect(try message.from()?.uri.description == "http://www.example.com")
        #expect(try message.from()?.tag == "3234233")
        #expect(try message.contacts()?.addresses.first?.uri.description == "name:John_Smith")
    }

    @Test("RFC 4475 3.3.5 bext01: Proxy-Require and Require")
    func bext01() throws {
        let message = try receive(RFC4475.bext01)
        #expect(try message.require() == ["nothingSupportsThis", "nothingSupportsThisEither"])
        #expect(try message.proxyRequire() == ["noProxiesSupportThis", "norDoAnyProxiesSupportThis"])
        #expect(try message.unsupportedRequirements(supported: ["timer", "NOTHINGSUPPORTSTHIS"]) == ["nothingSupportsThisEither"])
    }

    @Test("RFC 4475 3.3.6 invut: unknown Content-Type")
    func invut() throws {
        let message = try receive(RFC4475.invut)
        let type = try #require(try message.contentType())
        #expect(type.matches(type: "application", subtype: "unknownformat"))
        #expect(message.body.count == 40)
        #expect(try message.sessionDescription() == nil)
    }

    /// Authorization is kept raw for the digest layer, whatever its scheme.
    @Test("RFC 4475 3.3.7 regaut01: unknown authorization scheme")
    func regaut01() throws {
        let message = try receive(RFC4475.regaut01)
        #expect(message.headers["Authorization"] == ["NoOneKnowsThisScheme opaque-data=here"])
        #expect(message.headers.values("Authorization") == ["NoOneKnowsThisScheme opaque-data=here"])
    }

    @Test("RFC 4475 3.3.8 multi01: multiple values in single value required fields")
    func multi01() {
        expectAnswer(RFC4475.multi01, .duplicateHeader, status: 400, reason: "Duplicate From")
    }

    @Test("RFC 4475 3.3.9 mcl01: multiple Content-Length values")
    func mcl01() {
        expectAnswer(RFC4475.mcl01, .invalidContentLength, status: 400)
        var framer = SIPStreamFramer()
        #expect(throws: SIPError.self) { try framer.next(in: RFC4475.mcl01) }
    }

    /// Well-formed; the transport must not send to the broadcast address the second Via
    /// names, which it can see in the parsed Via.
    @Test("RFC 4475 3.3.10 bcast: 200 OK response with broadcast Via header field value")
    func bcast() throws {
        let message = try receive(RFC4475.bcast)
        let vias = try message.vias()
        #expect(vias.count == 2)
        #expect(vias[1].host == .ipv4("255.255.255.255"))
        #expect(vias[1].host.addressBytes == [255, 255, 255, 255])
    }

    @Test("RFC 4475 3.3.11 zeromf: Max-Forwards of zero")
    func zeromf() throws {
        let message = try receive(RFC4475.zeromf)
        #expect(try message.maxForwards() == 0)
    }

    @Test("RFC 4475 3.3.12 cparam01: REGISTER with a Contact header parameter")
    func cparam01() throws {
        let contact = try #require(try receive(RFC4475.cparam01).contacts()?.addresses.first)
        #expect(contact.uri.description == "sip:+19725552222@gw1.example.net")
        #expect(contact.uri.parameters.isEmpty)
        #expect(contact.parameter(named: "unknownparam") != nil)
    }

    @Test("RFC 4475 3.3.13 cparam02: REGISTER with a url-parameter")
    func cparam02() throws {
        let contact = try #require(try receive(RFC4475.cparam02).contacts()?.addresses.first)
        #expect(contact.uri.parameter(named: "unknownparam") != nil)
        #expect(contact.parameters.isEmpty)
    }

    @Test("RFC 4475 3.3.14 regescrt: REGISTER with a URL escaped header")
    func regescrt() throws {
        let contact = try #require(try receive(RFC4475.regescrt).contacts()?.addresses.first)
        #expect(contact.uri.headers.map(\.name) == ["Route"])
        #expect(contact.uri.headers.first?.value == "<sip:sip.example.com>")
    }

    @Test("RFC 4475 3.3.15 sdp01: unacceptable Accept offering")
    func sdp01() throws {
        let message = try receive(RFC4475.sdp01)
        #expect(message.headers.values("Accept") == ["text/nobodyKnowsThis"])
        #expect(try message.sessionDescription()?.count == 150)
    }

    /// RFC 2543 syntax is accepted: no branch, no From tag, no Max-Forwards, and over UDP
    /// no Content-Length (the body runs to the end of the datagram).
    @Test("RFC 4475 3.4.1 inv2543: INVITE with RFC 2543 syntax")
    func inv2543() throws {
        let message = try receive(RFC4475.inv2543)
        #expect(try message.topVia()?.branch == nil)
        #expect(try message.from()?.tag == nil)
        #expect(try message.maxForwards() == nil)
        #expect(try message.contentLength() == nil)
        #expect(message.body == wire("v=0\no=mhandley 29739 7272939 IN IP4 192.0.2.5\ns=-\nc=IN IP4 192.0.2.5\nt=0 0\nm=audio 49217 RTP/AVP 0\n"))
        #expect(try message.recordRoutes().first?.uri.maddr == "ss1.example.com")
        #expect(try message.to()?.parameters.map(\.name) == ["user"])
        // Over a stream, though, a message must say how long it is.
        var framer = SIPStreamFramer()
        do {
            _ = try framer.next(in: RFC4475.inv2543)
            Issue.record("framed without a Content-Length")
        } catch {
            #expect(error.kind == .missingContentLength)
            #expect(error.closesConnection)
            #expect(error.disposition == .respond(statusCode: 400, reasonPhrase: "Missing Content-Length"))
        }
    }

    @Test("RFC 4475 3.2-3.4: none traps when cut short",
          arguments: [RFC4475.badbranch, RFC4475.insuf, RFC4475.unkscm, RFC4475.novelsc, RFC4475.unksm2, RFC4475.bext01,
                      RFC4475.invut, RFC4475.regaut01, RFC4475.multi01, RFC4475.mcl01, RFC4475.bcast, RFC4475.zeromf,
                      RFC4475.cparam01, RFC4475.cparam02, RFC4475.regescrt, RFC4475.sdp01, RFC4475.inv2543])
    func cutShort(_ bytes: [UInt8]) {
        expectNoTrapOnPrefixes(bytes)
    }
}
