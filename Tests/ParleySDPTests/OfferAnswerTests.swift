import ParleySDP
import Testing

@Suite("Audio offer/answer (RFC 3264, RFC 8843, RFC 8842)")
struct OfferAnswerTests {
    let negotiator = AudioOfferAnswer(local: serverCapabilities())

    /// Checks every answer we write: parses back, keeps section count and order, and
    /// carries our transport in accepted sections.
    func checkWellFormed(_ answer: AudioAnswer, for offer: SessionDescription) throws {
        let text = answer.description.serialized()
        #expect(try SessionDescription(parsing: text) == answer.description)
        #expect(answer.description.media.count == offer.media.count)
        for (offered, answered) in zip(offer.media, answer.description.media) {
            #expect(offered.media == answered.media)
            if answered.port != 0 {
                #expect(answered.iceUsernameFragment == "prly")
                #expect(answered.icePassword == "parleyIcePassword0123456")
                #expect(try answered.fingerprints() == [Fingerprint(algorithm: "sha-256", bytes: Array(0..<32))])
                #expect(answered.connections == [.init(address: "10.203.0.1")])
                #expect(answered.port == 40000)
                #expect(try answered.iceCandidates().count == 1)
                #expect(answered.hasEndOfCandidates)
            }
        }
        #expect(answer.description.isICELite)
    }

    @Test("Chromium offer: Opus 111 with our fmtp, telephone-event/48000, rtcp-mux, mid, BUNDLE, setup active")
    func answerChromium() throws {
        let offer = try Fixture.chromiumOffer.parsed
        let answer = try negotiator.answer(to: offer)
        try checkWellFormed(answer, for: offer)
        let section = answer.description.media[0]
        // Common codecs in our preference order, then the event at Opus's clock rate
        // and at G.711's.
        #expect(section.formats == ["111", "0", "8", "110", "126"])
        #expect(try section.rtpMaps().first == RTPMap(payloadType: 111, encodingName: "opus", clockRate: 48000, channels: 2))
        #expect(section.attributes.contains(SDPAttribute(name: "fmtp", value: "111 minptime=10;useinbandfec=1;usedtx=0;stereo=0")))
        #expect(section.attributes.contains(SDPAttribute(name: "fmtp", value: "110 0-15")))
        #expect(section.mid == "0")
        #expect(section.isRTCPMuxed && section.isRTCPReducedSize)
        #expect(try section.setup() == .active)
        #expect(section.explicitDirection == .sendrecv)
        #expect(try answer.description.bundleGroup() == SDPGroup(semantics: "BUNDLE", identifiers: ["0"]))
        // Only the audio-level extension, with Chromium's id; no transport-cc feedback.
        #expect(try section.extensionMaps() == [ExtensionMap(id: 1, uri: ExtensionMap.audioLevelURI)])
        #expect(try section.rtcpFeedback().isEmpty)
        #expect(try section.msids() == [MSID(streamID: "parley-stream", trackID: "parley-audio")])
        #expect(try section.ssrcAttributes() == [SSRCAttribute(ssrc: 0x1234_5678, attribute: "cname", value: "parley")])

        let audio = try #require(answer.audio.first)
        #expect(audio.codec.payloadType == 111 && audio.codec.name == "opus" && audio.codec.clockRate == 48000 && audio.codec.channels == 2)
        #expect(audio.codec.remoteParameter("useinbandfec") == "1")
        #expect(audio.codecs.map(\.payloadType) == [111, 0, 8])
        #expect(audio.telephoneEvent?.payloadType == 110 && audio.telephoneEvent?.clockRate == 48000)
        #expect(audio.payloadTypes == [111, 0, 8, 110, 126])
        let chromiumMedia = offer.media[0]
        #expect(audio.remoteICEUsernameFragment == chromiumMedia.iceUsernameFragment)
        #expect(audio.remoteICEPassword == chromiumMedia.icePassword)
        #expect(audio.remoteICEOptions == ["trickle"])
        #expect(!audio.remoteICELite)
        #expect(audio.remoteCandidates == (try chromiumMedia.iceCandidates()))
        #expect(audio.remoteFingerprints == (try chromiumMedia.fingerprints()))
        #expect(audio.remoteSetup == .actpass && audio.localSetup == .active && audio.isDTLSClient)
        #expect(audio.rtcpMux && audio.rtcpReducedSize)
        #expect(audio.mid == "0" && audio.direction == .sendrecv && audio.bundleGroup == ["0"])
        #expect(audio.remoteSSRCs.count == 1)
        #expect(audio.remoteAddress == "10.203.0.2" && audio.remotePort == chromiumMedia.port)
    }

