import ParleySDP
import Testing

@Suite("SessionDescription parsing and serialization (RFC 8866)")
struct SessionDescriptionParsingTests {
    /// The example session of RFC 8866 §5.
    static let rfc8866Example = """
        v=0\r
        o=jdoe 3724394400 3724394405 IN IP4 198.51.100.1\r
        s=Call to John Smith\r
        i=SDP Offer #1\r
        u=http://www.jdoe.example.com/home.html\r
        e=Jane Doe <jane@jdoe.example.com>\r
        p=+1 617 555-6011\r
        c=IN IP4 198.51.100.1\r
        t=0 0\r
        m=audio 49170 RTP/AVP 0\r
        m=audio 49180 RTP/AVP 0\r
        m=video 51372 RTP/AVP 99\r
        c=IN IP6 2001:db8::2\r
        a=rtpmap:99 h263-1998/90000\r

        """

    @Test("RFC 8866 §5 example session")
    func rfc8866Section5Example() throws {
        let sdp = try SessionDescription(parsing: Self.rfc8866Example)
        #expect(sdp.version == 0)
        #expect(sdp.origin == .init(username: "jdoe", sessionID: "3724394400", sessionVersion: "3724394405", networkType: "IN", addressType: "IP4", address: "198.51.100.1"))
        #expect(sdp.sessionName == "Call to John Smith")
        #expect(sdp.information == "SDP Offer #1")
        #expect(sdp.uri == "http://www.jdoe.example.com/home.html")
        #expect(sdp.emails == ["Jane Doe <jane@jdoe.example.com>"])
        #expect(sdp.phones == ["+1 617 555-6011"])
        #expect(sdp.connection == .init(networkType: "IN", addressType: "IP4", address: "198.51.100.1"))
        #expect(sdp.timings == [.init(start: 0, stop: 0)])
        #expect(sdp.media.count == 3)
        #expect(sdp.media[0].media == "audio" && sdp.media[0].port == 49170 && sdp.media[0].proto == "RTP/AVP" && sdp.media[0].formats == ["0"])
        #expect(sdp.media[1].port == 49180)
        #expect(sdp.media[2].connections == [.init(networkType: "IN", addressType: "IP6", address: "2001:db8::2")])
        #expect(try sdp.media[2].rtpMaps() == [RTPMap(payloadType: 99, encodingName: "h263-1998", clockRate: 90000)])
        #expect(sdp.serialized() == Self.rfc8866Example)
    }

    @Test("real descriptions round-trip byte for byte", arguments: Fixture.allCases)
    func realFixturesRoundTrip(_ fixture: Fixture) throws {
        let bytes = try fixture.bytes
        let sdp = try SessionDescription(parsing: bytes)
        #expect(sdp.serializedBytes() == bytes)
        #expect(try SessionDescription(parsing: sdp.serialized()) == sdp)
    }

    @Test("LF-only input parses to the same value and serializes with CRLF", arguments: Fixture.allCases)
    func lineFeedOnlyInput(_ fixture: Fixture) throws {
        let text = try fixture.text
        let lfOnly = text.replacingOccurrences(of: "\r\n", with: "\n")
        let sdp = try SessionDescription(parsing: lfOnly)
        #expect(sdp == (try fixture.parsed))
        #expect(sdp.serialized() == text)
    }

    @Test("a missing final line ending and trailing blank lines are tolerated")
    func trailingTolerance() throws {
        let base = "v=0\r\no=- 1 1 IN IP4 0.0.0.0\r\ns=-\r\nt=0 0\r\na=x"
        let expected = try SessionDescription(parsing: base + "\r\n")
        #expect(try SessionDescription(parsing: base) == expected)
        #expect(try SessionDescription(parsing: base + "\r\n\r\n\n") == expected)
    }

