import ParleySIP
import Testing

@testable import ParleySIPIO

/// What the temporary stateless transaction user answers (docs/sip.md, "Transports").
@Suite struct SIPStatelessResponderTests {
    private func request(_ method: String, cseqMethod: String? = nil, headers: String = "", body: String = "") throws -> SIPMessage {
        let text = """
            \(method) sip:parley@example.test SIP/2.0\r
            Via: SIP/2.0/UDP 192.0.2.1:5060;branch=z9hG4bK-\(method);received=192.0.2.1;rport=5060\r
            Max-Forwards: 70\r
            To: <sip:parley@example.test>\r
            From: <sip:alice@example.test>;tag=a1\r
            Call-ID: responder-\(method)\r
            CSeq: 4 \(cseqMethod ?? method)\r
            \(headers)Content-Length: \(body.utf8.count)\r
            \r
            \(body)
            """
        let message = try SIPMessage(datagram: Array(text.utf8))
        try message.validate()
        return message
    }

    private func answer(_ request: SIPMessage) throws -> SIPMessage {
        try #require(SIPStatelessResponder.response(to: request))
    }

    @Test func optionsGets200WithWhatTheServerTakes() throws {
        let options = try request("OPTIONS")
        let response = try answer(options)
        #expect(response.statusCode == 200)
        #expect(try response.allow() == [.invite, .ack, .cancel, .bye, .options])
        #expect(response.headers["accept"] == ["application/sdp"])
        #expect(response.headers.contains("supported"))
        #expect(try response.supported().isEmpty)
        // §8.2.6: the request's Via (with received and rport), From, Call-ID and CSeq; a To tag.
        #expect(response.headers["via"] == options.headers["via"])
        #expect(try response.to()?.tag?.count == 16)
        #expect(try response.from()?.tag == "a1")
        #expect(try response.cseq() == SIPCSeq(sequence: 4, method: .options))
        // A retransmission gets the same answer, tag included.
        #expect(try answer(try request("OPTIONS")) == response)
    }

    @Test func inviteIsRefusedForbiddenWithAWarning() throws {
        let sdp = "v=0\r\no=- 1 1 IN IP4 192.0.2.1\r\ns=-\r\nc=IN IP4 192.0.2.1\r\nt=0 0\r\nm=audio 4000 RTP/AVP 0\r\n"
        let response = try answer(try request("INVITE", headers: "Content-Type: application/sdp\r\n", body: sdp))
        #expect(response.statusCode == 403)
        #expect(response.reasonPhrase == "Inbound Calls Not Accepted")
        #expect(response.headers["warning"] == [#"399 parleyd "this server takes no inbound SIP calls yet""#])
        #expect(try response.to()?.tag != nil)
    }

    @Test func ackIsNeverAnswered() throws {
        #expect(SIPStatelessResponder.response(to: try request("ACK")) == nil)
    }

    @Test func byeAndCancelFindNothingToEnd() throws {
        #expect(try answer(try request("BYE")).statusCode == 481)
        #expect(try answer(try request("CANCEL")).statusCode == 481)
    }

    @Test func methodsNotServedGet405AndUnknownOnes501() throws {
        for method in ["REGISTER", "SUBSCRIBE", "NOTIFY", "MESSAGE", "REFER", "INFO", "UPDATE", "PRACK"] {
            let response = try answer(try request(method))
            #expect(response.statusCode == 405, "\(method)")
            #expect(try response.allow() == SIPStatelessResponder.allowedMethods, "\(method)")
        }
        let response = try answer(try request("NEWMETHOD"))
        #expect(response.statusCode == 501)
        #expect(response.headers.contains("allow"))
    }

    @Test func requiredExtensionsGet420() throws {
        let response = try answer(try request("OPTIONS", headers: "Require: 100rel, timer\r\n"))
        #expect(response.statusCode == 420)
        #expect(try response.unsupported() == ["100rel", "timer"])
        // CANCEL's Require is not checked (RFC 3261 §8.2.2.3 exempts it); ACK is never answered.
        #expect(try answer(try request("CANCEL", headers: "Require: foo\r\n")).statusCode == 481)
    }

    @Test func bodiesThatAreNotSDPGet415() throws {
        let text = try answer(try request("OPTIONS", headers: "Content-Type: text/plain\r\n", body: "hello"))
        #expect(text.statusCode == 415)
        #expect(text.headers["accept"] == ["application/sdp"])
        let encoded = try answer(try request("INVITE", headers: "Content-Type: application/sdp\r\nContent-Encoding: gzip\r\n", body: "x"))
        #expect(encoded.statusCode == 415)
        #expect(encoded.headers["accept-encoding"] == ["identity"])
        // A multipart body without a boundary cannot be read: 400, as ParleySIP says.
        let broken = try answer(try request("INVITE", headers: "Content-Type: multipart/mixed\r\n", body: "x"))
        #expect(broken.statusCode == 400)
    }

    @Test func responsesHaveNoTaker() throws {
        let text = """
            SIP/2.0 200 OK\r
            Via: SIP/2.0/UDP 192.0.2.1:5060;branch=z9hG4bK1\r
            To: <sip:parley@example.test>;tag=b\r
            From: <sip:alice@example.test>;tag=a1\r
            Call-ID: r1\r
            CSeq: 1 OPTIONS\r
            Content-Length: 0\r
            \r

            """
        #expect(SIPStatelessResponder.response(to: try SIPMessage(datagram: Array(text.utf8))) == nil)
    }
}
