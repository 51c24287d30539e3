import Glibc
import Testing
@testable import ParleyBench

/// parleyd's side of the conference bench for a few seconds: parleyd (built next to the
/// tests) takes three load participants into a room as SIP calls to the room's number, two
/// of them talking. Each must get its mix, a talker must hear the other talker's tone and
/// not its own (N-1), the listener both, and the room must close after the BYEs. About
/// five seconds of real time, so it runs in the real-time pass.
extension RealTimeMediaTests {
@Suite(.serialized) struct ParleydConferenceRoomTests {
    static let runSeconds: UInt32 = 3
    /// Frames skipped at the start of each participant's capture: the legs' jitter buffers
    /// fill and the voice activity detector's attack picks the talkers.
    static let settleFrames = 40

    @Test func threeCallersGetTheirMixAndTalkersDoNotHearThemselves() throws {
        let settings = ConferenceCodecSettings(sampleRate: 16_000, talkers: 2)
        let room = try ParleydConferenceRoom(sampleRate: settings.sampleRate, complexity: settings.complexity)
        defer { room.stop() }
        let sockets = try ConferenceLoadGenerator.bindLoopbackSockets(count: 3)
        defer { sockets.forEach { $0.close() } }
        // Joined: every INVITE answered with Opus, and /metrics shows one room of three.
        let remotes = try room.openRoom(participants: sockets.map(\.localAddress), settings: settings)
        #expect(remotes.count == 3 && Set(remotes.map(\.port)).count == 3)
        let links = zip(sockets, remotes).map { ConferenceParticipantLink(socket: $0, sendTo: $1) }
        let generator = try ConferenceLoadGenerator(links: links, settings: settings, senderThreads: 1, maximumSeconds: 6,
                                                    capturePerParticipant: 200)
        generator.start()
        usleep(Self.runSeconds * 1_000_000)
        generator.stop()
        let lateness = room.tickLateness(overLast: Double(Self.runSeconds))
        let note = room.stepNote() ?? ""
        try room.closeRoom()

        let snapshot = generator.snapshot()
        #expect(snapshot.errors == 0, "\(snapshot.firstError ?? "")")
        // About 50 a second once each leg connected; a loaded machine delays the start.
        for received in snapshot.received { #expect(received.packets >= 80, "\(note)") }
        #expect(lateness != nil, "parleyd's /metrics gives the room's tick lateness: \(note)")
        #expect(note.contains("3 participants"), "\(note)")

        let tones = [ConferenceLoadGenerator.toneFrequency(talker: 0), ConferenceLoadGenerator.toneFrequency(talker: 1)]
        let levels = try generator.capturedPayloads().map { payloads in
            try ConferenceLoadGenerator.toneLevels(ofOpus: Array(payloads.dropFirst(Self.settleFrames)), frequencies: tones)
        }
        #expect(levels[0][1] > -40, "talker 0 hears \(levels[0])")
        #expect(levels[0][0] < levels[0][1] - 20, "talker 0 hears its own tone: \(levels[0])")
        #expect(levels[1][0] > -40, "talker 1 hears \(levels[1])")
        #expect(levels[1][1] < levels[1][0] - 20, "talker 1 hears its own tone: \(levels[1])")
        #expect(levels[2].allSatisfy { $0 > -40 }, "the listener hears \(levels[2])")
    }
}
}
