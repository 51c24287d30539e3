import ParleyCrypto
import ParleyMedia
import ParleyMediaLeg
import ParleyNet
import Testing

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
}