    @Test("session structure of the Chromium offer")
    func chromiumStructure() throws {
        let sdp = try Fixture.chromiumOffer.parsed
        #expect(sdp.origin.username == "-")
        #expect(sdp.origin.sessionVersion == "2")
        #expect(try sdp.bundleGroup() == SDPGroup(semantics: "BUNDLE", identifiers: ["0"]))
        #expect(sdp.attributes.map(\.name) == ["group", "extmap-allow-mixed", "msid-semantic"])
        // Unusual spacing inside a value is preserved as written.
        #expect(sdp.attribute(named: "msid-semantic")?.value?.hasPrefix(" WMS ") == true)
        let audio = try #require(sdp.media.first)
        #expect(audio.media == "audio")
        #expect(audio.proto == "UDP/TLS/RTP/SAVPF")
        #expect(audio.formats == ["111", "63", "9", "0", "8", "13", "110", "126"])
        #expect(audio.mid == "0")
        #expect(audio.isRTCPMuxed && audio.isRTCPReducedSize)
        #expect(audio.explicitDirection == .sendrecv)
        // Unknown attributes stay in place.
        #expect(audio.hasAttribute("rtcp-xr"))
    }

    @Test("structured lines: b=, r=, z=, k=, port count, multicast c=")
    func structuredLines() throws {
        let text = """
            v=0\r
            o=alice 0001 02 IN IP4 203.0.113.5\r
            s= \r
            c=IN IP4 233.252.0.1/127/2\r
            b=CT:128\r
            t=3724394400 3724398000\r
            r=7d 1h 0 25h\r
            r=604800 3600 0 90000\r
            t=0 0\r
            z=2882844526 -1h 2898848070 0\r
            k=prompt\r
            a=recvonly\r
            m=audio 49170/2 RTP/AVP 0 8\r
            i=the voice\r
            c=IN IP4 233.252.0.1/127\r
            c=IN IP4 233.252.0.2/127\r
            b=AS:64\r
            b=TIAS:64000\r
            k=clear:secret\r
            a=ptime:20\r
            a=maxptime:22.5\r

            """
        let sdp = try SessionDescription(parsing: text)
        #expect(sdp.origin.sessionID == "0001")
        #expect(sdp.sessionName == " ")
        #expect(sdp.bandwidths == [.init(type: "CT", value: 128)])
        #expect(sdp.timings == [.init(start: 3_724_394_400, stop: 3_724_398_000, repeats: ["7d 1h 0 25h", "604800 3600 0 90000"]), .init()])
        #expect(sdp.timeZones == "2882844526 -1h 2898848070 0")
        #expect(sdp.encryptionKey == "prompt")
        let media = sdp.media[0]
        #expect(media.port == 49170 && media.portCount == 2)
        #expect(media.information == "the voice")
        #expect(media.connections.count == 2)
        #expect(media.bandwidths == [.init(type: "AS", value: 64), .init(type: "TIAS", value: 64000)])
        #expect(media.encryptionKey == "clear:secret")
        #expect(try media.packetTime() == PacketTime(milliseconds: 20))
        #expect(try media.maxPacketTime() == MaxPacketTime(milliseconds: 22.5))
        #expect(media.direction(in: sdp) == .recvonly)
        #expect(sdp.serialized() == text)
    }

    @Test("value round trip: built descriptions parse back equal")
    func builtRoundTrip() throws {
        var sdp = SessionDescription(origin: .init(sessionID: "1", sessionVersion: "1"))
        sdp.attributes = [SDPAttribute(name: "ice-lite"), SDPAttribute(name: "empty-value", value: "")]
        sdp.media = [MediaDescription(media: "audio", port: 9, proto: "RTP/AVP", formats: ["0"], attributes: [SDPAttribute(RTPMap(payloadType: 0, encodingName: "PCMU", clockRate: 8000))])]
        let text = sdp.serialized()
        #expect(text.contains("a=empty-value:\r\n"))
        #expect(try SessionDescription(parsing: text) == sdp)
    }

    struct BadInput: Sendable, CustomTestStringConvertible {
        let text: String
        let kind: SDPError.Kind
        let line: Int?
        let reasonContains: String
        var testDescription: String { reasonContains }
    }

    static let head = "v=0\r\no=- 1 1 IN IP4 0.0.0.0\r\ns=-\r\n"

