import Foundation
import ParleyMediaCore
import ParleyNetCore
import ParleyNetLinux
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
            let metrics = try rawGet(server, "/metrics", credentials: "")
            #expect(metrics.contains("\nparley_conference_rooms 1\n") && metrics.contains("\nparley_conference_participants 4\n"), "\(metrics)")
            #expect(metrics.contains("\nparley_conference_tick_lateness_p99_seconds "), "\(metrics)")
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

        /// Talking events: one participant sends a tone, two send digital silence (a WAV of
        /// zeros). Every softphone prints `talking` lines naming the tone's sender, also the
        /// two that joined after it started (they hear the room's talkers as they join),
        /// and never a silent one.
        @Test func talkingEventsNameTheToneSenderAndNotTheSilentOnes() throws {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("parley-e2e-talking-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let silence = directory.appendingPathComponent("silence.wav").path
            try WAVFile(sampleRate: 48_000, samples: [Int16](repeating: 0, count: 48_000)).write(path: silence)
            let server = try ParleydInstance()
            let speaker = try SoftphoneProcess("conference speaker", ["conference", "talkers"] + server.clientFlags(as: "speaker")
                + ["--tone", "650", "--duration", "40"])
            try speaker.waitForEvent("established", timeout: 20)
            var quiet: [SoftphoneProcess] = []
            for name in ["quiet1", "quiet2"] {
                let participant = try SoftphoneProcess("conference \(name)", ["conference", "talkers"] + server.clientFlags(as: name)
                    + ["--play", silence, "--duration", "40"])
                try participant.waitForEvent("established", timeout: 20)
                quiet.append(participant)
            }
            let everyone = [speaker] + quiet
            for participant in everyone {
                let event = try participant.waitForEvent("talking", timeout: 10) { ($0["talking"] as? [String])?.contains("speaker") == true }
                #expect(event["callId"] is String)
            }
            // A while with all three in the room: the silent ones must never become talkers.
            Thread.sleep(forTimeInterval: 2)
            for participant in everyone { participant.process.interrupt() }
            for participant in everyone {
                #expect(try participant.waitForExit(timeout: 30) == 0, "\(participant.report)")
                let named = participant.events.filter { $0["event"] as? String == "talking" }.flatMap { $0["talking"] as? [String] ?? [] }
                #expect(named.contains("speaker"), "\(participant.report)")
                #expect(!named.contains("quiet1") && !named.contains("quiet2"), "a silent participant was named: \(named)")
            }
            let rest = try server.request("GET", "/calling/v1/conferences/id/talkers")
            #expect(rest.status == 404, "everyone left")
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

    init(frames: [[Double: Double]]) { self.frames = frames }

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

extension EndToEndRealTimeMediaTests.ConferenceRoomTests {
    /// Moderation through the Sinch-shaped REST endpoints, heard in the recordings: a
    /// muted participant's tone leaves the others' mix and comes back on unmute; one on
    /// hold is out of the mix and hears none of the room; a kicked participant's call ends
    /// `hungUp` while the others go on; kicking all ends the room.
    @Test func moderationMutesHoldsAndKicksAsTheRecordingsShow() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("parley-e2e-moderation-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try ParleydInstance()
        let tones: [Double] = [350, 650, 950]
        var participants: [SoftphoneProcess] = []
        for (index, frequency) in tones.enumerated() {
            participants.append(try SoftphoneProcess("conference p\(index)", ["conference", "board"] + server.clientFlags(as: "p\(index)")
                + ["--tone", String(Int(frequency)), "--record", directory.appendingPathComponent("p\(index).wav").path, "--duration", "60"]))
        }
        var callIDs: [String] = []
        for participant in participants {
            let established = try participant.waitForEvent("established", timeout: 20)
            callIDs.append(try #require(established["callId"] as? String))
        }
        let room = "/calling/v1/conferences/id/board"

        let listed = try server.request("GET", room)
        #expect(listed.status == 200)
        let entries = try #require(listed.body?["participants"] as? [[String: Any]])
        #expect(Set(entries.compactMap { $0["id"] as? String }) == Set(callIDs))
        #expect(Set(entries.compactMap { $0["cli"] as? String }) == ["p0", "p1", "p2"])
        #expect(entries.allSatisfy { $0["muted"] as? Bool == false && $0["onhold"] as? Bool == false && $0["duration"] is Int })

        // Phases of 2 s, each named by when it began (the monotonic clock).
        let clock = ContinuousClock()
        Thread.sleep(forTimeInterval: 2)
        let muted = clock.now
        #expect(try server.request("PATCH", "\(room)/\(callIDs[1])", body: ["command": "mute"]).status == 204)
        Thread.sleep(forTimeInterval: 1)
        let whileMuted = try server.request("GET", room).body?["participants"] as? [[String: Any]] ?? []
        #expect(whileMuted.first { $0["id"] as? String == callIDs[1] }?["muted"] as? Bool == true)
        Thread.sleep(forTimeInterval: 1)
        let held = clock.now
        #expect(try server.request("PATCH", "\(room)/\(callIDs[1])", body: ["command": "unmute"]).status == 204)
        #expect(try server.request("PATCH", "\(room)/\(callIDs[2])", body: ["command": "onhold"]).status == 204)
        Thread.sleep(forTimeInterval: 2)
        let kicked = clock.now
        #expect(try server.request("PATCH", "\(room)/\(callIDs[2])", body: ["command": "resume"]).status == 204)
        #expect(try server.request("DELETE", "\(room)/\(callIDs[0])").status == 204)
        #expect(try participants[0].waitForExit(timeout: 20) == 0, "\(participants[0].report)")
        #expect(participants[0].events.contains { $0["event"] as? String == "ended" && $0["cause"] as? String == "hungUp" })
        Thread.sleep(forTimeInterval: 2)
        let ended = clock.now
        #expect(try server.request("DELETE", room).status == 204)
        for participant in participants.dropFirst() {
            #expect(try participant.waitForExit(timeout: 20) == 0, "\(participant.report)")
        }
        let gone = try server.request("GET", room)
        #expect(gone.status == 404)
        #expect(gone.body?["errorCode"] as? Int == 40400)

        /// The share of frames in which `frequency` is heard by participant `index` between
        /// `from` and `to` (margins of 0.5 s after a change, 0.2 s before the next), counted
        /// back from the recording's end at `end`.
        func heard(_ index: Int, _ frequency: Double, from: ContinuousClock.Instant, to: ContinuousClock.Instant,
                   end: ContinuousClock.Instant) throws -> Double {
            let levels = try ToneLevels(path: directory.appendingPathComponent("p\(index).wav").path, frequencies: tones)
            let seconds = { (instant: ContinuousClock.Instant) in Double(instant.duration(to: end).components.attoseconds) / 1e18 + Double(instant.duration(to: end).components.seconds) }
            let window = levels.window(endingSecondsBeforeEnd: seconds(to) + 0.2, seconds: seconds(from) - seconds(to) - 0.7)
            return window.share(of: frequency, above: -40)
        }
        // Muted: p1's 650 Hz is gone for p0 and p2; p1 still hears them.
        #expect(try heard(0, 650, from: muted, to: held, end: kicked) < 0.1)
        #expect(try heard(2, 650, from: muted, to: held, end: ended) < 0.1)
        #expect(try heard(1, 350, from: muted, to: held, end: ended) > 0.9)
        // p1 unmuted and p2 on hold: 650 back, 950 gone, and p2 hears none of the room.
        #expect(try heard(0, 650, from: held, to: kicked, end: kicked) > 0.9)
        #expect(try heard(0, 950, from: held, to: kicked, end: kicked) < 0.1)
        #expect(try heard(2, 350, from: held, to: kicked, end: ended) < 0.1)
        #expect(try heard(2, 650, from: held, to: kicked, end: ended) < 0.1)
        // p2 resumed and p0 kicked: p1 hears 950 again and no more 350.
        #expect(try heard(1, 950, from: kicked, to: ended, end: ended) > 0.9)
        #expect(try heard(1, 350, from: kicked, to: ended, end: ended) < 0.1)
    }

    /// Rooms are the application's own; bad ids, bad credentials and bad commands are
    /// refused in the Sinch shape.
    @Test func moderationRefusesOtherApplicationsBadIdsAndBadCommands() throws {
        let server = try ParleydInstance()
        let participant = try SoftphoneProcess("conference p", ["conference", "private"] + server.clientFlags(as: "p") + ["--duration", "30"])
        let callID = try #require(try participant.waitForEvent("established", timeout: 20)["callId"] as? String)
        let room = "/calling/v1/conferences/id/private"
        #expect(try server.request("GET", room).status == 200)

        // Another application of the same server: the same id is another (empty) room.
        let create = try ManagedProcess(name: "parleyd app create", executable: BuiltProducts.parleyd,
                                        arguments: ["app", "create", "--name", "other", "--json", "--data-dir", server.dataDirectory.path])
        #expect(try create.waitForExit(timeout: 20) == 0)
        let app = try #require(try JSONSerialization.jsonObject(with: Data(create.lines.joined().utf8)) as? [String: Any])
        let otherCredentials = "\(try #require(app["key"] as? String)):\(try #require(app["secret"] as? String))"
        let other = try server.request("GET", room, credentials: otherCredentials)
        #expect(other.status == 404)
        #expect(try server.request("DELETE", "\(room)/\(callID)", credentials: otherCredentials).status == 404)
        // Over a plain socket: Foundation's URLSession on Linux does not hand a 401 back.
        let wrong = try rawGet(server, room, credentials: "\(server.applicationKey):wrong-secret")
        #expect(wrong.hasPrefix("HTTP/1.1 401"), "\(wrong)")
        #expect(wrong.contains(#""errorCode":40100"#), "\(wrong)")
        let long = try server.request("GET", "/calling/v1/conferences/id/" + String(repeating: "r", count: 65))
        #expect(long.status == 400)
        #expect(long.body?["errorCode"] as? Int == 40000)
        let unknown = try server.request("PATCH", "\(room)/\(callID)", body: ["command": "deafen"])
        #expect(unknown.status == 400)
        #expect((unknown.body?["message"] as? String)?.contains("deafen") == true)
        #expect(try server.request("PATCH", "\(room)/00000000-0000-4000-8000-000000000000", body: ["command": "mute"]).status == 404)
        #expect(try server.request("GET", "/calling/v1/conferences/id/nobody-here").status == 404)
        #expect(try server.request("PUT", room).status == 405)
        participant.process.interrupt()
        #expect(try participant.waitForExit(timeout: 20) == 0)
    }
}

/// One `GET` with Basic `credentials` and `Connection: close` over a plain socket: the raw
/// response (head and body) once the server closes, at most 10 s.
func rawGet(_ server: ParleydInstance, _ path: String, credentials: String) throws -> String {
    let socket = try TCPSocket.connect(to: try SocketAddress(parsing: "127.0.0.1:\(server.port)"), timeout: .seconds(5))
    defer { socket.close() }
    let basic = Data(credentials.utf8).base64EncodedString()
    _ = try socket.write(Array("GET \(path) HTTP/1.1\r\nHost: x\r\nAuthorization: Basic \(basic)\r\nConnection: close\r\n\r\n".utf8))
    var received: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    let deadline = ContinuousClock.now.advanced(by: .seconds(10))
    reading: while ContinuousClock.now < deadline {
        guard socket.waitUntilReadable(timeout: .milliseconds(200)) else { continue }
        switch try? socket.read(into: &buffer) {
        case .bytes(let count)?: received += buffer[0..<count]
        case .wouldBlock?: continue
        case .endOfStream?, nil: break reading
        }
    }
    return String(decoding: received, as: UTF8.self)
}

extension EndToEndRealTimeMediaTests.ConferenceRoomTests {
    /// A 16 kHz room with hold music: the first participant, alone, hears the music; once
    /// a second joins, it hears the second's tone and no more music.
    @Test func aParticipantAloneHearsTheHoldMusicUntilSomeoneJoins() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("parley-e2e-moh-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let music = directory.appendingPathComponent("moh.wav").path
        var tone = ToneGenerator(frequency: 500, amplitude: 0.3, sampleRate: 16_000)
        try WAVFile(sampleRate: 16_000, channels: 1, samples: tone.next(count: 16_000)).write(path: music)
        let server = try ParleydInstance(flags: ["--conference-rate", "16000", "--conference-hold-music", music])
        let recording = directory.appendingPathComponent("first.wav").path
        let first = try SoftphoneProcess("conference first", ["conference", "lobby"] + server.clientFlags(as: "first")
            + ["--tone", "1200", "--record", recording, "--duration", "60"])
        try first.waitForEvent("established", timeout: 20)
        Thread.sleep(forTimeInterval: 3)
        let second = try SoftphoneProcess("conference second", ["conference", "lobby"] + server.clientFlags(as: "second")
            + ["--tone", "800", "--duration", "60"])
        try second.waitForEvent("established", timeout: 20)
        Thread.sleep(forTimeInterval: 3)
        first.process.interrupt()
        second.process.interrupt()
        #expect(try first.waitForExit(timeout: 20) == 0, "\(first.report)")
        #expect(try second.waitForExit(timeout: 20) == 0, "\(second.report)")

        let levels = try ToneLevels(path: recording, frequencies: [500, 800, 1200])
        // The last 2 s (before the last 0.5): the second participant, not the music.
        let together = levels.window(endingSecondsBeforeEnd: 0.5, seconds: 2)
        #expect(together.share(of: 800, above: -40) > 0.9)
        #expect(together.share(of: 500, above: -40) < 0.1)
        // The first 2 s after the first 0.5: alone, with the music.
        let alone = ToneLevels(frames: Array(levels.frames.dropFirst(25).prefix(100)))
        #expect(alone.share(of: 500, above: -40) > 0.9)
        #expect(alone.share(of: 1200, above: -40) < 0.05)
    }

    /// A participant whose process dies (kill -9) leaves the room within the reconnect
    /// grace: its call ends and the others stay.
    @Test func aParticipantThatDiesLeavesTheRoom() throws {
        let server = try ParleydInstance(flags: ["--reconnect-grace", "2", "--media-timeout", "3"])
        let staying = try SoftphoneProcess("conference staying", ["conference", "crash"] + server.clientFlags(as: "staying") + ["--duration", "60"])
        let dying = try SoftphoneProcess("conference dying", ["conference", "crash"] + server.clientFlags(as: "dying") + ["--duration", "60"])
        try staying.waitForEvent("established", timeout: 20)
        let dyingCall = try #require(try dying.waitForEvent("established", timeout: 20)["callId"] as? String)
        let room = "/calling/v1/conferences/id/crash"
        #expect((try server.request("GET", room).body?["participants"] as? [[String: Any]])?.count == 2)
        dying.process.killHard()
        let deadline = ContinuousClock.now.advanced(by: .seconds(15))
        var remaining: [[String: Any]] = []
        repeat {
            Thread.sleep(forTimeInterval: 0.5)
            remaining = try server.request("GET", room).body?["participants"] as? [[String: Any]] ?? []
        } while remaining.count != 1 && ContinuousClock.now < deadline
        #expect(remaining.count == 1)
        #expect(remaining.first?["cli"] as? String == "staying")
        let record = try server.get("/v1/calls/\(dyingCall)")
        #expect(record.body?["state"] as? String == "ended", "\(String(describing: record.body))")
        #expect(staying.process.isRunning)
        staying.process.interrupt()
        #expect(try staying.waitForExit(timeout: 20) == 0)
    }
}
