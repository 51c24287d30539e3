import ParleyICECore
import ParleyMediaCore
@testable import ParleyMediaLegCore
import ParleyRTP
import ParleySDP
import ParleySRTP
import Testing

/// Plain RTP legs (`PlainRTPTransport`), pumped in memory on a virtual clock: audio both
/// ways, symmetric latching to a NAT's address once, RTP injection refused mid-call,
/// malformed input dropped without harm.
@Suite struct PlainRTPLegTests {
    static let natOutside = ICETransportAddress(ip: .ipv4(0xCB00_7105), port: 61_000)  // 203.0.113.5
    static let attacker = ICETransportAddress(ip: .ipv4(0xC633_6409), port: 7_000)  // 198.51.100.9

    static func pair(codecs: [AudioCodec] = [.pcmu], options: PlainRTPTransport.Options = .init(),
                     answererOptions: PlainRTPTransport.Options? = nil) throws -> LegPairHarness {
        var a = MediaLegConfiguration(plainRTP: options)
        var b = MediaLegConfiguration(plainRTP: answererOptions ?? options)
        a.codecs = codecs
        b.codecs = codecs
        return try LegPairHarness(offererConfiguration: a, answererConfiguration: b)
    }

    /// A plain RTP packet of `payloadType` with 160 bytes of μ-law silence.
    static func rtp(payloadType: UInt8 = 0, sequence: UInt16, ssrc: UInt32 = 0xBAD) throws -> [UInt8] {
        try RTPPacket(payloadType: payloadType, sequenceNumber: sequence, timestamp: UInt32(sequence) &* 160, ssrc: ssrc,
                      payload: [UInt8](repeating: 0xFF, count: 160)[...]).serialized()
    }

    static func dominant(_ samples: [Int16]) -> Double {
        FrequencyAnalysis.dominantFrequency(samples: Array(samples.suffix(48_000)), sampleRate: 48_000) ?? 0
    }

