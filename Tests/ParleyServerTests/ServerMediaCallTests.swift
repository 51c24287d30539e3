import Foundation
import ParleyCrypto
import ParleyMedia
import ParleyMediaLeg
import ParleyNet
import ParleyServer
import ParleySignaling
import ParleyStore
import Testing

extension RealTimeMediaTests {
    /// A whole app-to-app call through a real server: two raw protocol clients, each with a
    /// real device `MediaLeg` (full ICE, DTLS-SRTP, Opus) on loopback, the server anchoring
    /// both legs in relay mode. Checks the event order of docs/protocol.md on both sides,
    /// the tones heard both ways, how much audio arrived, and the stored record.
    @Suite struct ServerMediaCallTests {
        static func deviceLeg(on loop: EventLoop) throws -> MediaLeg {
            var configuration = MediaLegConfiguration(iceMode: .full, certificate: try DTLSCertificate.generate())
            configuration.codecs = [.opus]
            return try MediaLeg(configuration: configuration, bindingTo: [.ipv4Loopback(port: 0)], on: loop)
        }

        @Test func appToAppCallCarriesTonesBothWaysAndIsRecorded() async throws {
            let harness = try ServerHarness()
            let loop = try EventLoop(name: "devices")
            defer { loop.shutdown() }
            let alice = try harness.device("alice")
            let bob = try harness.device("bob")
            let aliceLeg = try Self.deviceLeg(on: loop)
            let bobLeg = try Self.deviceLeg(on: loop)

            // Caller: result, call.media, call.progress, call.ringing, call.answered,
            // call.established, call.ended, in this order (each `expect` fails on any other).
            let callID = try alice.startCall(to: "bob", sdp: try await aliceLeg.makeOffer())
            let media = try alice.expect(.callMedia)
            try await aliceLeg.acceptAnswer(try #require(media.sdp))
            try await aliceLeg.start(source: ToneSource(frequency: 440, amplitude: 0.3), sink: WAVFileSink(sampleRate: 48_000))
            try alice.expect(.callProgress)

            // Callee: call.incoming, call.answered, call.established, call.ended.
            let incoming = try bob.expect(.callIncoming)
            guard case .callIncoming(let details) = incoming else { return }
            #expect(details.from == .user("alice"))
            #expect(details.headers == ["X-Test": "1"])
            try bob.request(SignalingMessage.callAck, callID: callID)
            try alice.expect(.callRinging)
            let answer = try await bobLeg.answer(offer: try #require(incoming.sdp))
            try await bobLeg.start(source: ToneSource(frequency: 1000, amplitude: 0.3), sink: WAVFileSink(sampleRate: 48_000))
            try bob.answer(callID: callID, sdp: answer)
            try alice.expect(.callAnswered)
            try bob.expect(.callAnswered)
            try alice.expect(.callEstablished, timeout: .seconds(10))
            try bob.expect(.callEstablished, timeout: .seconds(10))
            #expect(await aliceLeg.state == .connected)
            #expect(await bobLeg.state == .connected)

            let talk = ContinuousClock.now
            try await Task.sleep(for: .seconds(3))
            let talked = ContinuousClock.now - talk
            let aliceStats = await aliceLeg.statistics
            let bobStats = await bobLeg.statistics

            // The callee hangs up.
            try bob.request(SignalingMessage.callHangup, callID: callID)
            #expect(try bob.expectEnded(callID).cause == "hungUp")
            #expect(try alice.expectEnded(callID).cause == "hungUp")
            await aliceLeg.close()
            await bobLeg.close()

            let heardByAlice = try #require(await aliceLeg.takeSink() as? WAVFileSink).file.samples
            let heardByBob = try #require(await bobLeg.takeSink() as? WAVFileSink).file.samples
            let aliceHeard = FrequencyAnalysis.dominantFrequency(samples: Array(heardByAlice.suffix(48_000)), sampleRate: 48_000) ?? 0
            let bobHeard = FrequencyAnalysis.dominantFrequency(samples: Array(heardByBob.suffix(48_000)), sampleRate: 48_000) ?? 0
            #expect(abs(aliceHeard - 1000) < 10, "alice heard \(aliceHeard) Hz")
            #expect(abs(bobHeard - 440) < 10, "bob heard \(bobHeard) Hz")
            // Packets that arrived over the talk time, against one per 20 ms sent.
            let expected = Double(talked.components.seconds) * 50
            #expect(Double(aliceStats.rtp.packetsReceived) >= expected * 0.9, "\(aliceStats.rtp)")
            #expect(Double(bobStats.rtp.packetsReceived) >= expected * 0.9, "\(bobStats.rtp)")

            let stored = try #require(try harness.waitForStoredCall(callID) { $0.state == .ended })
            #expect(stored.endCause == .hungUp)
            let times = stored.details
            let progressed = try #require(times.progressedTime), rung = try #require(times.rungTime)
            let answered = try #require(times.answeredTime), established = try #require(times.establishedTime)
            let ended = try #require(times.endedTime)
            #expect(times.startedTime <= progressed && progressed <= rung && rung <= answered && answered <= established)
            #expect(established <= ended)
            #expect((stored.durationMs ?? 0) >= 2_500)
            #expect(stored.legs.map(\.role) .sorted { $0.rawValue < $1.rawValue } == [.callee, .caller])
            for leg in stored.legs {
                #expect(leg.statistics.packetsReceived >= Int64(expected * 0.9), "\(leg)")
                #expect(leg.statistics.packetsSent >= Int64(expected * 0.9), "\(leg)")
            }
            let metrics = harness.server.metrics.snapshot
            #expect(metrics.mediaPacketsForwarded >= Int(expected * 1.8))
            #expect(metrics.callsEstablished == 1)
            #expect(metrics.callsEnded["hungUp"] == 1)
            #expect(harness.server.mediaPortsInUse == 0)
        }
    }
}
