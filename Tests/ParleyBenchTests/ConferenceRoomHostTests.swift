import Glibc
import Testing
@testable import ParleyBench

/// parleyd's room as the conference bench runs it (`ConferenceRoomHost`, in process here):
/// three plain-RTP participants from the load generator, two of them talking. Each must get
/// its mix, and a talker must hear the other talker's tone and not its own (N-1), while the
/// third, a listener, hears both from the shared encode. About three seconds of real time,
/// so it runs in the real-time pass.
extension RealTimeMediaTests {
@Suite(.serialized) struct ConferenceRoomHostTests {
    static let runSeconds: UInt32 = 3
    /// Frames skipped at the start of each participant's capture: the legs' jitter buffers
    /// fill and the voice activity detector's attack picks the talkers.
    static let settleFrames = 40

    @Test func threeParticipantsGetTheirMixAndTalkersDoNotHearThemselves() throws {
        let host = try ConferenceRoomHost()
        defer { host.stop() }
        let sockets = try ConferenceLoadGenerator.bindLoopbackSockets(count: 3)
        defer { sockets.forEach { $0.close() } }
        let settings = ConferenceCodecSettings(sampleRate: 16_000, talkers: 2)
        let legs = try host.openRoom(participants: sockets.map(\.localAddress), sampleRate: settings.sampleRate,
                                     opusComplexity: settings.complexity)
        #expect(legs.count == 3)
        let links = zip(sockets, legs).map { ConferenceParticipantLink(socket: $0, sendTo: $1) }
        let generator = try ConferenceLoadGenerator(links: links, settings: settings, senderThreads: 1, maximumSeconds: 6,
                                                    capturePerParticipant: 200)
        generator.start()
        usleep(Self.runSeconds * 1_000_000)
        generator.stop()
        let report = try #require(host.report())
        host.closeRoom()

        let snapshot = generator.snapshot()
        #expect(snapshot.errors == 0, "\(snapshot.firstError ?? "")")
        // Both ways: the room received the participants' frames and sent each its mix
        // (about 50 a second once its leg connected; a loaded machine delays the start).
        #expect(report.packetsReceived >= UInt64(snapshot.sent.reduce(0, +) - 30))
        for received in snapshot.received { #expect(received.packets >= 80) }
        #expect(report.ticks >= 100)
        #expect(report.talkerEncodes > 0, "the talkers get N-1 mixes encoded for them")
        #expect(report.sharedEncodes > 0, "the listener gets the shared mix")
        #expect(report.encodeFailures == 0)
        // Every leg encodes at the load's complexity (Janus's `quality`), not the default 9.
        #expect(settings.complexity == 4 && report.opusComplexities == [settings.complexity])

        let tones = [ConferenceLoadGenerator.toneFrequency(talker: 0), ConferenceLoadGenerator.toneFrequency(talker: 1)]
        let captured = generator.capturedPayloads()
        let levels = try captured.map { payloads in
            try ConferenceLoadGenerator.toneLevels(ofOpus: Array(payloads.dropFirst(Self.settleFrames)), frequencies: tones)
        }
        // Talker 0 hears talker 1's tone, not its own, and the other way round.
        #expect(levels[0][1] > -40, "talker 0 hears \(levels[0])")
        #expect(levels[0][0] < levels[0][1] - 20, "talker 0 hears its own tone: \(levels[0])")
        #expect(levels[1][0] > -40, "talker 1 hears \(levels[1])")
        #expect(levels[1][1] < levels[1][0] - 20, "talker 1 hears its own tone: \(levels[1])")
        // The listener hears both.
        #expect(levels[2].allSatisfy { $0 > -40 }, "the listener hears \(levels[2])")
    }
}
}
