import ParleyCrypto
import ParleyICECore
import ParleyMediaCore
@testable import ParleyMediaLegCore
import ParleySTUN
import ParleyTestSupport
import Testing

/// Hostile and broken input against a connected leg, on the in-memory network: each case
/// is dropped and counted, or fails the leg with a clear reason; audio keeps flowing when
/// the leg survives.
@Suite struct MediaLegBadInputTests {
    static func connectedPair(profiles: [SRTPProtectionProfile] = [.aeadAES128GCM]) throws -> LegPairHarness {
        var harness = try MediaLegCoreTests.pair(offerer: .full, answerer: .lite, profiles: profiles)
        try harness.negotiate()
        try harness.startBoth()
        harness.run(for: .seconds(1))
        try #require(harness.offerer.state == .connected && harness.answerer.state == .connected)
        harness.run(for: .seconds(1), audio: true)
        return harness
    }

    /// Audio still arrives at the lite side (the server): the last second carries the tone.
    static func expectAudioFlows(_ harness: inout LegPairHarness, sourceLocation: SourceLocation = #_sourceLocation) {
        let before = harness.answerer.statistics.framesPlayedFromPackets
        harness.run(for: .seconds(1), audio: true)
        let played = harness.answerer.statistics.framesPlayedFromPackets - before
        #expect(played >= 45, "only \(played) frames played after the bad input", sourceLocation: sourceLocation)
        let heard = FrequencyAnalysis.dominantFrequency(samples: Array(harness.answererReceived.suffix(48_000)), sampleRate: 48_000) ?? 0
        #expect(abs(heard - 440) < 10, sourceLocation: sourceLocation)
        #expect(harness.answerer.state == .connected, sourceLocation: sourceLocation)
    }

    @Test func garbageOfEveryKindIsDroppedAndCounted() throws {
        var harness = try Self.connectedPair()
        var random = SeededGenerator(seed: 7)
        for index in 0..<2000 {
            var bytes = random.bytes(1 + random.below(300))
            // Cover every RFC 7983 range: STUN, DTLS, RTP/RTCP, and the gaps between them.
            let firsts: [UInt8] = [0, 1, 3, 5, 19, 20, 22, 23, 63, 64, 127, 128, 144, 191, 192, 255]
            bytes[0] = firsts[index % firsts.count]
            harness.inject(bytes, from: harness.offererAddress, to: harness.answererAddress)
        }
        harness.inject([], from: harness.offererAddress, to: harness.answererAddress)
        harness.run(for: .milliseconds(5))
        let dropped = harness.answerer.statistics.dropped
        #expect(dropped[.empty] == 1)
        #expect((dropped[.unknownKind] ?? 0) > 500)
        #expect((dropped[.stun] ?? 0) > 300)
        #expect((dropped[.srtpAuthentication] ?? 0) + (dropped[.srtpMalformed] ?? 0) > 300)
        Self.expectAudioFlows(&harness)
    }

    @Test func stunWithWrongCredentialsOrBadFingerprintIsRefused() throws {
        var harness = try Self.connectedPair()
        // A check signed with the wrong password: the lite agent answers 401 and changes nothing.
        var request = STUNMessage(class: .request, method: .binding, transactionID: STUNTransactionID(bytes: Array(repeating: 7, count: 12))!)
        try request.append(.username("wrong:user"))
        try request.append(.priority(1))
        let wrong = try request.encoded(addingIntegrity: [.sha1(key: .shortTerm(password: "not-the-password-at-all"))], fingerprint: true)
        harness.recordSends = true
        harness.inject(wrong, from: harness.offererAddress, to: harness.answererAddress)
        harness.run(for: .milliseconds(2))
        let answers = harness.sent.filter { $0.side == "answerer" }.compactMap { try? STUNMessage(decoding: $0.bytes) }
        #expect(answers.contains { $0.messageClass == .error && $0.transactionID == request.transactionID }, "no 401 for the wrong credentials")
        // A check whose FINGERPRINT was corrupted is dropped without an answer.
        var corrupted = wrong
        corrupted[corrupted.count - 1] ^= 0xFF
        harness.inject(corrupted, from: harness.offererAddress, to: harness.answererAddress)
        harness.run(for: .milliseconds(20))
        let drops = harness.drops("answerer")
        #expect(drops.contains { $0.0 == .stun && $0.1.contains("badFingerprint") }, "\(drops)")
        #expect(harness.answerer.iceState == .connected)
        Self.expectAudioFlows(&harness)
    }

