import ParleyICECore
import ParleyMediaCore
@testable import ParleyMediaLegCore
import ParleyRTP
import ParleySDP
import ParleySRTP
import Testing

/// Plain RTP legs that key SRTP through SDES (RFC 4568): the offerer's `a=crypto` lines, the
/// answerer's pick, and audio protected with the keys the SDP carried, pumped in memory on a
/// virtual clock as `PlainRTPLegTests` does.
@Suite struct SDESLegTests {
    /// An offerer that offers SDES and an answerer left at the default (it answers SDES when
    /// offered, and offers none itself).
    static func pair(codecs: [AudioCodec] = [.pcmu]) throws -> LegPairHarness {
        try PlainRTPLegTests.pair(codecs: codecs, options: .init(offersSDES: true), answererOptions: .init())
    }

    /// The offer with only the `a=crypto` line of `suite` left, as from a phone offering just it.
    static func keeping(_ suite: CryptoAttribute.Suite, in offer: String) -> String {
        offer.split(separator: "\r\n", omittingEmptySubsequences: false)
            .filter { !$0.hasPrefix("a=crypto:") || $0.contains(" \(suite.name) ") }
            .joined(separator: "\r\n")
    }

    static func cryptoLines(_ sdp: String) throws -> [CryptoAttribute] {
        try SessionDescription(parsing: sdp).media[0].values(CryptoAttribute.self)
    }

    @Test(arguments: [CryptoAttribute.Suite.aesCM128HMACSHA1_80, .aesCM128HMACSHA1_32, .aeadAES128GCM])
    func negotiatesAndCarriesToneBothWays(suite: CryptoAttribute.Suite) throws {
        let profile = try #require(PlainRTPTransport.Keys.profile(for: suite))
        var harness = try Self.pair()
        harness.recordSends = true
        let fullOffer = try harness.offerer.makeOffer()
        #expect(fullOffer.contains("m=audio 40000 RTP/SAVP "))
        #expect(try Self.cryptoLines(fullOffer).map(\.suite) == PlainRTPTransport.sdesSuites)
        let offer = Self.keeping(suite, in: fullOffer)
        let answer = try harness.answerer.answer(offer: offer)
        #expect(answer.contains("m=audio 50000 RTP/SAVP "))
        let offered = try #require(try Self.cryptoLines(offer).first)
        let answered = try #require(try Self.cryptoLines(answer).first)
        #expect(answered.tag == offered.tag && answered.suite == suite)
        #expect(answered.keys[0].keySalt != offered.keys[0].keySalt)
        try harness.offerer.acceptAnswer(answer)
        try harness.startBoth()
        harness.run(for: .seconds(3), audio: true)

        let a = harness.offerer.statistics
        let b = harness.answerer.statistics
        #expect(a.srtpProfile == profile.registeredName && b.srtpProfile == profile.registeredName)
        #expect(a.srtpInbound.unprotected >= 140 && b.srtpInbound.unprotected >= 140, "\(a.srtpInbound) \(b.srtpInbound)")
        #expect(a.framesPlayedFromPackets >= 140 && b.framesPlayedFromPackets >= 140)
        #expect(abs(PlainRTPLegTests.dominant(harness.offererReceived) - 1000) < 10)
        #expect(abs(PlainRTPLegTests.dominant(harness.answererReceived) - 440) < 10)
        #expect(harness.drops("offerer").isEmpty, "\(harness.drops("offerer"))")
        #expect(harness.drops("answerer").isEmpty, "\(harness.drops("answerer"))")

        // On the wire: each side's RTP is SRTP under the key its own a=crypto line carried,
        // which the other side's key does not open.
        for (side, mine, theirs) in [("offerer", offered, answered), ("answerer", answered, offered)] {
            let packet = try #require(harness.sent.first { $0.side == side && $0.bytes.count > 12 && $0.bytes[1] & 0x7F == 0 }?.bytes)
            let own = try SRTPSession(profile: profile, keyMaterial: mine.keys[0].keySalt, direction: .inbound)
            let clear = try own.unprotect(srtp: packet)
            #expect(clear.count == packet.count - profile.rtpTagLength)
            #expect(try RTPPacket(parsing: clear).payload.count == 160)
            let other = try SRTPSession(profile: profile, keyMaterial: theirs.keys[0].keySalt, direction: .inbound)
            #expect(throws: SRTPError.self) { _ = try other.unprotect(srtp: packet) }
        }
    }

    @Test func aForgedPacketFailsAuthentication() throws {
        var harness = try Self.pair()
        try harness.negotiate()
        try harness.startBoth()
        harness.run(for: .seconds(1), audio: true)
        var forged = try PlainRTPLegTests.rtp(sequence: 500)
        forged += [UInt8](repeating: 0, count: SRTPProfile.aes128CmHmacSha1_80.rtpTagLength)
        harness.inject(forged, from: harness.offererAddress, to: harness.answererAddress)
        harness.run(for: .seconds(1), audio: true)
        let b = harness.answerer.statistics
        #expect(b.srtpProfile == "SRTP_AES128_CM_SHA1_80")
        #expect(b.dropped[.srtpAuthentication] == 1, "\(b.dropped)")
        #expect(abs(PlainRTPLegTests.dominant(harness.answererReceived) - 440) < 10)
    }

    @Test func aPlainOfferStaysInTheClear() throws {
        var harness = try PlainRTPLegTests.pair()
        let offer = try harness.offerer.makeOffer()
        #expect(offer.contains("RTP/AVP") && !offer.contains("a=crypto"))
        let answer = try harness.answerer.answer(offer: offer)
        #expect(answer.contains("RTP/AVP") && !answer.contains("a=crypto"))
        try harness.offerer.acceptAnswer(answer)
        try harness.startBoth()
        harness.run(for: .seconds(1), audio: true)
        #expect(harness.answerer.statistics.srtpProfile == nil)
    }

    @Test func anSDESOfferWithoutAUsableLineIsRefused() throws {
        var harness = try Self.pair()
        let offer = try harness.offerer.makeOffer()
        let stripped = Self.keeping(CryptoAttribute.Suite("NONE"), in: offer)
        #expect {
            _ = try harness.answerer.answer(offer: stripped)
        } throws: { error in
            guard let error = error as? MediaLegError else { return false }
            return error.kind == .negotiation && "\(error)".contains("no a=crypto line")
        }
        #expect(harness.answerer.state == .new)
    }

    @Test func negotiatedKeysBecomeTransportKeys() throws {
        let sdes = NegotiatedSDES(tag: 2, suite: .aesCM128HMACSHA1_32, localKeyMaterial: Array(0..<30), remoteKeyMaterial: Array(100..<130))
        let keys = try PlainRTPTransport.Keys(negotiated: sdes)
        #expect(keys == .init(profile: .aes128CmHmacSha1_32, localKeyMaterial: Array(0..<30), remoteKeyMaterial: Array(100..<130)))
        let unknown = NegotiatedSDES(tag: 1, suite: .init("AES_256_CM_HMAC_SHA1_80"), localKeyMaterial: [], remoteKeyMaterial: [])
        #expect(throws: MediaLegError.self) { _ = try PlainRTPTransport.Keys(negotiated: unknown) }
        for suite in PlainRTPTransport.sdesSuites {
            let profile = try #require(PlainRTPTransport.Keys.profile(for: suite))
            #expect(profile.keyMaterialLength == suite.keySaltLength)
        }
    }
}
