import Foundation
import ParleyCrypto
import ParleyMediaCore
import ParleyMediaLegCore
import ParleyMediaLegIO
import ParleyNetLinux
@testable import ParleyServer
import ParleySignaling
import ParleyStore
import Synchronization
import Testing

extension RealTimeMediaTests {
    /// A whole app-to-app call through a real server: two raw protocol clients, each with a
    /// real device `MediaLeg` (full ICE, DTLS-SRTP, Opus) on loopback, the server anchoring
    /// both legs in forward mode. Checks the event order of docs/protocol.md on both sides,
    /// the tones heard both ways, how much audio arrived, and the stored record.
    @Suite(.serialized) struct ServerMediaCallTests {
        static func deviceLeg(on loop: EventLoop) throws -> MediaLeg {
            var configuration = MediaLegConfiguration(iceMode: .full, certificate: try DTLSCertificate.generate())
            configuration.codecs = [.opus]
            return try MediaLeg(configuration: configuration, bindingTo: [.ipv4Loopback(port: 0)], on: loop)
        }

        @Test func appToAppCallCarriesTonesBothWaysAndIsRecorded() async throws {
            let harness = try ServerHarness { $0.legStatisticsInterval = .seconds(1) }
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
            // While the call lasts its record already holds both legs' figures.
            let inProgress = try #require(try harness.storedCall(callID))
            #expect(inProgress.state == .established)
            #expect(inProgress.legs.count == 2)
            #expect(inProgress.legs.allSatisfy { $0.statistics.packetsReceived > 0 }, "\(inProgress.legs)")

            // The callee hangs up.
            try await Self.calleeHangsUpAndBothHeardTheOther(alice: alice, bob: bob, callID: callID, aliceLeg: aliceLeg, bobLeg: bobLeg)
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

        /// The callee's leg connects while it rings (`call.ack` with its SDP answer), no
        /// audio crosses before the answer, and `call.answer` without SDP only switches it
        /// on: established follows with no ICE or DTLS left to do, and the callee's first
        /// packets after the answer reach the caller.
        @Test func aCalleeLegConnectedWhileRingingCarriesAudioFromTheAnswer() async throws {
            let harness = try ServerHarness()
            let loop = try EventLoop(name: "devices")
            defer { loop.shutdown() }
            let alice = try harness.device("alice")
            let bob = try harness.device("bob")
            let aliceLeg = try Self.deviceLeg(on: loop)
            let bobLeg = try Self.deviceLeg(on: loop)

            let callID = try alice.startCall(to: "bob", sdp: try await aliceLeg.makeOffer())
            try await aliceLeg.acceptAnswer(try #require(try alice.expect(.callMedia).sdp))
            try await aliceLeg.start(source: ToneSource(frequency: 440, amplitude: 0.3), sink: WAVFileSink(sampleRate: 48_000))
            try alice.expect(.callProgress)
            let incoming = try bob.expect(.callIncoming)
            let earlyAnswer = try await bobLeg.answer(offer: try #require(incoming.sdp))
            try await bobLeg.start(sink: WAVFileSink(sampleRate: 48_000))   // no audio before the answer
            try bob.request(SignalingMessage.callAck, callID: callID, sdp: earlyAnswer)
            try alice.expect(.callRinging)
            #expect(await bobLeg.waitUntil(timeout: .seconds(10)) { $0 != .new && $0 != .checking } == .connected,
                    "the callee's leg connects while it rings")
            #expect(await aliceLeg.waitUntil(timeout: .seconds(10)) { $0 != .new && $0 != .checking } == .connected)
            // Ringing with both legs up: the caller's tone must not reach the callee yet.
            try await Task.sleep(for: .milliseconds(500))
            #expect(await bobLeg.statistics.rtp.packetsReceived == 0, "audio crossed before the answer")
            #expect(await aliceLeg.statistics.rtp.packetsReceived == 0, "audio crossed before the answer")

            await bobLeg.attach(source: ToneSource(frequency: 1000, amplitude: 0.3), sink: WAVFileSink(sampleRate: 48_000))
            try bob.answer(callID: callID, sdp: nil)
            try alice.expect(.callAnswered)
            try bob.expect(.callAnswered)
            try alice.expect(.callEstablished)
            try bob.expect(.callEstablished)
            try await Task.sleep(for: .seconds(2))
            let sentByBob = await bobLeg.statistics.rtp.packetsSent
            let receivedByAlice = await aliceLeg.statistics.rtp.packetsReceived
            // Every packet the callee sent from the answer on is relayed, bar those still
            // in flight or sent in the instant before the server handled call.answer.
            #expect(receivedByAlice + 3 >= sentByBob, "sent \(sentByBob), arrived \(receivedByAlice)")
            try await Self.calleeHangsUpAndBothHeardTheOther(alice: alice, bob: bob, callID: callID, aliceLeg: aliceLeg, bobLeg: bobLeg)
            let stored = try #require(try harness.waitForStoredCall(callID) { $0.state == .ended })
            let answered = try #require(stored.details.answeredTime), established = try #require(stored.details.establishedTime)
            #expect(answered <= established)
        }

        /// Bob hangs up, both see `hungUp`, both legs close, and each recording's last
        /// second is the other side's tone (alice sends 440 Hz, bob 1000 Hz).
        static func calleeHangsUpAndBothHeardTheOther(alice: TestDevice, bob: TestDevice, callID: String,
                                                      aliceLeg: MediaLeg, bobLeg: MediaLeg) async throws {
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
        }

        /// Brings a call from alice to bob to `established` with tones on both legs.
        static func establish(_ harness: ServerHarness, aliceLoop: EventLoop, bobLoop: EventLoop,
                              caller: String = "alice", callee: String = "bob")
            async throws -> (alice: TestDevice, bob: TestDevice, callID: String, aliceLeg: MediaLeg, bobLeg: MediaLeg) {
            let alice = try harness.device(caller)
            let bob = try harness.device(callee)
            let aliceLeg = try deviceLeg(on: aliceLoop)
            let bobLeg = try deviceLeg(on: bobLoop)
            let callID = try alice.startCall(to: callee, sdp: try await aliceLeg.makeOffer())
            try await aliceLeg.acceptAnswer(try #require(try alice.expect(.callMedia).sdp))
            try await aliceLeg.start(source: ToneSource(frequency: 440, amplitude: 0.3))
            try alice.expect(.callProgress)
            let offer = try #require(try bob.expect(.callIncoming).sdp)
            let answer = try await bobLeg.answer(offer: offer)
            try await bobLeg.start(source: ToneSource(frequency: 1000, amplitude: 0.3))
            try bob.answer(callID: callID, sdp: answer)
            try alice.expect(.callAnswered)
            try bob.expect(.callAnswered)
            try alice.expect(.callEstablished, timeout: .seconds(10))
            try bob.expect(.callEstablished, timeout: .seconds(10))
            return (alice, bob, callID, aliceLeg, bobLeg)
        }

        /// docs/operations.md, "When the store is slow or locked": a call ended while another
        /// process holds the store's write lock waits for its record, and an unrelated
        /// established call's audio keeps flowing both ways meanwhile.
        @Test func aLockedStoreStopsNoOtherCallsAudio() async throws {
            let harness = try ServerHarness()
            let loop = try EventLoop(name: "devices")
            defer { loop.shutdown() }
            let first = try await Self.establish(harness, aliceLoop: loop, bobLoop: loop)
            let second = try await Self.establish(harness, aliceLoop: loop, bobLoop: loop, caller: "carol", callee: "dave")
            let lock = try StoreLockHolder(path: harness.directory + "/" + SQLiteStore.defaultFileName, seconds: 6)
            // Ending the first call needs the store; its call.ended waits for the lock.
            try first.bob.send(.callHangup(.init(requestID: "h", callID: first.callID)))
            try await Task.sleep(for: .milliseconds(300))
            let carolBefore = await second.aliceLeg.statistics.rtp.packetsReceived
            let daveBefore = await second.bobLeg.statistics.rtp.packetsReceived
            let window = ContinuousClock.now
            try await Task.sleep(for: .seconds(3))
            let elapsed = ContinuousClock.now - window
            let carolGot = await second.aliceLeg.statistics.rtp.packetsReceived - carolBefore
            let daveGot = await second.bobLeg.statistics.rtp.packetsReceived - daveBefore
            let expected = Double(elapsed.components.seconds) * 50
            #expect(Double(carolGot) >= expected * 0.9, "carol got \(carolGot) packets in \(elapsed) while the store was locked")
            #expect(Double(daveGot) >= expected * 0.9, "dave got \(daveGot) packets in \(elapsed) while the store was locked")
            #expect(try harness.storedCall(first.callID)?.state == .established, "the end is not stored during the lock")
            #expect(try first.bob.expect(.result, timeout: .seconds(10)).replyTo == "h")
            #expect(try first.bob.expectEnded(first.callID, timeout: .seconds(5)).cause == "hungUp")
            #expect(try first.alice.expectEnded(first.callID, timeout: .seconds(5)).cause == "hungUp")
            #expect(try harness.storedCall(first.callID)?.endCause == .hungUp)
            try lock.wait()
            try second.alice.request(SignalingMessage.callHangup, callID: second.callID)
            for leg in [first.aliceLeg, first.bobLeg, second.aliceLeg, second.bobLeg] { await leg.close() }
        }

        @Test func aDeviceThatGoesSilentEndsTheCallAsInactive() async throws {
            let harness = try ServerHarness { $0.mediaInactivityTimeout = .seconds(2) }
            let aliceLoop = try EventLoop(name: "alice")
            let bobLoop = try EventLoop(name: "bob")
            defer { bobLoop.shutdown() }
            let call = try await Self.establish(harness, aliceLoop: aliceLoop, bobLoop: bobLoop)
            // Alice's device stops dead: no packets, no consent answers, no goodbye.
            aliceLoop.shutdown()
            let start = ContinuousClock.now
            #expect(try call.bob.expectEnded(call.callID, timeout: .seconds(8)).cause == "inactive")
            #expect(try call.alice.expectEnded(call.callID).cause == "inactive")
            #expect(ContinuousClock.now - start >= .seconds(1))
            await call.bobLeg.close()
            #expect(try harness.waitForStoredCall(call.callID) { $0.state == .ended }?.endCause == .inactive)
        }

        /// Media runs on media loops of its own: with the call engine's loop held up (as a
        /// slow store answer or a burst of signaling would), audio still flows both ways.
        @Test func audioKeepsFlowingWhileTheCallEngineLoopIsStalled() async throws {
            let harness = try ServerHarness()
            let loop = try EventLoop(name: "devices")
            defer { loop.shutdown() }
            let call = try await Self.establish(harness, aliceLoop: loop, bobLoop: loop)
            let engineLoop = harness.server.engineLoop
            let release = DispatchSemaphore(value: 0)
            let stalled = DispatchSemaphore(value: 0)
            #expect(engineLoop.execute {
                stalled.signal()
                _ = release.wait(timeout: .now() + 10)  // the stall; bounded in case the test fails first
            })
            #expect(stalled.wait(timeout: .now() + 5) == .success)
            let aliceBefore = await call.aliceLeg.statistics.rtp.packetsReceived
            let bobBefore = await call.bobLeg.statistics.rtp.packetsReceived
            // One second of audio (50 packets) each way while the engine cannot run, within 3 s.
            let deadline = ContinuousClock.now + .seconds(3)
            var flowed = false
            while ContinuousClock.now < deadline {
                let alice = await call.aliceLeg.statistics.rtp.packetsReceived
                let bob = await call.bobLeg.statistics.rtp.packetsReceived
                if alice >= aliceBefore + 50 && bob >= bobBefore + 50 { flowed = true; break }
                try await Task.sleep(for: .milliseconds(20))
            }
            release.signal()
            #expect(flowed, "audio stopped while the engine loop was stalled")
            try call.alice.request(SignalingMessage.callHangup, callID: call.callID)
            #expect(try call.alice.expectEnded(call.callID).cause == "hungUp")
            #expect(try call.bob.expectEnded(call.callID).cause == "hungUp")
            await call.aliceLeg.close()
            await call.bobLeg.close()
            #expect(harness.server.mediaPortsInUse == 0)
        }

        @Test func aDeviceClosingItsLegEndsTheCallAsInactive() async throws {
            let harness = try ServerHarness()
            let loop = try EventLoop(name: "devices")
            defer { loop.shutdown() }
            let call = try await Self.establish(harness, aliceLoop: loop, bobLoop: loop)
            await call.aliceLeg.close()  // DTLS close_notify to the server's leg
            #expect(try call.bob.expectEnded(call.callID).cause == "inactive")
            #expect(try call.alice.expectEnded(call.callID).cause == "inactive")
            await call.bobLeg.close()
        }
    }
}