    @Test("Chromium offer answered with passive when configured")
    func answerPassive() throws {
        let offer = try Fixture.chromiumOffer.parsed
        let answer = try AudioOfferAnswer(local: serverCapabilities(setupPreference: .passive, opusDTX: true)).answer(to: offer)
        #expect(try answer.description.media[0].setup() == .passive)
        #expect(answer.audio[0].localSetup == .passive && !answer.audio[0].isDTLSClient)
        #expect(answer.description.media[0].attributes.contains(SDPAttribute(name: "fmtp", value: "111 minptime=10;useinbandfec=1;usedtx=1;stereo=0")))
    }

    @Test("Firefox offer: Opus 109, no telephone-event at 48000, session-level fingerprint")
    func answerFirefox() throws {
        let offer = try Fixture.firefoxOffer.parsed
        let answer = try negotiator.answer(to: offer)
        try checkWellFormed(answer, for: offer)
        let audio = try #require(answer.audio.first)
        #expect(audio.codec.payloadType == 109 && audio.codec.name == "opus")
        #expect(audio.codec.remoteParameter("stereo") == "1")
        // Firefox offers telephone-event only at 8000 Hz: it pairs with G.711, not Opus.
        #expect(audio.telephoneEvent == nil)
        #expect(audio.payloadTypes == [109, 0, 8, 101])
        #expect(audio.remoteFingerprints == (try offer.fingerprints()))
        #expect(audio.remoteCandidates.count == 4)
        #expect(audio.remoteEndOfCandidates)
        // Firefox's csrc-audio-level extension is not one we asked for.
        #expect(audio.headerExtensions == [ExtensionMap(id: 1, uri: ExtensionMap.audioLevelURI)])
    }

    @Test("aiortc offer: Opus 96, three remote fingerprints, no telephone-event")
    func answerAiortc() throws {
        let offer = try Fixture.aiortcOffer.parsed
        let answer = try negotiator.answer(to: offer)
        try checkWellFormed(answer, for: offer)
        let audio = try #require(answer.audio.first)
        #expect(audio.codec.payloadType == 96)
        #expect(audio.telephoneEvent == nil)
        #expect(audio.payloadTypes == [96, 0, 8])
        #expect(audio.remoteFingerprints.count == 3)
        #expect(audio.remoteCandidates.first?.address == "127.0.0.1")
        #expect(audio.rtcpMux && !audio.rtcpReducedSize)
        #expect(!answer.description.media[0].isRTCPReducedSize)
        #expect(try answer.description.media[0].extensionMaps() == [ExtensionMap(id: 2, uri: ExtensionMap.audioLevelURI)])
    }

    static let pcmuOnlyOffer = """
        v=0\r
        o=- 1 1 IN IP4 192.0.2.1\r
        s=-\r
        t=0 0\r
        m=audio 5004 UDP/TLS/RTP/SAVPF 0 101\r
        c=IN IP4 192.0.2.1\r
        a=ice-ufrag:abcd\r
        a=ice-pwd:abcdefghijklmnopqrstuv\r
        a=fingerprint:sha-256 00:11\r
        a=rtpmap:101 telephone-event/8000\r
        a=sendonly\r

        """

    @Test("PCMU-only offer (static payload type, no rtpmap) answered with PCMU and telephone-event/8000")
    func answerPCMUOnly() throws {
        let offer = try SessionDescription(parsing: Self.pcmuOnlyOffer)
        let answer = try negotiator.answer(to: offer)
        let section = answer.description.media[0]
        #expect(section.formats == ["0", "101"])
        #expect(try section.rtpMaps() == [RTPMap(payloadType: 0, encodingName: "PCMU", clockRate: 8000), RTPMap(payloadType: 101, encodingName: "telephone-event", clockRate: 8000)])
        let audio = try #require(answer.audio.first)
        #expect(audio.codec.name == "PCMU" && audio.codec.payloadType == 0)
        #expect(audio.telephoneEvent?.payloadType == 101)
        // No setup attribute: the offerer is active (RFC 4145 §4.1), so we are passive.
        #expect(audio.remoteSetup == .active && audio.localSetup == .passive)
        // sendonly offer -> recvonly answer, and then no msid/ssrc of ours.
        #expect(audio.direction == .recvonly && section.explicitDirection == .recvonly)
        #expect(try section.msids().isEmpty && section.ssrcAttributes().isEmpty)
        // No rtcp-mux offered, none answered; no mid, no BUNDLE.
        #expect(!audio.rtcpMux && !section.isRTCPMuxed)
        #expect(section.mid == nil)
        #expect(try answer.description.bundleGroup() == nil)
    }

