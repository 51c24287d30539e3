import Testing
@testable import ParleySIP

/// Untrusted input stops at the limits: such a message is dropped, never read further.
@Suite("SIP limits for untrusted input")
struct SIPLimitsTests {
    static let start = "OPTIONS sip:a@b.example SIP/2.0\nVia: SIP/2.0/UDP h.example;branch=z9hG4bK1\n"
    static let end = "From: <sip:a@b.example>;tag=1\nTo: <sip:a@b.example>\nCall-ID: c\nCSeq: 1 OPTIONS\nContent-Length: 0\n\n"

    @Test("A datagram past maxMessageBytes is dropped unread")
    func messageSize() {
        let limits = SIPLimits(maxMessageBytes: 512)
        let padding = String(repeating: "X-Pad: 0123456789\n", count: 40)
        let bytes = wire(Self.start + padding + Self.end)
        #expect(bytes.count > 512)
        do {
            _ = try SIPMessage(datagram: bytes, limits: limits)
            Issue.record("accepted")
        } catch {
            #expect(error.kind == .messageTooLarge)
            #expect(error.disposition == .drop)
        }
        #expect(throws: Never.self) { try SIPMessage(datagram: bytes) }
    }

    @Test("More header fields than maxHeaderFields are dropped")
    func headerCount() {
        let limits = SIPLimits(maxHeaderFields: 10)
        let bytes = wire(Self.start + String(repeating: "X-A: 1\n", count: 10) + Self.end)
        #expect(expectDropped(bytes, limits: limits) == .limitExceeded)
        #expect(throws: Never.self) { try SIPMessage(datagram: bytes) }
    }

    @Test("A line longer than maxLineBytes is dropped")
    func lineLength() {
        let limits = SIPLimits(maxLineBytes: 100)
        let bytes = wire(Self.start + "X-Long: " + String(repeating: "a", count: 100) + "\n" + Self.end)
        #expect(expectDropped(bytes, limits: limits) == .limitExceeded)
    }

    @Test("A folded value longer than maxHeaderValueBytes is dropped")
    func valueLength() {
        let limits = SIPLimits(maxLineBytes: 100, maxHeaderValueBytes: 300)
        let folded = "X-Folded: start\n" + String(repeating: " " + String(repeating: "b", count: 60) + "\n", count: 6)
        let bytes = wire(Self.start + folded + Self.end)
        #expect(expectDropped(bytes, limits: limits) == .limitExceeded)
        #expect(throws: Never.self) { try SIPMessage(datagram: bytes, limits: SIPLimits(maxLineBytes: 100)) }
    }

    @Test("A multipart body with more parts than maxBodyParts is refused where it is read")
    func bodyParts() throws {
        let part = "--b\r\nContent-Type: text/plain\r\n\r\nx\r\n"
        let body = Array((String(repeating: part, count: 5) + "--b--\r\n").utf8)
        #expect(try SIPMultipartBody(parsing: body, boundary: "b").parts.count == 5)
        #expect(throws: SIPError.self) { try SIPMultipartBody(parsing: body, boundary: "b", limits: SIPLimits(maxBodyParts: 4)) }
    }

    @Test("A huge number in a header is refused, not wrapped")
    func hugeNumbers() throws {
        let message = try SIPMessage(datagram: wire(Self.start + "Max-Forwards: 99999999999999999999999999999999999999999999\nExpires: 4294967296\n" + Self.end))
        #expect(throws: SIPError.self) { try message.maxForwards() }
        #expect(throws: SIPError.self) { try message.expires() }
        expectAnswer(wire(Self.start + "Content-Length: 99999999999999999999\n" + Self.end.replacing("Content-Length: 0\n", with: "")),
                     .invalidContentLength, status: 400)
    }

    private func expectDropped(_ bytes: [UInt8], limits: SIPLimits, sourceLocation: SourceLocation = #_sourceLocation) -> SIPError.Kind? {
        do {
            _ = try SIPMessage(datagram: bytes, limits: limits)
            Issue.record("accepted", sourceLocation: sourceLocation)
            return nil
        } catch {
            #expect(error.disposition == .drop, sourceLocation: sourceLocation)
            var framer = SIPStreamFramer(limits: limits)
            do {
                _ = try framer.next(in: bytes)
                Issue.record("framed over a stream", sourceLocation: sourceLocation)
            } catch {
                #expect(error.closesConnection, sourceLocation: sourceLocation)
                #expect(error.disposition == .drop, sourceLocation: sourceLocation)
            }
            return error.kind
        }
    }
}