    @Test func srtpWithBadTagsReplaysAndTruncationsIsDropped() throws {
        var harness = try Self.connectedPair()
        var captured: [[UInt8]] = []
        let to = harness.answererAddress
        harness.filter = { bytes, _, destination in
            if destination == to, let first = bytes.first, (128...191).contains(first), bytes.count > 100, captured.count < 20 {
                captured.append(bytes)
            }
            return bytes
        }
        harness.run(for: .milliseconds(500), audio: true)
        harness.filter = nil
        harness.run(for: .milliseconds(10))  // let the last real packet land first
        try #require(captured.count == 20)
        let authBefore = harness.answerer.statistics.srtpInbound.authFailures
        let droppedBefore = harness.answerer.statistics.dropped.values.reduce(0, +)
        let playedBefore = harness.answerer.statistics.jitterBuffer.received
        // Bad tags: flip one bit in the last byte (the tag) of fresh packets.
        for packet in captured.prefix(5) {
            var bad = packet
            bad[2] ^= 0x40  // a new sequence number, so it is not a replay
            bad[bad.count - 1] ^= 0x01
            harness.inject(bad, from: harness.offererAddress, to: harness.answererAddress)
        }
        // Replays: packets already delivered once.
        for packet in captured.suffix(5) { harness.inject(packet, from: harness.offererAddress, to: harness.answererAddress) }
        // Truncations of one packet at every length.
        for length in 1..<captured[0].count { harness.inject(Array(captured[0].prefix(length)), from: harness.offererAddress, to: harness.answererAddress) }
        harness.run(for: .milliseconds(5))
        let statistics = harness.answerer.statistics
        #expect(statistics.srtpInbound.authFailures - authBefore >= 5)
        #expect((statistics.dropped[.srtpReplay] ?? 0) >= 5)
        // Every injected packet was dropped (truncated replays count as replays: libsrtp
        // checks the index before the tag), and none reached the jitter buffer.
        #expect(statistics.dropped.values.reduce(0, +) - droppedBefore == UInt64(10 + captured[0].count - 1), "\(statistics.dropped)")
        #expect(statistics.jitterBuffer.received == playedBefore)
        Self.expectAudioFlows(&harness)
    }

    /// Issue 14 item 5: the full side's nominating check, captured and re-sent from another
    /// address, used to move the lite side's media there for the rest of the call.
    @Test func aReplayedNominationFromAnotherAddressMovesNoMedia() throws {
        var harness = try MediaLegCoreTests.pair(offerer: .full, answerer: .lite, profiles: [.aeadAES128GCM])
        var nominations: [[UInt8]] = []
        let to = harness.answererAddress
        harness.filter = { bytes, _, destination in
            if destination == to, let message = try? STUNMessage(decoding: bytes), message.messageClass == .request, message.useCandidate {
                nominations.append(bytes)
            }
            return bytes
        }
        try harness.negotiate()
        try harness.startBoth()
        harness.run(for: .seconds(1))
        harness.filter = nil
        try #require(harness.offerer.state == .connected && harness.answerer.state == .connected)
        let captured = try #require(nominations.first)
        harness.run(for: .seconds(1), audio: true)

        let replayer = ICETransportAddress(ip: .ipv4(0x7F00_0042), port: 45_000)
        var toReplayer = 0
        harness.filter = { bytes, _, destination in
            if destination == replayer { toReplayer += 1 }
            return bytes
        }
        harness.inject(captured, from: replayer, to: harness.answererAddress)
        harness.run(for: .milliseconds(5))
        #expect(harness.answerer.selectedPair?.remote == harness.offererAddress)
        #expect(harness.drops("answerer").contains { $0.0 == .stun && $0.1.contains("replayedTransaction") }, "\(harness.drops("answerer"))")
        // The offerer keeps hearing the answerer's 1 kHz tone.
        let before = harness.offerer.statistics.framesPlayedFromPackets
        harness.run(for: .seconds(2), audio: true)
        #expect(harness.offerer.statistics.framesPlayedFromPackets - before >= 90)
        let heard = FrequencyAnalysis.dominantFrequency(samples: Array(harness.offererReceived.suffix(48_000)), sampleRate: 48_000) ?? 0
        #expect(abs(heard - 1000) < 10)
        // Nothing went to the replayer, not even an answer.
        #expect(toReplayer == 0)
        harness.filter = nil
        Self.expectAudioFlows(&harness)
    }

