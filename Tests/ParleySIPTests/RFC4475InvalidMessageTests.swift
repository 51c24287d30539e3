import Testing
@testable import ParleySIP

/// RFC 4475 §3.1.2: every invalid torture message is refused the way the RFC advises —
/// a request answered with 400 (or 505, 501) and a reason, a response dropped — and never
/// crashes the parser, however it arrives.
@Suite("RFC 4475 §3.1.2 invalid messages")
struct RFC4475InvalidMessageTests {
    @Test("RFC 4475 3.1.2.1 badinv01: extraneous header field separators")
    func badinv01() {
        let error = expectAnswer(RFC4475.badinv01, .malformedHeader, status: 400, reason: "Bad Via")
        #expect(error?.headerName == "via")
    }

    @Test("RFC 4475 3.1.2.2 clerr: Content-Length larger than the message")
    func clerr() throws {
        expectAnswer(RFC4475.clerr, .invalidContentLength, status: 400, reason: "Bad Content-Length")
        // Over a stream the rest of the body may still come: wait for it.
        var framer = SIPStreamFramer()
        #expect(try framer.next(in: RFC4475.clerr) == .needMoreBytes)
    }

    @Test("RFC 4475 3.1.2.3 ncl: negative Content-Length")
    func ncl() {
        expectAnswer(RFC4475.ncl, .invalidContentLength, status: 400, reason: "Bad Content-Length")
        // Over a stream the framing is lost: answer, then close.
        var framer = SIPStreamFramer()
        #expect(throws: SIPError.self) { try framer.next(in: RFC4475.ncl) }
        do {
            _ = try framer.next(in: RFC4475.ncl)
        } catch {
            #expect(error.closesConnection)
            #expect(error.disposition == .respond(statusCode: 400, reasonPhrase: "Bad Content-Length"))
        }
    }

    @Test("RFC 4475 3.1.2.4 scalar02: request scalar fields with overlarge values")
    func scalar02() throws {
        expectAnswer(RFC4475.scalar02, .malformedHeader, status: 400, reason: "Bad CSeq")
        // The other overlarge values are refused where they are read.
        let message = try SIPMessage(datagram: RFC4475.scalar02)
        #expect(throws: SIPError.self) { try message.maxForwards() }
        #expect(throws: SIPError.self) { try message.expires() }
        let contact = try #require(try message.contacts()?.addresses.first)
        #expect(throws: SIPError.self) { try contact.expires() }
    }

    @Test("RFC 4475 3.1.2.5 scalarlg: response scalar fields with overlarge values")
    func scalarlg() {
        expectDrop(RFC4475.scalarlg, .malformedHeader)
    }

    @Test("RFC 4475 3.1.2.6 quotbal: unterminated quoted string in display name")
    func quotbal() {
        expectAnswer(RFC4475.quotbal, .malformedHeader, status: 400, reason: "Bad To")
    }

    @Test("RFC 4475 3.1.2.7 ltgtruri: <> enclosing Request-URI")
    func ltgtruri() {
        expectAnswer(RFC4475.ltgtruri, .malformedURI, status: 400, reason: "Bad Request-URI")
    }

    @Test("RFC 4475 3.1.2.8 lwsruri: malformed SIP Request-URI (embedded LWS)")
    func lwsruri() {
        expectAnswer(RFC4475.lwsruri, .malformedStartLine, status: 400)
    }

    @Test("RFC 4475 3.1.2.9 lwsstart: multiple SP separating Request-Line elements")
    func lwsstart() {
        expectAnswer(RFC4475.lwsstart, .malformedStartLine, status: 400)
    }

    @Test("RFC 4475 3.1.2.10 trws: SP characters at end of Request-Line")
    func trws() {
        expectAnswer(RFC4475.trws, .malformedStartLine, status: 400)
    }

    @Test("RFC 4475 3.1.2.11 escruri: escaped headers in SIP Request-URI")
    func escruri() {
        expectAnswer(RFC4475.escruri, .malformedURI, status: 400, reason: "Bad Request-URI")
    }

    /// The RFC lets an element that does not use Date ignore its bad time zone; nothing
    /// here reads Date, so the message is accepted and the field kept as written.
    @Test("RFC 4475 3.1.2.12 baddate: invalid time zone in Date header field")
    func baddate() throws {
        let message = try receive(RFC4475.baddate)
        #expect(message.headers["Date"] == ["Fri, 01 Jan 2010 16:00:00 EST"])
        #expect(message.headers.values("Date").count == 1)
    }

    @Test("RFC 4475 3.1.2.13 regbadct: failure to enclose name-addr URI in <>")
    func regbadct() {
        expectAnswer(RFC4475.regbadct, .malformedHeader, status: 400, reason: "Bad Contact")
    }

    @Test("RFC 4475 3.1.2.14 badaspec: spaces within addr-spec")
    func badaspec() {
        expectAnswer(RFC4475.badaspec, .malformedHeader, status: 400, reason: "Bad To")
    }

    @Test("RFC 4475 3.1.2.15 baddn: non-token characters in display name")
    func baddn() {
        expectAnswer(RFC4475.baddn, .malformedHeader, status: 400, reason: "Bad From")
    }

    @Test("RFC 4475 3.1.2.16 badvers: unknown protocol version")
    func badvers() throws {
        expectAnswer(RFC4475.badvers, .unsupportedVersion, status: 505, reason: "Version Not Supported")
        #expect(try SIPMessage(datagram: RFC4475.badvers).version == SIPVersion(major: 7, minor: 0))
    }

    @Test("RFC 4475 3.1.2.17 mismatch01: start line and CSeq method mismatch")
    func mismatch01() {
        expectAnswer(RFC4475.mismatch01, .methodMismatch, status: 400, reason: "CSeq Method Mismatch")
    }

    /// The RFC prefers 501 to 400 for an unknown method whose CSeq disagrees.
    @Test("RFC 4475 3.1.2.18 mismatch02: unknown method with CSeq method mismatch")
    func mismatch02() {
        expectAnswer(RFC4475.mismatch02, .methodMismatch, status: 501, reason: "Not Implemented")
    }

    @Test("RFC 4475 3.1.2.19 bigcode: overlarge response code")
    func bigcode() {
        expectDrop(RFC4475.bigcode, .malformedStartLine)
    }

    /// Over a stream each invalid message that carries a good Content-Length is framed and
    /// refused alike (the stream goes on), the others close the connection; none traps,
    /// whole, byte by byte or cut short.
    @Test("RFC 4475 3.1.2: every invalid message over a stream, and cut short",
          arguments: [RFC4475.badinv01, RFC4475.clerr, RFC4475.ncl, RFC4475.scalar02, RFC4475.scalarlg, RFC4475.quotbal,
                      RFC4475.ltgtruri, RFC4475.lwsruri, RFC4475.lwsstart, RFC4475.trws, RFC4475.escruri, RFC4475.baddate,
                      RFC4475.regbadct, RFC4475.badaspec, RFC4475.baddn, RFC4475.badvers, RFC4475.mismatch01,
                      RFC4475.mismatch02, RFC4475.bigcode])
    func overStream(_ bytes: [UInt8]) {
        for chunk in [bytes.count, 1, 13] {
            do {
                for frame in try frameStream(bytes, chunk: chunk) {
                    switch frame {
                    case .message(let message, _): _ = try? message.validate()
                    case .invalidMessage(let error, _): #expect(!error.closesConnection)
                    case .ping, .pong, .needMoreBytes: break
                    }
                }
            } catch {
                #expect(error.closesConnection)
            }
        }
        expectNoTrapOnPrefixes(bytes)
    }
}
