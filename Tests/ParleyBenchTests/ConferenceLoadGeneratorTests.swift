import Foundation
import Glibc
import Testing
@testable import ParleyBench

/// The conference load generator against a loopback echo, and against a small Janus
/// AudioBridge room when Debian's `janus` is installed: packets must flow both ways. Each
/// case runs about two seconds of real time, so they run in the real-time pass.
extension RealTimeMediaTests {
@Suite(.serialized) struct ConferenceLoadGeneratorTests {
    static let runSeconds: UInt32 = 2

    @Test func everyParticipantHearsItsOwnFramesBackFromAnEcho() throws {
        let echo = try LoopbackRTPEcho()
        defer { echo.stop() }
        let sockets = try ConferenceLoadGenerator.bindLoopbackSockets(count: 5)
        defer { sockets.forEach { $0.close() } }
        let links = sockets.map { ConferenceParticipantLink(socket: $0, sendTo: echo.address) }
        let generator = try ConferenceLoadGenerator(links: links, settings: ConferenceCodecSettings(sampleRate: 16_000),
                                                    senderThreads: 2, maximumSeconds: 5)
        generator.start()
        usleep(Self.runSeconds * 1_000_000)
        generator.stop()
        let snapshot = generator.snapshot()
        #expect(snapshot.errors == 0, "\(snapshot.firstError ?? "")")
        for (sent, received) in zip(snapshot.sent, snapshot.received) {
            // 2 s at 50 frames a second, less what a loaded machine delays.
            #expect(sent >= 60)
            // The frames still in flight when the generator stopped may be missing.
            #expect(received.packets >= sent - 3)
            #expect(received.lost <= 3)
        }
        #expect(echo.echoed >= snapshot.sent.reduce(0, +) - 15)
    }

    @Test func roomRatesOtherThan16And48KilohertzAreRefused() throws {
        let sockets = try ConferenceLoadGenerator.bindLoopbackSockets(count: 1)
        defer { sockets.forEach { $0.close() } }
        let links = [ConferenceParticipantLink(socket: sockets[0], sendTo: sockets[0].localAddress)]
        #expect(throws: ConferenceLoadGenerator.Failure.self) {
            _ = try ConferenceLoadGenerator(links: links, settings: ConferenceCodecSettings(sampleRate: 8_000), senderThreads: 1, maximumSeconds: 1)
        }
        #expect(throws: ConferenceLoadGenerator.Failure.self) {
            _ = try ConferenceLoadGenerator(links: [], settings: ConferenceCodecSettings(sampleRate: 16_000), senderThreads: 1, maximumSeconds: 1)
        }
        #expect(throws: ConferenceLoadGenerator.Failure.self) {
            _ = try ConferenceLoadGenerator.bindLoopbackSockets(count: ConferenceLoadGenerator.maximumParticipants + 1)
        }
    }

    /// Three participants (two talkers) in a 48 kHz room: Janus receives their RTP (it sends
    /// only after a participant's first packet) and sends each its mix, about 50 a second.
    @Test(.enabled(if: JanusAudioBridge.executable != nil && JanusAudioBridge.libraryDirectory != nil, "Debian's janus is not installed"))
    func aJanusRoomSendsEveryParticipantItsMix() throws {
        let directory = try makeBenchDirectory("parley-test-janus")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let janus = try JanusAudioBridge(directory: directory)
        defer { janus.stop() }
        let sockets = try ConferenceLoadGenerator.bindLoopbackSockets(count: 3)
        defer { sockets.forEach { $0.close() } }
        let settings = ConferenceCodecSettings(sampleRate: 48_000, talkers: 2)
        let remotes = try janus.openRoom(participants: sockets.map(\.localAddress), settings: settings)
        #expect(remotes.count == 3)
        #expect(Set(remotes.map(\.port)).count == 3)
        let generator = try ConferenceLoadGenerator(links: zip(sockets, remotes).map { ConferenceParticipantLink(socket: $0, sendTo: $1) },
                                                    settings: settings, senderThreads: 1, maximumSeconds: 5)
        generator.start()
        usleep(Self.runSeconds * 1_000_000)
        generator.stop()
        try janus.closeRoom()
        let snapshot = generator.snapshot()
        #expect(snapshot.errors == 0, "\(snapshot.firstError ?? "")")
        for (sent, received) in zip(snapshot.sent, snapshot.received) {
            #expect(sent >= 60)
            // Janus's mixer starts on its own clock and sends once it has heard from the
            // participant: most of 2 s, not all of it.
            #expect(received.packets >= 50, "Janus sent \(received.packets) packets in \(Self.runSeconds) s")
        }
        #expect(janus.cpuSeconds() > 0)
    }
}
}