    @Test("RFC 3264 §6.1 direction table through whole answers", arguments: [
        (MediaDirection.sendrecv, MediaDirection.sendrecv), (.sendonly, .recvonly), (.recvonly, .sendonly), (.inactive, .inactive),
    ])
    func directionsInAnswers(_ offered: MediaDirection, _ expected: MediaDirection) throws {
        let offer = try SessionDescription(parsing: Self.pcmuOnlyOffer.replacingOccurrences(of: "a=sendonly", with: "a=\(offered.rawValue)"))
        let answer = try negotiator.answer(to: offer)
        #expect(answer.description.media[0].explicitDirection == expected)
        #expect(answer.audio[0].direction == expected)
    }

    static let audioVideoDataOffer = """
        v=0\r
        o=- 1 1 IN IP4 127.0.0.1\r
        s=-\r
        t=0 0\r
        a=group:BUNDLE v a d\r
        a=ice-ufrag:sess\r
        a=ice-pwd:sessionlevelpassword1234\r
        a=fingerprint:sha-256 AA:BB\r
        a=setup:actpass\r
        m=video 9 UDP/TLS/RTP/SAVPF 96\r
        c=IN IP4 0.0.0.0\r
        a=mid:v\r
        a=rtcp-mux\r
        a=rtpmap:96 VP8/90000\r
        m=audio 9 UDP/TLS/RTP/SAVPF 111\r
        c=IN IP4 0.0.0.0\r
        a=mid:a\r
        a=rtcp-mux\r
        a=rtpmap:111 opus/48000/2\r
        m=application 9 UDP/DTLS/SCTP webrtc-datachannel\r
        c=IN IP4 0.0.0.0\r
        a=mid:d\r
        a=sctp-port:5000\r

        """

    @Test("audio+video+data offer: video and data rejected with port 0 and removed from BUNDLE")
    func answerAudioVideoData() throws {
        let offer = try SessionDescription(parsing: Self.audioVideoDataOffer)
        let answer = try negotiator.answer(to: offer)
        try checkWellFormed(answer, for: offer)
        let media = answer.description.media
        #expect(media.map(\.port) == [0, 40000, 0])
        #expect(media[0].formats == ["96"] && media[0].mid == "v" && media[0].attributes == [SDPAttribute(name: "mid", value: "v")])
        #expect(media[2].proto == "UDP/DTLS/SCTP" && media[2].formats == ["webrtc-datachannel"] && media[2].mid == "d")
        #expect(try answer.description.bundleGroup() == SDPGroup(semantics: "BUNDLE", identifiers: ["a"]))
        let audio = try #require(answer.audio.first)
        #expect(audio.mediaIndex == 1 && audio.mid == "a" && audio.bundleGroup == ["a"])
        // Session-level ICE and DTLS attributes apply to the audio section.
        #expect(audio.remoteICEUsernameFragment == "sess" && audio.remoteSetup == .actpass)
        #expect(audio.telephoneEvent == nil)
    }

    @Test("bundled section without its own transport takes the BUNDLE tag's")
    func bundleOnlySection() throws {
        let text = """
            v=0\r
            o=- 1 1 IN IP4 127.0.0.1\r
            s=-\r
            t=0 0\r
            a=group:BUNDLE v a\r
            m=video 9 UDP/TLS/RTP/SAVPF 96\r
            a=mid:v\r
            a=ice-ufrag:tagg\r
            a=ice-pwd:taggedsectionpassword123\r
            a=fingerprint:sha-256 AA:BB\r
            a=setup:passive\r
            a=rtpmap:96 VP8/90000\r
            m=audio 0 UDP/TLS/RTP/SAVPF 0\r
            a=mid:a\r
            a=bundle-only\r

            """
        let answer = try negotiator.answer(to: try SessionDescription(parsing: text))
        let audio = try #require(answer.audio.first)
        #expect(audio.remoteICEUsernameFragment == "tagg" && audio.remoteSetup == .passive && audio.localSetup == .active)
        #expect(answer.description.media.map(\.port) == [0, 40000])
        // The tag (video) was rejected: the answer's group is just the audio mid.
        #expect(try answer.description.bundleGroup()?.identifiers == ["a"])
    }

