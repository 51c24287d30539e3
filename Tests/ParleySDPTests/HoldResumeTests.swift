import Testing
import ParleySDP

/// Hold and resume offers made from our current session (RFC 3264 §8.4).
@Suite struct HoldResumeTests {
    private static let current = """
    v=0\r
    o=parley 7 41 IN IP4 192.0.2.1\r
    s=-\r
    c=IN IP4 192.0.2.1\r
    t=0 0\r
    a=sendrecv\r
    m=audio 30000 RTP/AVP 0 101\r
    a=rtpmap:101 telephone-event/8000\r
    a=sendrecv\r
    m=video 0 RTP/AVP 96\r
    a=inactive\r

    """

    @Test func rfc3264_8_4_holdIsSendonlyWithTheNextVersion() throws {
        let session = try SessionDescription(parsing: Self.current)
        let hold = try session.holding()
        #expect(hold.origin.sessionVersion == "42")
        #expect(hold.origin.sessionID == "7")
        #expect(hold.media[0].direction(in: hold) == .sendonly)
        #expect(hold.media[0].attributes(named: "sendonly").count == 1)
        #expect(!hold.media[0].hasAttribute("sendrecv"))
        #expect(hold.media[0].formats == ["0", "101"])
        #expect(hold.media[0].port == 30000)
        // The rejected section stays rejected and untouched.
        #expect(hold.media[1] == session.media[1])
        // What goes on the wire parses back to the same.
        let reparsed = try SessionDescription(parsing: hold.serializedBytes())
        #expect(reparsed.media[0].direction(in: reparsed) == .sendonly)
        #expect(reparsed.origin.sessionVersion == "42")
    }

    @Test func rfc3264_8_4_holdWhileHeldIsInactive() throws {
        let hold = try SessionDescription(parsing: Self.current).holding(remoteHolds: true)
        #expect(hold.media[0].direction(in: hold) == .inactive)
    }

    @Test func rfc3264_8_4_resumeIsSendrecvWithTheNextVersion() throws {
        let hold = try SessionDescription(parsing: Self.current).holding()
        let resume = try hold.resuming()
        #expect(resume.origin.sessionVersion == "43")
        #expect(resume.media[0].direction(in: resume) == .sendrecv)
        #expect(!resume.media[0].hasAttribute("sendonly"))
    }

    @Test func versionThatCannotGrowIsAnError() throws {
        for version in ["18446744073709551615", "x1"] {
            var session = try SessionDescription(parsing: Self.current)
            session.origin.sessionVersion = version
            #expect(throws: SDPError.self) { try session.holding() }
        }
    }
}