    @Test func mediaFromAnAddressICEHasNotValidatedIsDropped() throws {
        var harness = try Self.connectedPair()
        let stranger = ICETransportAddress(ip: .ipv4(0x7F00_0009), port: 9999)
        harness.inject([0x80, 0x6F] + Array(repeating: 0, count: 100), from: stranger, to: harness.answererAddress)
        harness.inject([22, 0xFE, 0xFD] + Array(repeating: 0, count: 60), from: stranger, to: harness.answererAddress)
        harness.run(for: .milliseconds(5))
        #expect(harness.answerer.statistics.dropped[.unvalidatedSource] == 2)
        Self.expectAudioFlows(&harness)
    }

    @Test func aCertificateThatDoesNotMatchTheSDPFingerprintFailsTheLeg() throws {
        var harness = try MediaLegCoreTests.pair(offerer: .full, answerer: .lite)
        let offer = try harness.offerer.makeOffer()
        let answer = try harness.answerer.answer(offer: offer)
        // The answer claims a different certificate than the one the answerer will present.
        let impostor = try DTLSCertificate.generate()
        let lines = answer.split(separator: "\r\n", omittingEmptySubsequences: false).map { line in
            line.hasPrefix("a=fingerprint:") ? "a=fingerprint:\(impostor.fingerprint.sdpValue)" : String(line)
        }
        try harness.offerer.acceptAnswer(lines.joined(separator: "\r\n"))
        try harness.startBoth()
        harness.run(for: .seconds(2))
        #expect(harness.offerer.state == .failed)
        let offererFailure = harness.offerer.failure
        let failure = try #require(offererFailure)
        #expect(failure.kind == .fingerprint, "\(failure)")
        #expect(failure.description.contains("fingerprint"))
        #expect(harness.answerer.state != .connected)
    }

    @Test(arguments: [false, true])
    func aPeerThatStopsAnsweringFailsTheLegWithin30Seconds(silenceTheDevice: Bool) throws {
        var harness = try Self.connectedPair()
        let silenced = silenceTheDevice ? harness.offererAddress : harness.answererAddress
        harness.filter = { bytes, from, _ in from == silenced ? nil : bytes }
        let start = harness.now
        var failedAfter: Duration?
        for _ in 0..<35 {
            harness.run(for: .seconds(1))
            let watcher = silenceTheDevice ? harness.answerer.state : harness.offerer.state
            if watcher == .failed { failedAfter = start.duration(to: harness.now); break }
        }
        let after = try #require(failedAfter, "the leg did not notice the silent peer")
        #expect(after <= .seconds(31))
        let watcherFailure = silenceTheDevice ? harness.answerer.failure : harness.offerer.failure
        let failure = try #require(watcherFailure)
        #expect(failure.kind == .ice)
        #expect(failure.detail.contains("consent"))
    }

    @Test func aLegThatNeverConnectsTimesOut() throws {
        var harness = try MediaLegCoreTests.pair(offerer: .full, answerer: .lite)
        try harness.negotiate()
        harness.filter = { _, _, _ in nil }
        try harness.startBoth()
        harness.run(for: .seconds(31))
        #expect(harness.offerer.state == .failed)
        #expect(harness.answerer.state == .failed)
        #expect(harness.answerer.failure?.kind == .timeout)
    }

    @Test func malformedSDPIsRefusedWithAClearError() throws {
        var harness = try MediaLegCoreTests.pair(offerer: .full, answerer: .lite)
        do {
            _ = try harness.answerer.answer(offer: "v=0\r\nthis is not SDP")
            Issue.record("garbage SDP was accepted")
        } catch {
            #expect(error.kind == .sdp, "\(error)")
        }
        var random = SeededGenerator(seed: 3)
        let offer = try harness.offerer.makeOffer()
        let bytes = Array(offer.utf8)
        for _ in 0..<300 {
            var mangled = bytes
            for _ in 0..<4 { mangled[random.below(mangled.count)] = random.byte() }
            var fresh = try MediaLegCoreTests.pair(offerer: .full, answerer: .lite)
            _ = try? fresh.answerer.answer(offer: String(decoding: mangled, as: UTF8.self))
            _ = try? fresh.answerer.answer(offer: String(decoding: bytes.prefix(random.below(bytes.count)), as: UTF8.self))
        }
        do {
            try harness.answerer.acceptAnswer(offer)
            Issue.record("an answer without an offer was accepted")
        } catch {
            #expect(error.kind == .state)
        }
    }
}