    static let badInputs: [BadInput] = [
        .init(text: "", kind: .missingLine, line: nil, reasonContains: "empty description"),
        .init(text: "o=- 1 1 IN IP4 0.0.0.0\r\n", kind: .missingLine, line: 1, reasonContains: "expected a v= line"),
        .init(text: "v=1\r\no=- 1 1 IN IP4 0.0.0.0\r\ns=-\r\n", kind: .malformedLine, line: 1, reasonContains: "only v=0"),
        .init(text: "v=0\r\n", kind: .missingLine, line: nil, reasonContains: "before its o= line"),
        .init(text: "v=0\r\no=- 1 1 IN IP4\r\ns=-\r\n", kind: .malformedLine, line: 2, reasonContains: "6 space-separated fields"),
        .init(text: "v=0\r\no=- x 1 IN IP4 0.0.0.0\r\ns=-\r\n", kind: .malformedLine, line: 2, reasonContains: "session id"),
        .init(text: head + "t=0 0\r\nc=IN IP4 1.2.3.4\r\n", kind: .lineOutOfOrder, line: 5, reasonContains: "c= line out of order"),
        .init(text: head + "i=a\r\ni=b\r\n", kind: .duplicateLine, line: 5, reasonContains: "second i="),
        .init(text: head + "r=1 2 3\r\n", kind: .lineOutOfOrder, line: 4, reasonContains: "r= line must follow"),
        .init(text: head + "x=1\r\n", kind: .unknownLineType, line: 4, reasonContains: "unknown line type x="),
        .init(text: head + "t=0 0\r\nm=audio 9 RTP/AVP 0\r\nt=0 0\r\n", kind: .lineOutOfOrder, line: 6, reasonContains: "inside a media section"),
        .init(text: head + "m=audio 70000 RTP/AVP 0\r\n", kind: .malformedLine, line: 4, reasonContains: "port \"70000\""),
        .init(text: head + "m=audio 9  RTP/AVP 0\r\n", kind: .malformedLine, line: 4, reasonContains: "empty protocol"),
        .init(text: head + "m=audio 9 RTP/AVP 0 \r\n", kind: .malformedLine, line: 4, reasonContains: "empty format"),
        .init(text: head + "m=audio 9\r\n", kind: .malformedLine, line: 4, reasonContains: "malformed m= line"),
        .init(text: head + "t=now 0\r\n", kind: .malformedLine, line: 4, reasonContains: "malformed t= line"),
        .init(text: head + "b=AS\r\n", kind: .malformedLine, line: 4, reasonContains: "malformed b= line"),
        .init(text: head + "b=AS:99999999999999999999999\r\n", kind: .malformedLine, line: 4, reasonContains: "not a number"),
        .init(text: head + "c=IN IP4\r\n", kind: .malformedLine, line: 4, reasonContains: "malformed c= line"),
        .init(text: head + "a=\r\n", kind: .malformedLine, line: 4, reasonContains: "attribute name"),
        .init(text: head + "a=bad name:1\r\n", kind: .malformedLine, line: 4, reasonContains: "attribute name"),
        .init(text: head + "a=x\ry\r\n", kind: .invalidText, line: 4, reasonContains: "carriage return"),
        .init(text: head + "a=x\u{0}\r\n", kind: .invalidText, line: 4, reasonContains: "NUL"),
        .init(text: head + "\r\na=x\r\n", kind: .malformedLine, line: 4, reasonContains: "empty line"),
        .init(text: head + "ab\r\n", kind: .malformedLine, line: 4, reasonContains: "type letter"),
        .init(text: head + "A=b\r\n", kind: .malformedLine, line: 4, reasonContains: "lowercase"),
    ]

    @Test("malformed input gives a typed error with line and reason", arguments: badInputs)
    func malformedInput(_ input: BadInput) {
        do {
            _ = try SessionDescription(parsing: input.text)
            Issue.record("parsed: \(input.text.debugDescription)")
        } catch {
            #expect(error.kind == input.kind, "\(error)")
            #expect(error.line == input.line, "\(error)")
            #expect(error.reason.contains(input.reasonContains), "\(error)")
        }
    }

    @Test("invalid UTF-8 is rejected with its line")
    func invalidUTF8() {
        let bytes = Array("v=0\r\no=- 1 1 IN IP4 0.0.0.0\r\ns=caf".utf8) + [0xC3, 0x28] + Array("\r\n".utf8)
        #expect(throws: SDPError.self) { try SessionDescription(parsing: bytes) }
        do { _ = try SessionDescription(parsing: bytes) } catch {
            #expect(error.kind == .invalidText && error.line == 3)
        }
    }

    @Test("error descriptions name the line")
    func errorDescription() {
        do {
            _ = try SessionDescription(parsing: Self.head + "m=audio 99999 RTP/AVP 0\r\n")
        } catch {
            #expect(error.description == "line 4: malformed m= line: port \"99999\" is not a number 0-65535")
        }
    }
}
