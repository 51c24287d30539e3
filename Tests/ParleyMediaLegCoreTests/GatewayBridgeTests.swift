import ParleyICECore
import ParleyMediaCore
import ParleyMediaLegCore
import ParleyRTP
import ParleyTestSupport
import Testing

/// The gateway topology's audio on a virtual clock (`GatewayHarness`): tones transcoded
/// both ways and checked by frequency and level, the headers of what it sends, the relay
/// path for matching codecs, loss, malformed input, and RTCP kept per leg.
@Suite struct GatewayBridgeTests {
    typealias H = GatewayHarness

    @Test(arguments: ["PCMU", "PCMA"])
    func opusFromTheAppArrivesAsG711AndG711ArrivesAsOpus(codec: String) throws {
        let h = try H(phoneCodec: codec)
        try h.run(milliseconds: 4000)
        #expect(h.bridge.path == .transcode)
        #expect(h.serverStatistics("web")?.codec == "opus/48000/2")
        #expect(h.serverStatistics("sip")?.codec == "\(codec)/8000")
        // The app's 1 kHz tone reaches the phone as G.711, the phone's 440 Hz the app as
        // Opus, each at the level it was sent within a few dB.
        #expect(abs(H.dominant(h.phone.heard) - 1000) < 10, "\(H.dominant(h.phone.heard))")
        #expect(abs(H.dominant(h.device.heard) - 440) < 10, "\(H.dominant(h.device.heard))")
        #expect(abs(H.level(h.phone.heard, at: 1000) - H.sentLevel) < 3, "\(H.level(h.phone.heard, at: 1000)) vs \(H.sentLevel)")
        #expect(abs(H.level(h.device.heard, at: 440) - H.sentLevel) < 3, "\(H.level(h.device.heard, at: 440)) vs \(H.sentLevel)")

        // What the phone got: one stream in its codec, 20 ms (160 samples) a packet,
        // numbered and timed without a gap, the marker on the first packet only.
        let audio = h.phone.received.filter { $0.packet.payloadType == h.phone.payloadType }
        #expect(audio.count >= 190 && audio.count == h.phone.received.count, "\(audio.count) of \(h.phone.received.count)")
        #expect(Set(audio.map(\.packet.ssrc)).count == 1)
        #expect(audio.first?.packet.ssrc != h.phone.ssrc)
        #expect(audio.allSatisfy { $0.packet.payload.count == 160 })
        #expect(audio.first?.packet.marker == true)
        #expect(audio.dropFirst().allSatisfy { !$0.packet.marker })
        for (a, b) in zip(audio, audio.dropFirst()) {
            #expect(b.packet.sequenceNumber == a.packet.sequenceNumber &+ 1)
            #expect(b.packet.timestamp == a.packet.timestamp &+ 160)
            #expect(b.at - a.at == 20)
        }
        // What the app got: Opus at 48 kHz, 960 a packet, numbered without a gap.
        let opus = h.device.arrivals
        #expect(opus.count >= 190)
        #expect(opus.first?.marker == true && opus.dropFirst().allSatisfy { !$0.marker })
        for (a, b) in zip(opus, opus.dropFirst()) {
            #expect(b.sequenceNumber == a.sequenceNumber &+ 1 && b.timestamp == a.timestamp &+ 960)
        }
        for leg in ["web", "sip"] {
            let counters = try #require(h.bridge.counters(of: leg))
            #expect(counters.framesTranscoded >= 190, "\(leg): \(counters)")
            #expect(counters.packetsRelayed == 0 && counters.datagramsDropped == 0 && counters.encodeFailures == 0)
        }
        #expect(h.topologyActions.contains(.forwarded(from: "web", to: "sip")))
        #expect(h.topologyActions.contains(.forwarded(from: "sip", to: "web")))
        #expect(h.bridge.ticks >= 199 && h.bridge.skippedTicks == 0)
    }

    @Test func eachLegKeepsItsOwnRTCP() throws {
        let h = try H()
        try h.run(milliseconds: 6000)
        // The phone gets the SIP leg's own reports, about the stream it receives from that
        // leg (RTCP on the next port: its offer has no rtcp-mux).
        let reports = try h.phone.rtcpReceived.map { try RTCPCompoundPacket(parsing: $0) }
        #expect(!reports.isEmpty)
        let sipSSRC = try #require(h.phone.received.first?.packet.ssrc)
        for report in reports {
            guard case .senderReport(let sender) = report.packets.first else { Issue.record("not a sender report first"); continue }
            #expect(sender.ssrc == sipSSRC)
        }
        #expect((h.device.core.statistics.rtcpReportsReceived) > 0)
        // The phone's own report is taken by the SIP leg and goes nowhere else.
        let receiverReport = RTCPCompoundPacket(packets: [
            .receiverReport(RTCPReceiverReport(ssrc: h.phone.ssrc, reportBlocks: [])),
            .sourceDescription(RTCPSourceDescription(chunks: [.init(ssrc: h.phone.ssrc, items: [.init(type: .cname, text: "phone")])])),
        ])
        let before = h.serverStatistics("sip")!.rtcpReportsReceived
        let actions = h.bridge.receive(try receiverReport.serialized(), from: h.phone.address, on: "sip", local: h.sipServerAddress, now: h.now)
        #expect(h.serverStatistics("sip")!.rtcpReportsReceived == before + 1)
        #expect(!actions.contains { if case .send = $0 { true } else { false } }, "\(actions)")
    }

