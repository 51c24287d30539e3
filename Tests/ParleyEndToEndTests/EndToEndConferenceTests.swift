import Foundation
import ParleyMediaCore
import Testing

extension EndToEndRealTimeMediaTests {
    /// Conference rooms through a real parleyd (docs/conference.md): `parley conference`
    /// softphones, each sending a tone of its own, each recording what the room sends it.
    @Suite(.serialized) struct ConferenceRoomTests {
        static let frequencies: [Double] = [350, 650, 950, 1250]

        /// Four participants: each hears the three other tones for most of the time all four
        /// are in the room, and not its own (N-1). The room closes after the last leaves.
        @Test func fourParticipantsEachHearEveryOtherToneAndNotTheirOwn() throws {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("parley-e2e-room-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let server = try ParleydInstance()
            var participants: [(SoftphoneProcess, String)] = []
            for (index, frequency) in Self.frequencies.enumerated() {
                let recording = directory.appendingPathComponent("p\(index).wav").path
                let participant = try SoftphoneProcess("conference p\(index)", ["conference", "standup"] + server.clientFlags(as: "p\(index)")
                    + ["--tone", String(Int(frequency)), "--record", recording, "--duration", "40"])
                participants.append((participant, recording))
            }
            for (participant, _) in participants {
                try participant.waitForEvent("established", timeout: 20)
            }
            // All four in the room for 4 s, then all leave at once (Ctrl-C hangs up), so
            // the recordings end together and their last seconds overlap.
            Thread.sleep(forTimeInterval: 4)
            for (participant, _) in participants { participant.process.interrupt() }
            for (participant, _) in participants {
                #expect(try participant.waitForExit(timeout: 30) == 0, "\(participant.report)")
                #expect(!participant.eventNames.contains("ringing"), "\(participant.eventNames)")
            }
            for (index, (_, recording)) in participants.enumerated() {
                let levels = try ToneLevels(path: recording, frequencies: Self.frequencies)
                // 3 s before the last half second: all four were in the room.
                let window = levels.window(endingSecondsBeforeEnd: 0.5, seconds: 3)
                for (other, frequency) in Self.frequencies.enumerated() {
                    let present = window.share(of: frequency, above: -40)
                    if other == index {
                        #expect(present < 0.05, "p\(index) hears its own \(frequency) Hz in \(present * 100) % of frames")
                    } else {
                        #expect(present > 0.9, "p\(index) hears p\(other)'s \(frequency) Hz in only \(present * 100) % of frames")
                    }
                }
            }
            let log = server.process?.report ?? ""
            #expect(log.contains("media.room.opened") && log.contains("media.room.closed"), "\(log)")
        }

        /// Ids the protocol's rule refuses never leave the softphone: 65 characters, or
        /// characters outside `A-Z a-z 0-9 - _ =`.
        @Test func badConferenceIdsAreRefusedBeforeAnythingIsPlaced() throws {
            let server = try ParleydInstance()
            for room in [String(repeating: "r", count: 65), "stand up", ""] {
                let participant = try SoftphoneProcess("conference bad", ["conference", room] + server.clientFlags(as: "p"))
                #expect(try participant.waitForExit(timeout: 20) == 2, "\(participant.report)")
                #expect(participant.report.contains("conference id"), "\(participant.report)")
            }
        }
    }
}

/// The level of several tones in each 20 ms frame of a recording.
struct ToneLevels {
    /// Per frame, the level (dBFS) of each frequency.
    let frames: [[Double: Double]]

    init(path: String, frequencies: [Double]) throws {
        let wav = try WAVFile.read(path: path)
        let mono = wav.channels == 1 ? wav.samples : stride(from: 0, to: wav.samples.count, by: wav.channels).map { wav.samples[$0] }
        let frame = wav.sampleRate / 50
        frames = stride(from: 0, to: mono.count - frame + 1, by: frame).map { start in
            let samples = Array(mono[start..<start + frame])
            var levels: [Double: Double] = [:]
            for frequency in frequencies {
                levels[frequency] = FrequencyAnalysis.toneLevelDBFS(samples: samples, sampleRate: wav.sampleRate, frequency: frequency)
            }
            return levels
        }
    }

    private init(frames: [[Double: Double]]) { self.frames = frames }

    /// `seconds` of the recording that end `beforeEnd` seconds before its end.
    func window(endingSecondsBeforeEnd beforeEnd: Double, seconds: Double) -> ToneLevels {
        let end = max(0, frames.count - Int(beforeEnd * 50))
        return ToneLevels(frames: Array(frames[max(0, end - Int(seconds * 50))..<end]))
    }

    /// The share of frames in which `frequency` is above `level` dBFS.
    func share(of frequency: Double, above level: Double) -> Double {
        guard !frames.isEmpty else { return 0 }
        return Double(frames.filter { ($0[frequency] ?? -200) > level }.count) / Double(frames.count)
    }
}
