import Testing
@testable import ParleySIP

@Suite("Framing SIP over a stream (RFC 3261 §18.3, RFC 5626 §4.4.1)")
struct SIPStreamFramerTests {
    @Test("Messages back to back, split anywhere, frame the same")
    func pipelined() throws {
        let stream = RFC4475.esc01 + RFC4475.intmeth + RFC4475.mpart01 + RFC4475.unreason
        let expected = try [RFC4475.esc01, RFC4475.intmeth, RFC4475.mpart01, RFC4475.unreason].map { bytes throws(SIPError) in
            try SIPMessage(datagram: bytes)
        }
        for chunk in [1, 2, 3, 17, 500, stream.count] {
            let frames = try frameStream(stream, chunk: chunk)
            let messages = frames.compactMap { frame -> SIPMessage? in
                if case .message(let message, _) = frame { return message }
                return nil
            }
            #expect(messages == expected, "chunk \(chunk)")
            #expect(frames.count == 4)
        }
    }

    @Test("RFC 5626 §4.4.1: CRLF CRLF is a ping, a lone CRLF a pong, before and between messages")
    func keepalives() throws {
        var framer = SIPStreamFramer()
        #expect(try framer.next(in: wire("\n\n")) == .ping(consumed: 4))
        #expect(try framer.next(in: wire("\n")) == .pong(consumed: 2))
        #expect(try framer.next(in: [0x0d]) == .needMoreBytes)
        #expect(try framer.next(in: [0x0d, 0x0a, 0x0d]) == .needMoreBytes)
        var fresh = SIPStreamFramer()
        #expect(try fresh.next(in: wire("\nINVITE")) == .pong(consumed: 2))
        let stream = wire("\n\n\n") + RFC4475.escnull + wire("\n\n")
        let frames = try frameStream(stream, chunk: stream.count)
        #expect(frames.count == 4)
        if case .ping = frames[0] {} else { Issue.record("expected a ping first, got \(frames[0])") }
        if case .pong = frames[1] {} else { Issue.record("expected a pong second, got \(frames[1])") }
        if case .message = frames[2] {} else { Issue.record("expected the message third, got \(frames[2])") }
        if case .ping = frames[3] {} else { Issue.record("expected a ping last, got \(frames[3])") }
        // A ping that arrives in two reads is still answered once.
        var split = SIPStreamFramer()
        #expect(try split.next(in: wire("\n")) == .pong(consumed: 2))
        #expect(try split.next(in: wire("\n")) == .ping(consumed: 2))
        #expect(try split.next(in: wire("\n")) == .pong(consumed: 2))
        let byteByByte = try frameStream(stream, chunk: 1)
        #expect(byteByByte.filter { if case .ping = $0 { true } else { false } }.count == 2)
        #expect(byteByByte.filter { if case .message = $0 { true } else { false } }.count == 1)
    }

    @Test("A well-framed bad message is refused and the stream goes on")
    func invalidThenValid() throws {
        let frames = try frameStream(RFC4475.lwsstart + RFC4475.esc02, chunk: 9)
        #expect(frames.count == 2)
        guard case .invalidMessage(let error, let consumed) = frames[0] else {
            Issue.record("expected an invalid message, got \(frames[0])")
            return
        }
        #expect(consumed == RFC4475.lwsstart.count)
        #expect(error.kind == .malformedStartLine)
        #expect(!error.closesConnection)
        #expect(error.disposition == .respond(statusCode: 400, reasonPhrase: "Malformed Request-Line"))
        guard case .message(let message, _) = frames[1] else {
            Issue.record("expected a message, got \(frames[1])")
            return
        }
        #expect(message.method == .extension("RE%47IST%45R"))
    }

    @Test("RFC 3261 §18.3: a message without Content-Length ends the stream")
    func missingLength() {
        var framer = SIPStreamFramer()
        let bytes = wire("OPTIONS sip:a@b.example SIP/2.0\nVia: SIP/2.0/TCP h.example;branch=z9hG4bK1\n\n")
        do {
            _ = try framer.next(in: bytes)
            Issue.record("framed")
        } catch {
            #expect(error.kind == .missingContentLength)
            #expect(error.closesConnection)
            #expect(error.disposition == .respond(statusCode: 400, reasonPhrase: "Missing Content-Length"))
        }
    }

    @Test("No end of the head within the size limit ends the stream without an answer")
    func headTooLong() throws {
        var framer = SIPStreamFramer(limits: SIPLimits(maxMessageBytes: 1024))
        var bytes = wire("OPTIONS sip:a@b.example SIP/2.0\nVia: SIP/2.0/TCP h.example;branch=z9hG4bK1\n")
        #expect(try framer.next(in: bytes) == .needMoreBytes)
        while bytes.count < 1024 { bytes += wire("X-Padding: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n") }
        do {
            _ = try framer.next(in: bytes)
            Issue.record("still waiting past the limit")
        } catch {
            #expect(error.kind == .messageTooLarge)
            #expect(error.closesConnection)
            #expect(error.disposition == .drop)
        }
    }

    @Test("A body past the size limit is answered 513, then the stream ends")
    func bodyTooLong() {
        var framer = SIPStreamFramer(limits: SIPLimits(maxMessageBytes: 1024))
        let bytes = wire("OPTIONS sip:a@b.example SIP/2.0\nVia: SIP/2.0/TCP h.example;branch=z9hG4bK1\nCall-ID: x\nContent-Length: 5000\n\n")
        do {
            _ = try framer.next(in: bytes)
            Issue.record("accepted")
        } catch {
            #expect(error.kind == .messageTooLarge)
            #expect(error.closesConnection)
            #expect(error.disposition == .respond(statusCode: 513, reasonPhrase: "Message Too Large"))
            #expect((try? error.makeResponse())??.headers["Call-ID"] == ["x"])
        }
    }

    @Test("Searching for the end of the head never starts over (a byte at a time stays linear)")
    func incrementalSearch() throws {
        var framer = SIPStreamFramer()
        var buffer: [UInt8] = []
        let message = RFC4475.longreq
        for byte in message.dropLast() {
            buffer.append(byte)
            #expect(try framer.next(in: buffer) == .needMoreBytes)
        }
        buffer.append(message.last ?? 0)
        guard case .message(_, let consumed) = try framer.next(in: buffer) else {
            Issue.record("not framed")
            return
        }
        #expect(consumed == message.count)
    }
}
