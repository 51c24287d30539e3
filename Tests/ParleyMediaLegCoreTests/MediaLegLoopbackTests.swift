import ParleyCrypto
import ParleyMediaCore
import ParleyMediaLegCore
import ParleyMediaLegIO
import ParleyNetLinux
import ParleyTestSupport
import Testing

extension RealTimeMediaTests {
    /// Two legs on real loopback sockets and one event loop, in real time.
    @Suite struct MediaLegLoopbackTests {
        @Test func liteServerAndFullDeviceExchangeTonesOverLoopback() async throws {
            let loop = try EventLoop(name: "leg-test")
            defer { loop.shutdown() }
            let server = try MediaLeg(
                configuration: MediaLegConfiguration(iceMode: .lite, certificate: try DTLSCertificate.generate()),
                bindingTo: [.ipv4Loopback(port: 0)], on: loop)
            let device = try MediaLeg(
                configuration: MediaLegConfiguration(iceMode: .full, certificate: try DTLSCertificate.generate()),
                bindingTo: [.ipv4Loopback(port: 0), .ipv6Loopback(port: 0)], on: loop)
            let offer = try await device.makeOffer()
            let answer = try await server.answer(offer: offer)
            try await device.acceptAnswer(answer)
            try await server.start(source: ToneSource(frequency: 1000, amplitude: 0.3), sink: WAVFileSink(sampleRate: 48_000))
            try await device.start(source: ToneSource(frequency: 440, amplitude: 0.3), sink: WAVFileSink(sampleRate: 48_000))
            #expect(await device.waitUntil(timeout: .seconds(10)) { $0 != .new && $0 != .checking } == .connected)
            #expect(await server.waitUntil(timeout: .seconds(10)) { $0 != .new && $0 != .checking } == .connected)
            try await Task.sleep(for: .seconds(3))
            let serverStats = await server.statistics
            let deviceStats = await device.statistics
            await server.close()
            await device.close()
            let heardByServer = try #require(await server.takeSink() as? WAVFileSink).file.samples
            let heardByDevice = try #require(await device.takeSink() as? WAVFileSink).file.samples
            #expect(abs((FrequencyAnalysis.dominantFrequency(samples: Array(heardByServer.suffix(48_000)), sampleRate: 48_000) ?? 0) - 440) < 10)
            #expect(abs((FrequencyAnalysis.dominantFrequency(samples: Array(heardByDevice.suffix(48_000)), sampleRate: 48_000) ?? 0) - 1000) < 10)
            #expect(serverStats.framesPlayedFromPackets > 120, "\(serverStats)")
            #expect(deviceStats.framesPlayedFromPackets > 120, "\(deviceStats)")
            #expect(serverStats.selectedPair?.remote.port == deviceStats.selectedPair?.local.port)
        }

        /// The shell on the plain RTP transport (a SIP leg): no ICE, no DTLS, connected at
        /// start, tones both ways over real sockets, each side latched to the other's socket.
        @Test func plainRTPLegsExchangeTonesOverLoopback() async throws {
            let loop = try EventLoop(name: "leg-test")
            defer { loop.shutdown() }
            var configuration = MediaLegConfiguration(plainRTP: .init())
            configuration.codecs = [.pcmu]
            let a = try MediaLeg(configuration: configuration, bindingTo: [.ipv4Loopback(port: 0)], on: loop)
            let b = try MediaLeg(configuration: configuration, bindingTo: [.ipv4Loopback(port: 0)], on: loop)
            let offer = try await a.makeOffer()
            #expect(offer.contains(" RTP/AVP ") && !offer.contains("a=ice-ufrag"))
            try await a.acceptAnswer(try await b.answer(offer: offer))
            try await a.start(source: ToneSource(frequency: 440, amplitude: 0.3), sink: WAVFileSink(sampleRate: 48_000))
            try await b.start(source: ToneSource(frequency: 1000, amplitude: 0.3), sink: WAVFileSink(sampleRate: 48_000))
            #expect(await a.state == .connected)
            #expect(await b.state == .connected)
            try await Task.sleep(for: .seconds(3))
            let aStats = await a.statistics
            let bStats = await b.statistics
            await a.close()
            await b.close()
            let heardByA = try #require(await a.takeSink() as? WAVFileSink).file.samples
            let heardByB = try #require(await b.takeSink() as? WAVFileSink).file.samples
            #expect(abs((FrequencyAnalysis.dominantFrequency(samples: Array(heardByB.suffix(48_000)), sampleRate: 48_000) ?? 0) - 440) < 10)
            #expect(abs((FrequencyAnalysis.dominantFrequency(samples: Array(heardByA.suffix(48_000)), sampleRate: 48_000) ?? 0) - 1000) < 10)
            #expect(aStats.framesPlayedFromPackets > 120, "\(aStats)")
            #expect(bStats.framesPlayedFromPackets > 120, "\(bStats)")
            #expect(bStats.plainRTP?.latched == true && bStats.plainRTP?.mediaAddress.port == a.localAddresses[0].port)
            #expect(aStats.plainRTP?.latched == true && aStats.plainRTP?.mediaAddress.port == b.localAddresses[0].port)
            #expect(aStats.dropped.isEmpty && bStats.dropped.isEmpty, "\(aStats.dropped) \(bStats.dropped)")
        }