    @Test("typed errors: no common codec, no audio, missing ICE, missing fingerprint, wrong transport, port 0")
    func answerErrors() throws {
        func expectError(_ text: String, _ kind: SDPError.Kind, line: Int? = nil) throws {
            let offer = try SessionDescription(parsing: text)
            do {
                _ = try negotiator.answer(to: offer)
                Issue.record("answered \(text)")
            } catch {
                #expect(error.kind == kind, "\(error)")
                if let line { #expect(error.line == line, "\(error)") }
            }
        }
        let g722Only = Self.pcmuOnlyOffer.replacingOccurrences(of: "SAVPF 0 101", with: "SAVPF 9 101")
        try expectError(g722Only, .noCommonCodec, line: 5)
        let videoOnly = Self.pcmuOnlyOffer.replacingOccurrences(of: "m=audio 5004 UDP/TLS/RTP/SAVPF 0 101", with: "m=video 5004 UDP/TLS/RTP/SAVPF 96")
        try expectError(videoOnly, .noAudioMedia)
        try expectError(Self.pcmuOnlyOffer.replacingOccurrences(of: "a=ice-ufrag:abcd\r\n", with: ""), .missingICECredentials, line: 5)
        try expectError(Self.pcmuOnlyOffer.replacingOccurrences(of: "a=ice-pwd:abcdefghijklmnopqrstuv\r\n", with: ""), .missingICECredentials)
        try expectError(Self.pcmuOnlyOffer.replacingOccurrences(of: "a=fingerprint:sha-256 00:11\r\n", with: ""), .missingFingerprint, line: 5)
        try expectError(Self.pcmuOnlyOffer.replacingOccurrences(of: "UDP/TLS/RTP/SAVPF", with: "RTP/AVP"), .unsupportedProtocol, line: 5)
        try expectError(Self.pcmuOnlyOffer.replacingOccurrences(of: "m=audio 5004", with: "m=audio 0"), .noAudioMedia, line: 5)
        try expectError(Self.pcmuOnlyOffer.replacingOccurrences(of: "a=fingerprint:sha-256 00:11", with: "a=fingerprint:sha-256 zz"), .malformedAttribute, line: 9)
        try expectError(Self.pcmuOnlyOffer.replacingOccurrences(of: "a=rtpmap:101 telephone-event/8000", with: "a=rtpmap:101 telephone-event"), .malformedAttribute, line: 10)
    }

    @Test("invalid local capabilities are refused")
    func invalidCapabilities() throws {
        var local = serverCapabilities()
        local.icePassword = "short"
        #expect(throws: SDPError.self) { try AudioOfferAnswer(local: local).makeOffer() }
        local = serverCapabilities()
        local.codecs = []
        let offer = try Fixture.chromiumOffer.parsed
        do { _ = try AudioOfferAnswer(local: local).answer(to: offer) } catch {
            #expect(error.kind == .invalidCapabilities)
        }
    }

    @Test("our offer: actpass, rtcp-mux, BUNDLE, codecs at their payload types")
    func makeOffer() throws {
        let offer = try negotiator.makeOffer()
        let text = offer.serialized()
        #expect(try SessionDescription(parsing: text) == offer)
        let section = offer.media[0]
        #expect(section.formats == ["111", "0", "8", "110", "126"])
        #expect(try section.setup() == .actpass)
        #expect(section.isRTCPMuxed && section.mid == "0")
        #expect(try offer.bundleGroup()?.identifiers == ["0"])
        #expect(try section.rtpMaps().map(\.encodingName) == ["opus", "PCMU", "PCMA", "telephone-event", "telephone-event"])
        #expect(offer.origin.sessionID == "4242424242" && offer.origin.sessionVersion == "2")
    }

    @Test("answering our own offer, then accepting that answer, agrees on both sides")
    func selfNegotiation() throws {
        let offerer = AudioOfferAnswer(local: serverCapabilities(codecs: [.pcma, .opus]))
        var answererLocal = serverCapabilities()
        answererLocal.iceUsernameFragment = "ansr"
        answererLocal.iceLite = false
        let answerer = AudioOfferAnswer(local: answererLocal)
        let offer = try offerer.makeOffer()
        let answer = try answerer.answer(to: offer)
        let accepted = try offerer.acceptAnswer(answer.description, to: offer)
        let mine = try #require(accepted.first)
        let theirs = try #require(answer.audio.first)
        #expect(mine.codec.payloadType == theirs.codec.payloadType)
        #expect(mine.codec.name == "opus")  // the answerer's preference wins
        #expect(mine.telephoneEvent?.payloadType == 110)
        #expect(mine.remoteICEUsernameFragment == "ansr")
        #expect(mine.localSetup == .passive && theirs.localSetup == .active)
        #expect(mine.rtcpMux && mine.direction == .sendrecv && mine.mid == "0" && mine.bundleGroup == ["0"])
        #expect(mine.codec.remoteParameter("minptime") == "10")
    }

    @Test("accepting Chromium's real answer to aiortc's real offer")
    func acceptChromiumAnswer() throws {
        let offer = try Fixture.aiortcOffer.parsed
        let answer = try Fixture.chromiumAnswerToAiortc.parsed
        let accepted = try negotiator.acceptAnswer(answer, to: offer)
        let audio = try #require(accepted.first)
        #expect(audio.codec.payloadType == 96 && audio.codec.name == "opus")
        #expect(audio.codec.remoteParameter("useinbandfec") == "1")
        #expect(audio.remoteSetup == .active && audio.localSetup == .passive)
        #expect(audio.remoteICEOptions == ["trickle"])
        #expect(audio.remoteCandidates.count == 2)
        #expect(audio.rtcpMux && audio.mid == "0")
        #expect(audio.headerExtensions.map(\.uri).contains(ExtensionMap.audioLevelURI))
    }

    @Test("answers that do not fit the offer are refused")
    func invalidAnswers() throws {
        let offer = try negotiator.makeOffer()
        let good = try AudioOfferAnswer(local: serverCapabilities()).answer(to: offer).description.serialized()
        func expectInvalid(_ text: String, _ kind: SDPError.Kind = .invalidAnswer) throws {
            do {
                _ = try negotiator.acceptAnswer(try SessionDescription(parsing: text), to: offer)
                Issue.record("accepted \(text)")
            } catch {
                #expect(error.kind == kind, "\(error)")
            }
        }
        #expect(throws: Never.self) { try negotiator.acceptAnswer(try SessionDescription(parsing: good), to: offer) }
        try expectInvalid(good.replacingOccurrences(of: "a=setup:active", with: "a=setup:actpass"))
        try expectInvalid(good.replacingOccurrences(of: "SAVPF 111", with: "SAVPF 99 111"))
        try expectInvalid(good.replacingOccurrences(of: "a=rtpmap:111 opus/48000/2", with: "a=rtpmap:111 PCMU/8000"))
        try expectInvalid(good.replacingOccurrences(of: "a=group:BUNDLE 0", with: "a=group:BUNDLE 0 1"))
        try expectInvalid(good.replacingOccurrences(of: "a=mid:0", with: "a=mid:x"))
        // An answerer that does not know grouping leaves mid out (RFC 5888 §9.2): accepted.
        #expect(throws: Never.self) {
            try negotiator.acceptAnswer(try SessionDescription(parsing: good.replacingOccurrences(of: "a=mid:0\r\n", with: "")
                .replacingOccurrences(of: "a=group:BUNDLE 0\r\n", with: "")), to: offer)
        }
        try expectInvalid(good.replacingOccurrences(of: "a=extmap:1 ", with: "a=extmap:5 "))
        try expectInvalid(good.replacingOccurrences(of: "m=audio", with: "m=video"))
        try expectInvalid(good.replacingOccurrences(of: "a=ice-pwd:parleyIcePassword0123456\r\n", with: ""), .missingICECredentials)
        try expectInvalid(good.replacingOccurrences(of: "m=audio 40000", with: "m=audio 0"), .noAudioMedia)
        // Only telephone-event selected: no codec.
        try expectInvalid(good.replacingOccurrences(of: "SAVPF 111 0 8 110 126", with: "SAVPF 110"), .noCommonCodec)

        // A sendonly offer cannot get a sendonly answer.
        var recvOnlyLocal = serverCapabilities(direction: .sendonly)
        recvOnlyLocal.sendStream = nil
        let sendOnlyOffer = try AudioOfferAnswer(local: recvOnlyLocal).makeOffer()
        let sendOnlyAnswer = try AudioOfferAnswer(local: serverCapabilities()).answer(to: sendOnlyOffer).description.serialized()
        #expect(sendOnlyAnswer.contains("a=recvonly"))
        do {
            _ = try negotiator.acceptAnswer(try SessionDescription(parsing: sendOnlyAnswer.replacingOccurrences(of: "a=recvonly", with: "a=sendonly")), to: sendOnlyOffer)
            Issue.record("accepted sendonly answer to sendonly offer")
        } catch {
            #expect(error.kind == .invalidAnswer)
        }
    }
}
