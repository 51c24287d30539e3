import ParleySDP
import Testing

/// Offer/answer for a plain RTP endpoint (`LocalAudioCapabilities.Transport.plainRTP`): what a
/// SIP peer sends and expects (RFC 3264 over RTP/AVP, RFC 3551), with no ICE or DTLS lines.
@Suite("Plain RTP offer/answer (RFC 3264, RTP/AVP)")
struct PlainRTPOfferAnswerTests {
    static func plain(_ address: String = "192.0.2.10", port: UInt16 = 30_000, codecs: [AudioCodec] = [.pcmu, .pcma]) -> LocalAudioCapabilities {
        var local = serverCapabilities(codecs: codecs)
        local.transport = .plainRTP(address: address, port: port)
        local.headerExtensions = []
        return local
    }

    /// A SIP phone's offer: PCMU, PCMA, telephone-event, no rtcp-mux.
    static let sipOffer = """
        v=0\r
        o=phone 1 1 IN IP4 198.51.100.7\r
        s=call\r
        c=IN IP4 198.51.100.7\r
        t=0 0\r
        m=audio 5004 RTP/AVP 0 8 101\r
        a=rtpmap:101 telephone-event/8000\r
        a=fmtp:101 0-16\r
        a=ptime:20\r
        a=sendrecv\r

        """

    @Test("a SIP phone's offer is answered with RTP/AVP, our address and no WebRTC lines")
    func answersASIPOffer() throws {
        let offer = try SessionDescription(parsing: Self.sipOffer)
        let answer = try AudioOfferAnswer(local: Self.plain()).answer(to: offer)
        let section = answer.description.media[0]
        #expect(section.proto == "RTP/AVP")
        #expect(section.port == 30_000)
        #expect(section.connections == [.init(address: "192.0.2.10")])
        #expect(section.formats == ["0", "8", "101"])
        #expect(section.iceUsernameFragment == nil && section.icePassword == nil)
        #expect(try section.fingerprints().isEmpty)
        #expect(try section.setup() == nil)
        #expect(!section.isRTCPMuxed)
        #expect(!answer.description.isICELite)
        let audio = try #require(answer.audio.first)
        #expect(audio.codec.name == "PCMU")
        #expect(audio.telephoneEvent?.payloadType == 101)
        #expect(audio.remoteAddress == "198.51.100.7" && audio.remotePort == 5004)
        #expect(!audio.rtcpMux)
        #expect(try SessionDescription(parsing: answer.description.serialized()) == answer.description)
    }

    @Test("a plain RTP offer, answered by a plain RTP peer and accepted")
    func offersAndAccepts() throws {
        let ours = AudioOfferAnswer(local: Self.plain())
        let offer = try ours.makeOffer()
        let text = offer.serialized()
        #expect(text.contains("m=audio 30000 RTP/AVP 0 8 126\r\n"))
        #expect(text.contains("c=IN IP4 192.0.2.10\r\n"))
        #expect(text.contains("a=rtcp-mux\r\n"))
        for line in ["a=ice-", "a=fingerprint", "a=setup", "a=candidate", "a=group", "a=msid", "a=end-of-candidates"] {
            #expect(!text.contains(line), "\(line) in a plain RTP offer")
        }
        let answer = try AudioOfferAnswer(local: Self.plain("198.51.100.7", port: 5004)).answer(to: try SessionDescription(parsing: text))
        let agreed = try ours.acceptAnswer(answer.description, to: offer)
        #expect(agreed.first?.remoteAddress == "198.51.100.7")
        #expect(agreed.first?.remotePort == 5004)
        #expect(agreed.first?.rtcpMux == true)
    }

    @Test("a WebRTC offer is refused by a plain RTP endpoint, and a plain one by a WebRTC endpoint")
    func profilesDoNotMix() throws {
        let webRTCOffer = try Fixture.chromiumOffer.parsed
        #expect(throws: SDPError.self) { _ = try AudioOfferAnswer(local: Self.plain()).answer(to: webRTCOffer) }
        let sipOffer = try SessionDescription(parsing: Self.sipOffer)
        #expect(throws: SDPError.self) { _ = try AudioOfferAnswer(local: serverCapabilities()).answer(to: sipOffer) }
    }

    @Test("a plain RTP endpoint needs an address and a port")
    func validatesItsAddress() throws {
        #expect(throws: SDPError.self) { _ = try AudioOfferAnswer(local: Self.plain("", port: 30_000)).makeOffer() }
        #expect(throws: SDPError.self) { _ = try AudioOfferAnswer(local: Self.plain(port: 0)).makeOffer() }
    }
}