        /// Starts a connected lite-server/full-device pair with tones on `loop`.
        static func connectedPair(on loop: EventLoop, serverLog: @escaping @Sendable (String) -> Void = { _ in }) async throws -> (server: MediaLeg, device: MediaLeg) {
            let server = try MediaLeg(
                configuration: MediaLegConfiguration(iceMode: .lite, certificate: try DTLSCertificate.generate()),
                bindingTo: [.ipv4Loopback(port: 0)], on: loop, log: serverLog)
            let device = try MediaLeg(
                configuration: MediaLegConfiguration(iceMode: .full, certificate: try DTLSCertificate.generate()),
                bindingTo: [.ipv4Loopback(port: 0)], on: loop)
            try await device.acceptAnswer(try await server.answer(offer: try await device.makeOffer()))
            try await server.start(source: ToneSource(frequency: 1000, amplitude: 0.3), sink: WAVFileSink(sampleRate: 48_000))
            try await device.start(source: ToneSource(frequency: 440, amplitude: 0.3), sink: WAVFileSink(sampleRate: 48_000))
            try #require(await server.waitUntil(timeout: .seconds(10)) { $0 != .new && $0 != .checking } == .connected)
            try #require(await device.waitUntil(timeout: .seconds(10)) { $0 != .new && $0 != .checking } == .connected)
            return (server, device)
        }

        /// A flood of garbage at one leg's port (every RFC 7983 kind, bounded in count) is
        /// dropped, counted and logged; another leg on the same loop keeps its audio, and the
        /// flooded leg stays connected and has its audio back once the flood ends (during it,
        /// the kernel drops datagrams of both kinds when the socket buffer is full).
        @Test func aFloodOfGarbageAtOneLegStallsNeitherItNorItsNeighbour() async throws {
            let loop = try EventLoop(name: "flood-test")
            defer { loop.shutdown() }
            let logLines = LockedBox<[String]>([])
            let victim = try await Self.connectedPair(on: loop, serverLog: { line in logLines.withLock { $0.append(line) } })
            let neighbour = try await Self.connectedPair(on: loop)
            let before = await neighbour.server.statistics.framesPlayedFromPackets
            let victimBefore = await victim.server.statistics.framesPlayedFromPackets
            let target = victim.server.localAddresses[0]

            let flooder = try UDPSocket(bindingTo: .ipv4Loopback(port: 0))
            defer { flooder.close() }
            var random = SeededGenerator(seed: 11)
            let firsts: [UInt8] = [0, 1, 22, 23, 64, 128, 129, 144, 191, 200, 255]
            let start = ContinuousClock.now
            var sent = 0
            // 2 s of flood, at most 40,000 datagrams.
            while sent < 40_000, ContinuousClock.now - start < .seconds(2) {
                var bytes = random.bytes(20 + random.below(200))
                bytes[0] = firsts[sent % firsts.count]
                _ = try? flooder.send(bytes, to: target)
                sent += 1
                if sent % 200 == 0 { try await Task.sleep(for: .milliseconds(1)) }
            }
            let elapsed = ContinuousClock.now - start
            try await Task.sleep(for: .milliseconds(200))
            let neighbourStats = await neighbour.server.statistics
            let victimAfterFlood = await victim.server.statistics.framesPlayedFromPackets
            try await Task.sleep(for: .seconds(1))
            let victimStats = await victim.server.statistics
            for leg in [victim.server, victim.device, neighbour.server, neighbour.device] { await leg.close() }

            let expectedFrames = Double((elapsed + .milliseconds(200)) / .milliseconds(20))
            let neighbourFrames = Double(neighbourStats.framesPlayedFromPackets - before)
            let victimFrames = Double(victimAfterFlood - victimBefore)
            let victimRecovered = Double(victimStats.framesPlayedFromPackets - victimAfterFlood)
            #expect(neighbourFrames >= 0.9 * expectedFrames, "neighbour played \(neighbourFrames) of \(expectedFrames) frames")
            #expect(victimRecovered >= 45, "flooded leg played \(victimRecovered) frames in the second after the flood")
            #expect(victimStats.state == .connected)
            let dropped = victimStats.dropped.values.reduce(0, +)
            #expect(dropped > UInt64(sent / 4), "\(sent) sent, \(dropped) dropped: \(victimStats.dropped)")
            // The flooder never passed an ICE check: its DTLS and RTP go no further than that.
            #expect((victimStats.dropped[.unvalidatedSource] ?? 0) > 0)
            #expect((victimStats.dropped[.unknownKind] ?? 0) > 0)
            #expect((victimStats.dropped[.stun] ?? 0) > 0)
            #expect(victimStats.srtpInbound.authFailures == 0)
            let lines = logLines.withLock { $0 }
            #expect(lines.contains { $0.contains("dropped datagram") && $0.contains("unvalidatedSource") }, "\(lines.prefix(10))")
            #expect(lines.count < 200, "drop logging must be rate-limited, got \(lines.count) lines")
            print("flood: \(sent) garbage datagrams in \(elapsed), \(dropped) dropped; flooded leg played \(Int(victimFrames)) during and \(Int(victimRecovered)) in the second after, neighbour \(Int(neighbourFrames)) of \(Int(expectedFrames)) frames")
        }
    }
}