    @Test(arguments: [false, true])
    func theSameCodecOnBothLegsIsRelayedInPlace(inPlace: Bool) throws {
        let h = try H(phoneCodec: "opus", inPlace: inPlace)
        try h.run(milliseconds: 3000)
        #expect(h.bridge.path == .relay)
        for leg in ["web", "sip"] {
            #expect(h.bridge.withLeg(leg) { (core: inout MediaLegCore) in core.mediaMode } == .forward)
            let counters = try #require(h.bridge.counters(of: leg))
            #expect(counters.packetsRelayed >= 140 && counters.framesTranscoded == 0, "\(leg): \(counters)")
            // Nothing decoded on the server.
            #expect(h.serverStatistics(leg)?.framesPlayedFromPackets == 0)
        }
        #expect(abs(H.dominant(h.phone.heard) - 1000) < 10)
        #expect(abs(H.dominant(h.device.heard) - 440) < 10)
        let forwarded = h.topologyActions.filter { if case .forwarded = $0 { true } else { false } }.count
        #expect(h.sentFromBuffer == (inPlace ? forwarded : 0), "\(h.sentFromBuffer) of \(forwarded)")
        // The phone's stream is the SIP leg's (its own SSRC and numbering), not the app's.
        let audio = h.phone.received.map(\.packet)
        #expect(Set(audio.map(\.ssrc)).count == 1 && audio.allSatisfy { $0.payloadType == h.phone.payloadType })
        for (a, b) in zip(audio, audio.dropFirst()) { #expect(b.sequenceNumber == a.sequenceNumber &+ 1) }
    }

    @Test func matchingCodecsAreTranscodedWhenRelayIsOff() throws {
        var configuration = GatewayBridge<String>.Configuration()
        configuration.relayWhenCodecsMatch = false
        let h = try H(phoneCodec: "opus", configuration: configuration)
        try h.run(milliseconds: 3000)
        #expect(h.bridge.path == .transcode)
        #expect(h.bridge.counters(of: "sip")!.framesTranscoded >= 140)
        #expect(abs(H.dominant(h.phone.heard) - 1000) < 10)
        #expect(abs(H.dominant(h.device.heard) - 440) < 10)
    }

    @Test func theTonesSurviveFivePercentLossOnEachSide() throws {
        let h = try H()
        var random = SeededGenerator(seed: 5)
        var lost = 0, offered = 0
        h.lose = { bytes, _, to in
            // RTP toward the gateway only: the handshakes are not what is tested here.
            guard to == h.webServerAddress || to == h.sipServerAddress, let first = bytes.first, (128...191).contains(first),
                  bytes.count > 1, !(192...223).contains(bytes[1]) else { return false }
            offered += 1
            guard Double.random(in: 0..<1, using: &random) < 0.05 else { return false }
            lost += 1
            return true
        }
        try h.run(milliseconds: 5000)
        #expect(lost >= 10 && Double(lost) / Double(offered) < 0.1, "\(lost) of \(offered)")
        #expect(abs(H.dominant(h.phone.heard) - 1000) < 10, "\(H.dominant(h.phone.heard))")
        #expect(abs(H.dominant(h.device.heard) - 440) < 10, "\(H.dominant(h.device.heard))")
        #expect(abs(H.level(h.phone.heard, at: 1000) - H.sentLevel) < 6)
        #expect(abs(H.level(h.device.heard, at: 440) - H.sentLevel) < 6)
        // The losses were concealed on the server, not sent on as gaps: the phone still got
        // a packet every 20 ms.
        let web = try #require(h.serverStatistics("web"))
        let sip = try #require(h.serverStatistics("sip"))
        #expect(web.framesConcealed + web.playout.fecRecovered + web.redRecovered > 0, "\(web)")
        #expect(sip.framesConcealed > 0, "\(sip)")
        let audio = h.phone.received
        for (a, b) in zip(audio, audio.dropFirst()) { #expect(b.packet.sequenceNumber == a.packet.sequenceNumber &+ 1) }
    }

    @Test func malformedDatagramsAreDroppedAndCounted() throws {
        let h = try H()
        try h.run(milliseconds: 1000)
        func rtp(_ payloadType: UInt8, _ payload: [UInt8], sequence: UInt16 = 7) throws -> [UInt8] {
            try RTPPacket(payloadType: payloadType, sequenceNumber: sequence, timestamp: 1, ssrc: h.phone.ssrc, payload: payload[...]).serialized()
        }
        var truncatedCSRCs = try rtp(0, [1, 2, 3])
        truncatedCSRCs[0] = 0x8f  // fifteen CSRCs that are not there
        let malformedForSIP: [[UInt8]] = [
            [],  // empty
            [0x80],  // one byte
            [0x40, 0x00, 0x00, 0x01, 0, 0, 0, 0, 0, 0, 0, 1],  // version 1: neither STUN, DTLS nor RTP
            truncatedCSRCs,
            try rtp(18, [UInt8](repeating: 0, count: 20)),  // G.729: not negotiated
            try rtp(h.phone.eventPayloadType, [5, 0x8a, 0]),  // a telephone-event block of 3 bytes
            [0x80, 0xc8, 0x00, 0x40, 1, 2, 3],  // RTCP whose length runs past the datagram
        ]
        for datagram in malformedForSIP { h.inject(datagram, from: h.phone.address, to: "sip") }
        // On the WebRTC leg: SRTP that fails authentication and STUN that is not STUN.
        let forgedSRTP = try RTPPacket(payloadType: 111, sequenceNumber: 60_000, timestamp: 1, ssrc: 1,
                                       payload: [UInt8](repeating: 0xAB, count: 40)[...]).serialized()
        let malformedForWeb: [[UInt8]] = [forgedSRTP, [0x00, 0x01, 0x00], [0xff, 0xff]]
        for datagram in malformedForWeb { h.inject(datagram, from: h.device.address, to: "web") }
        // Valid RTP from elsewhere: a foreign source for the latched SIP leg.
        h.inject(try rtp(0, [UInt8](repeating: 0xff, count: 160)), from: H.address(6666), to: "sip")
        // And a burst of random bytes on each leg.
        var random = SeededGenerator(seed: 99)
        var garbage = (sip: 0, web: 0)
        for _ in 0..<200 {
            var bytes = (0..<Int.random(in: 0..<300, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
            if let first = bytes.first, (128...191).contains(first), bytes.count > 1 { bytes[1] = 0x12 }  // never a negotiated type
            h.inject(bytes, from: h.phone.address, to: "sip")
            garbage.sip += 1
            // DTLS records go to OpenSSL, which discards a bad one without a word (RFC 6347
            // §4.1.2.7): not counted as a drop, so not sent here.
            if let first = bytes.first, (20...63).contains(first) { continue }
            h.inject(bytes, from: h.device.address, to: "web")
            garbage.web += 1
        }
        try h.run(milliseconds: 2000)
        let sipDrops = h.drops("sip")
        let webDrops = h.drops("web")
        #expect(sipDrops.count == malformedForSIP.count + 1 + garbage.sip, "\(sipDrops.count)")
        #expect(webDrops.count == malformedForWeb.count + garbage.web, "\(webDrops.count)")
        #expect(sipDrops.contains(.empty) && sipDrops.contains(.malformedRTP) && sipDrops.contains(.unknownPayloadType)
                && sipDrops.contains(.unknownKind) && sipDrops.contains(.foreignSource), "\(Set(sipDrops))")
        #expect(webDrops.contains(.srtpAuthentication), "\(Set(webDrops))")
        #expect(h.bridge.counters(of: "sip")?.datagramsDropped == UInt64(sipDrops.count))
        #expect(h.bridge.counters(of: "web")?.datagramsDropped == UInt64(webDrops.count))
        // Nothing else changed: both legs up, no event invented, the tones still through.
        #expect(h.serverStatistics("sip")?.state == .connected && h.serverStatistics("web")?.state == .connected)
        #expect(h.reportedByTopology().isEmpty)
        #expect(abs(H.dominant(h.phone.heard) - 1000) < 10)
        #expect(abs(H.dominant(h.device.heard) - 440) < 10)
    }

    @Test func joinsTwoLegsAndGoesBackToUndecidedWhenOneLeaves() throws {
        let h = try H()
        #expect(throws: MediaTopologyError.self) { try h.bridge.join("nobody") }
        try h.run(milliseconds: 500)
        #expect(h.bridge.path == .transcode)
        let removed = try #require(h.bridge.remove("sip", now: h.now))
        #expect(removed.actions.contains { if case .stateChanged(leg: "sip", .closed) = $0 { true } else { false } })
        #expect(h.bridge.path == .undecided && h.bridge.joined == ["web"])
        #expect(h.bridge.remove("sip", now: h.now) == nil)
        // The clock runs on for the leg that stays; nothing is sent to it from nobody.
        let sent = h.bridge.counters(of: "web")!.framesTranscoded
        try h.run(milliseconds: 200)
        #expect(h.bridge.counters(of: "web")!.framesTranscoded == sent)
        _ = h.bridge.remove("web", now: h.now)
        #expect(h.bridge.nextTopologyDeadline == nil)
    }
}
