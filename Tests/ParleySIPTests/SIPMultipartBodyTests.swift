import Testing
@testable import ParleySIP

@Suite("Multipart bodies (RFC 2046 §5.1)")
struct SIPMultipartBodyTests {
    /// SDP beside an ISUP body, as a SIP-T gateway sends it (RFC 3204), in
    /// multipart/mixed with a preamble, transport padding and an epilogue.
    static let mixed = wire("""
    This is the preamble.
    --unique-boundary-1   \u{20}
    Content-Type: application/ISUP; version=itu-t92+
    Content-Disposition: signal; handling=optional

    \u{01}\u{02}\u{00}\u{03}
    --unique-boundary-1
    Content-Type: application/sdp

    v=0
    o=- 1 1 IN IP4 192.0.2.1

    --unique-boundary-1--
    epilogue
    """)

    @Test("Parts with their headers; preamble, padding and epilogue ignored")
    func parts() throws {
        let body = try SIPMultipartBody(parsing: Self.mixed, boundary: "unique-boundary-1")
        #expect(body.parts.count == 2)
        #expect(try body.parts[0].contentType()?.matches(type: "application", subtype: "isup") == true)
        #expect(try body.parts[0].contentType()?.parameter(named: "version")?.value == "itu-t92+")
        #expect(body.parts[0].headers["Content-Disposition"] == ["signal; handling=optional"])
        #expect(body.parts[0].body == [0x01, 0x02, 0x00, 0x03])
        #expect(body.parts[1].body == wire("v=0\no=- 1 1 IN IP4 192.0.2.1\n"))
    }

    @Test("The SDP of a multipart/mixed or /alternative message, nested too")
    func sessionDescription() throws {
        let sdp = wire("v=0\no=- 1 1 IN IP4 192.0.2.1\n")
        let inner = wire("--in\nContent-Type: text/plain\n\nhi\n--in\nContent-Type: application/sdp\n\n") + sdp + wire("\n--in--\n")
        let outer = wire("--out\nContent-Type: multipart/alternative;boundary=in\n\n") + inner + wire("\n--out--")
        var headers = SIPHeaders()
        try headers.add(name: "Via", value: "SIP/2.0/UDP h.example;branch=z9hG4bK1")
        try headers.add(name: "Content-Type", value: "multipart/mixed; boundary=\"out\"")
        let message = try SIPMessage(request: .invite, uri: SIPURI(parsing: "sip:a@b.example"), headers: headers, body: outer)
        #expect(try message.sessionDescription() == sdp)
        // Nested deeper than the limit, it is not looked for.
        #expect(try message.sessionDescription(limits: SIPLimits(maxMultipartDepth: 1)) == nil)
    }

    @Test("Malformed multipart bodies are refused, 400 when received in a request")
    func malformed() throws {
        for (body, boundary) in [("no boundary here", "b"), ("--b\r\nContent-Type: text/plain\r\n\r\nx", "b"),
                                 ("--bX\r\n\r\nx\r\n--b--", "b"), ("--b\r\nno empty line\r\n--b--", "b"), ("--b--", ""),
                                 ("--b\r\nContent-Type: text/plain\r\n\r\nx\r\n--b--", String(repeating: "b", count: 71))] {
            #expect(throws: SIPError.self, "\(body)") { try SIPMultipartBody(parsing: Array(body.utf8), boundary: boundary) }
        }
        #expect(try SIPMultipartBody(parsing: Array("--b--".utf8), boundary: "b").parts.isEmpty)
        let request = wire("""
        MESSAGE sip:a@b.example SIP/2.0
        Via: SIP/2.0/UDP h.example;branch=z9hG4bK1
        Content-Type: multipart/mixed
        Content-Length: 5

        hello
        """)
        let message = try SIPMessage(datagram: request)
        do {
            _ = try message.multipartBody()
            Issue.record("a multipart type without a boundary was read")
        } catch {
            #expect(error.kind == .malformedBody)
            #expect(error.disposition == .respond(statusCode: 400, reasonPhrase: "Bad Message Body"))
        }
    }
}