    @Test(arguments: [[AudioCodec.pcmu], [.pcma], [.opus]])
    func carriesToneBothWays(codecs: [AudioCodec]) throws {
        var harness = try Self.pair(codecs: codecs)
        let offer = try harness.offerer.makeOffer()
        #expect(offer.contains("m=audio 40000 RTP/AVP "))
        #expect(offer.contains("c=IN IP4 127.0.0.1"))
        for webRTCOnly in ["a=ice-ufrag", "a=fingerprint", "a=setup", "a=candidate", "a=group:BUNDLE", "a=ice-lite", "a=extmap"] {
            #expect(!offer.contains(webRTCOnly), "\(webRTCOnly) in a plain RTP offer")
        }
        let answer = try harness.answerer.answer(offer: offer)
        #expect(answer.contains("m=audio 50000 RTP/AVP "))
        try harness.offerer.acceptAnswer(answer)
        try harness.startBoth()
        // No handshake: connected as soon as started.
        #expect(harness.offerer.state == .connected)
        #expect(harness.answerer.state == .connected)
        harness.run(for: .seconds(3), audio: true)
        let a = harness.offerer.statistics
        let b = harness.answerer.statistics
        #expect(a.srtpProfile == nil)
        #expect(a.framesSent >= 149 && b.framesSent >= 149)
        #expect(a.framesPlayedFromPackets >= 140, "\(a)")
        #expect(b.framesPlayedFromPackets >= 140, "\(b)")
        #expect(abs(Self.dominant(harness.offererReceived) - 1000) < 10)
        #expect(abs(Self.dominant(harness.answererReceived) - 440) < 10)
        #expect(harness.drops("offerer").isEmpty, "\(harness.drops("offerer"))")
        #expect(harness.drops("answerer").isEmpty, "\(harness.drops("answerer"))")
        // The first packets came from the signalled addresses: latched there.
        #expect(b.plainRTP == PlainRTPTransport.Statistics(
            signalledAddress: harness.offererAddress, mediaAddress: harness.offererAddress, latched: true, rtcpMux: true))
        #expect(a.plainRTP?.mediaAddress == harness.answererAddress)
        #expect(b.iceState == .new && b.selectedPair == nil)
    }

    @Test func latchesOnceToTheNATSource() throws {
        var harness = try Self.pair()
        harness.nat = (Self.natOutside, 0)
        try harness.negotiate()
        try harness.startBoth()
        harness.run(for: .seconds(3), audio: true)
        let b = harness.answerer.statistics
        // The offerer's SDP names 127.0.0.1:40000, its packets come from the NAT's address.
        #expect(b.plainRTP?.signalledAddress == harness.offererAddress)
        #expect(b.plainRTP?.mediaAddress == Self.natOutside)
        #expect(b.plainRTP?.latched == true)
        // Before the latch the answerer sent to the signalled address, which the NAT does not
        // let through; after it, both ways carry the tone.
        #expect((harness.nat?.unreachableDrops ?? 0) <= 2, "\(harness.nat?.unreachableDrops ?? 0) sent to the NAT's inside")
        #expect(abs(Self.dominant(harness.offererReceived) - 1000) < 10)
        #expect(abs(Self.dominant(harness.answererReceived) - 440) < 10)
        #expect(harness.drops("answerer").isEmpty, "\(harness.drops("answerer"))")
    }

    @Test func refusesASecondSourceMidCall() throws {
        var harness = try Self.pair()
        harness.nat = (Self.natOutside, 0)
        try harness.negotiate()
        try harness.startBoth()
        harness.run(for: .seconds(1), audio: true)
        #expect(harness.answerer.statistics.plainRTP?.mediaAddress == Self.natOutside)
        // Within the latching window still, and later: valid RTP of the negotiated codec from
        // elsewhere is dropped and counted, and never moves the media.
        for sequence in UInt16(1)...5 { harness.inject(try Self.rtp(sequence: sequence), from: Self.attacker, to: harness.answererAddress) }
        harness.inject(try Self.rtp(sequence: 6), from: harness.offererAddress, to: harness.answererAddress)
        harness.run(for: .seconds(5), audio: true)
        for sequence in UInt16(7)...9 { harness.inject(try Self.rtp(sequence: sequence), from: Self.attacker, to: harness.answererAddress) }
        harness.run(for: .seconds(1), audio: true)
        let b = harness.answerer.statistics
        #expect(b.dropped[.foreignSource] == 9, "\(b.dropped)")
        #expect(b.plainRTP?.mediaAddress == Self.natOutside)
        #expect(harness.drops("answerer").allSatisfy { $0.0 == .foreignSource })
        #expect(harness.answerer.state == .connected)
        // The injected SSRC never reached the jitter buffer: the offerer's tone plays on.
        #expect(abs(Self.dominant(harness.answererReceived) - 440) < 10)
        #expect(b.rtp.packetsReceived >= 300, "\(b.rtp)")
    }

    @Test func garbageCannotLatch() throws {
        var harness = try Self.pair()
        harness.nat = (Self.natOutside, 0)
        try harness.negotiate()
        try harness.startBoth()
        // First in: from the attacker, a payload type that was not negotiated and a packet
        // too short to be RTP. Neither latches; the NAT'd offerer's real audio does.
        harness.inject(try Self.rtp(payloadType: 18, sequence: 1), from: Self.attacker, to: harness.answererAddress)
        harness.inject([0x80, 0x00, 0x01], from: Self.attacker, to: harness.answererAddress)
        harness.run(for: .seconds(2), audio: true)
        let b = harness.answerer.statistics
        #expect(b.dropped[.unknownPayloadType] == 1)
        #expect(b.dropped[.malformedRTP] == 1)
        #expect(b.plainRTP?.mediaAddress == Self.natOutside)
        #expect(abs(Self.dominant(harness.answererReceived) - 440) < 10)
    }

    @Test func withoutPacketsInTheWindowTheSignalledAddressStands() throws {
        var harness = try Self.pair(options: .init(latchingWindow: .seconds(1)))
        try harness.negotiate()
        try harness.startBoth()
        harness.run(for: .seconds(2))
        harness.inject(try Self.rtp(sequence: 1), from: Self.natOutside, to: harness.answererAddress)
        harness.run(for: .milliseconds(50))
        let b = harness.answerer.statistics
        #expect(b.dropped[.foreignSource] == 1)
        #expect(b.plainRTP == PlainRTPTransport.Statistics(
            signalledAddress: harness.offererAddress, mediaAddress: harness.offererAddress, latched: false, rtcpMux: true))
    }

    @Test func malformedRTPIsDroppedCleanly() throws {
        var harness = try Self.pair()
        try harness.negotiate()
        try harness.startBoth()
        harness.run(for: .seconds(1), audio: true)
        let from = harness.offererAddress, to = harness.answererAddress
        var header = Array(try Self.rtp(sequence: 100).prefix(20))
        header[0] = 0x8F  // fifteen CSRCs announced, two there
        harness.inject(header, from: from, to: to)
        harness.inject([0x80], from: from, to: to)  // one byte
        harness.inject(Array(try Self.rtp(sequence: 101).prefix(11)), from: from, to: to)  // short of a header
        harness.inject(try Self.rtp(payloadType: 99, sequence: 102), from: from, to: to)  // not negotiated
        harness.inject([0x80, 200, 0, 1, 0, 0], from: from, to: to)  // RTCP sender report cut short
        harness.inject([], from: from, to: to)
        harness.inject([0x00, 0x01, 0x00, 0x00], from: from, to: to)  // STUN: no ICE here
        harness.inject([22, 254, 253, 0], from: from, to: to)  // DTLS: none here
        harness.inject([0xFF, 0x00], from: from, to: to)
        harness.run(for: .seconds(2), audio: true)
        let b = harness.answerer.statistics
        #expect(b.dropped[.malformedRTP] == 4, "\(b.dropped)")
        #expect(b.dropped[.unknownPayloadType] == 1)
        #expect(b.dropped[.empty] == 1)
        #expect(b.dropped[.stun] == 1)
        #expect(b.dropped[.dtls] == 1)
        #expect(b.dropped[.unknownKind] == 1)
        #expect(harness.answerer.state == .connected)
        #expect(b.plainRTP?.mediaAddress == harness.offererAddress)
        #expect(abs(Self.dominant(harness.answererReceived) - 440) < 10)
    }

    /// Where SDES plugs in: keys given to both ends (as a=crypto lines will carry them)
    /// make it SRTP; a forged packet from the latched address fails authentication.
    @Test func srtpWithSignalledKeys() throws {
        let profile = SRTPProfile.aes128CmHmacSha1_80
        let keyA = (0..<profile.keyMaterialLength).map { UInt8($0) }
        let keyB = (0..<profile.keyMaterialLength).map { UInt8(200 - $0) }
        var harness = try Self.pair(
            options: .init(keys: .init(profile: profile, localKeyMaterial: keyA, remoteKeyMaterial: keyB)),
            answererOptions: .init(keys: .init(profile: profile, localKeyMaterial: keyB, remoteKeyMaterial: keyA)))
        try harness.negotiate()
        try harness.startBoth()
        harness.run(for: .seconds(2), audio: true)
        var forged = try Self.rtp(sequence: 500)
        forged += [UInt8](repeating: 0, count: profile.rtpTagLength)
        harness.inject(forged, from: harness.offererAddress, to: harness.answererAddress)
        harness.run(for: .seconds(1), audio: true)
        let b = harness.answerer.statistics
        #expect(b.srtpProfile == "SRTP_AES128_CM_SHA1_80")
        #expect(b.dropped[.srtpAuthentication] == 1, "\(b.dropped)")
        #expect(b.srtpInbound.unprotected >= 140)
        #expect(b.rtcpReportsReceived >= 1)
        #expect(abs(Self.dominant(harness.answererReceived) - 440) < 10)
        #expect(abs(Self.dominant(harness.offererReceived) - 1000) < 10)
    }

    @Test func anSDPWithoutAnAddressIsRefused() throws {
        var harness = try Self.pair()
        let offer = try harness.offerer.makeOffer().replacing("c=IN IP4 127.0.0.1", with: "c=IN IP4 0.0.0.0")
        #expect(throws: MediaLegError.self) { _ = try harness.answerer.answer(offer: offer) }
    }
}

