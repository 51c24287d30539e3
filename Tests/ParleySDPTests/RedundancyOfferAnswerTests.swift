import Foundation
import ParleySDP
import Testing

/// RFC 2198 RED for Opus as WebRTC negotiates it: `red/48000/2` with fmtp `111/111`.
@Suite("RED (RFC 2198) offer/answer")
struct RedundancyOfferAnswerTests {
    static func capabilities(redundancy: Bool) -> LocalAudioCapabilities {
        var local = serverCapabilities()
        local.opusRedundancy = redundancy
        return local
    }

    @Test("Chromium's offer (red 63, fmtp 111/111): accepted at 63 after the codecs, fmtp echoed")
    func answerChromiumRED() throws {
        let offer = try Fixture.chromiumOffer.parsed
        let answer = try AudioOfferAnswer(local: Self.capabilities(redundancy: true)).answer(to: offer)
        let section = answer.description.media[0]
        // After the codecs: a peer sends its first common format, which stays Opus.
        #expect(section.formats == ["111", "0", "8", "63", "110", "126"])
        #expect(section.attributes.contains(SDPAttribute(name: "rtpmap", value: "63 red/48000/2")))
        #expect(section.attributes.contains(SDPAttribute(name: "fmtp", value: "63 111/111")))
        let audio = try #require(answer.audio.first)
        #expect(audio.redundancy?.payloadType == 63)
        #expect(audio.codec.payloadType == 111)
        #expect(audio.codecs.map(\.name) == ["opus", "PCMU", "PCMA"])
    }

    @Test("RED not allowed locally: not in the answer")
    func answerWithoutRED() throws {
        let offer = try Fixture.chromiumOffer.parsed
        let answer = try AudioOfferAnswer(local: Self.capabilities(redundancy: false)).answer(to: offer)
        #expect(answer.description.media[0].formats == ["111", "0", "8", "110", "126"])
        #expect(answer.audio.first?.redundancy == nil)
    }

    @Test("RED wrapping another payload type than the chosen Opus is refused")
    func answerREDForOtherCodec() throws {
        let text = try Fixture.chromiumOffer.text.replacingOccurrences(of: "a=fmtp:63 111/111", with: "a=fmtp:63 0/0")
        let answer = try AudioOfferAnswer(local: Self.capabilities(redundancy: true)).answer(to: try SessionDescription(parsing: text))
        #expect(!answer.description.media[0].formats.contains("63"))
        #expect(answer.audio.first?.redundancy == nil)
    }

    @Test("our offer lists red/48000/2 after Opus with fmtp 111/111; the answer's RED is taken")
    func offerAndAcceptRED() throws {
        let offerer = AudioOfferAnswer(local: Self.capabilities(redundancy: true))
        let offer = try offerer.makeOffer()
        let section = offer.media[0]
        #expect(Array(section.formats.prefix(2)) == ["111", "63"])
        #expect(section.attributes.contains(SDPAttribute(name: "rtpmap", value: "63 red/48000/2")))
        #expect(section.attributes.contains(SDPAttribute(name: "fmtp", value: "63 111/111")))
        let reparsed = try SessionDescription(parsing: offer.serialized())
        let answer = try AudioOfferAnswer(local: Self.capabilities(redundancy: true)).answer(to: reparsed)
        let agreed = try offerer.acceptAnswer(try SessionDescription(parsing: answer.description.serialized()), to: offer)
        #expect(agreed.first?.redundancy?.payloadType == 63)
        #expect(agreed.first?.codec.name == "opus")
        // An answerer without RED: neither side has it.
        let plain = try AudioOfferAnswer(local: Self.capabilities(redundancy: false)).answer(to: reparsed)
        #expect(plain.audio.first?.redundancy == nil)
        let agreedPlain = try offerer.acceptAnswer(try SessionDescription(parsing: plain.description.serialized()), to: offer)
        #expect(agreedPlain.first?.redundancy == nil)
    }
}
