import Foundation
import ParleyMediaCore
import Testing

extension EndToEndRealTimeMediaTests {
    /// Audio through the server's relay, and what happens when a party or the server dies.
    @Suite(.serialized) struct MediaTests {
        /// Each side sends its own tone (caller 440 Hz, callee 1000 Hz) and records what
        /// it hears: each recording must carry the other side's tone, in at least 95 % of
        /// its 20 ms frames since the first one arrived, and the receive statistics must
        /// show at least 95 % of the packets sent (by sequence number, and by the call's
        /// length at 50 packets/s).
        @Test func audioBothWays() throws {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("parley-e2e-audio-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let callerRecording = directory.appendingPathComponent("caller-hears.wav").path
            let calleeRecording = directory.appendingPathComponent("callee-hears.wav").path

            let server = try ParleydInstance()
            let bob = try SoftphoneProcess.listen("listen bob", on: server, as: "bob", ["--answer", "--tone", "1000", "--record", calleeRecording])
            let alice = try SoftphoneProcess.call("bob", on: server, as: "alice", ["--duration", "5", "--tone", "440", "--record", callerRecording])
            #expect(try alice.waitForExit(timeout: 45) == 0, "\(alice.report)")
            #expect(try bob.waitForExit(timeout: 15) == 0, "\(bob.report)")

            for (recording, frequency, side) in [(callerRecording, 1000.0, alice), (calleeRecording, 440.0, bob)] {
                let analysis = try RecordingAnalysis(path: recording, expectedFrequency: frequency)
                let dominant = try #require(analysis.dominantFrequency, "\(recording) is silent")
                #expect(abs(dominant - frequency) < 15, "\(recording): dominant \(dominant) Hz, expected \(frequency)")
                #expect(analysis.arrivalRatio >= 0.95, "\(recording): tone in \(analysis.arrivalRatio * 100) % of frames")
                #expect(analysis.audibleSeconds >= 4, "\(recording): \(analysis.audibleSeconds) s of audio")

                // Packets: at least 95 % of those expected by RTP sequence numbers arrived,
                // and their count fits the call's length at 50 packets/s, less half a second
                // for the path to open after `established` (both legs finish DTLS and start
                // their pacers then; about 0.25 s on this machine).
                let summary = try side.summary(timeout: 1)
                let duration = summary["durationSeconds"] as? Double ?? 0
                let received = summary["packetsReceived"] as? Int ?? 0
                let lost = summary["packetsLost"] as? Int ?? 0
                #expect(Double(received) >= 0.95 * Double(received + lost), "\(summary)")
                #expect(Double(received) >= 0.95 * 50 * (duration - 0.5), "received \(received) packets in \(duration) s: \(summary)")
            }
        }

        /// `parley listen --device=NAME` talks through an ALSA device: what its capture reads
        /// reaches the caller, and what the caller sends is what the device plays. The
        /// device is ALSA's file plugin over the null device (no sound card here): an
        /// `asym` PCM whose capture reads a raw 440 Hz tone and whose playback writes a raw
        /// file, defined in an `.asoundrc` under a HOME made for the listener alone.
        @Test func aDeviceListenerCapturesAndPlaysThroughALSA() throws {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("parley-e2e-device-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let microphone = directory.appendingPathComponent("microphone.raw").path
            let played = directory.appendingPathComponent("played.raw").path
            let callerRecording = directory.appendingPathComponent("caller-hears.wav").path
            // 20 s of 440 Hz, 48 kHz mono S16_LE: longer than the call, so capture never runs dry.
            var tone = ToneGenerator(frequency: 440, amplitude: 0.3, sampleRate: 48_000)
            let samples = tone.next(count: 48_000 * 20)
            try Data(samples.flatMap { withUnsafeBytes(of: $0.littleEndian) { Array($0) } }).write(to: URL(fileURLWithPath: microphone))
            let asoundrc = """
                pcm.parley_e2e_play { type file slave.pcm null file "\(played)" format raw }
                pcm.parley_e2e_capture { type file slave.pcm null file "\(directory.path)/capture-copy.raw" infile "\(microphone)" format raw }
                pcm.parley_e2e { type asym playback.pcm "parley_e2e_play" capture.pcm "parley_e2e_capture" }
                """
            try asoundrc.write(to: directory.appendingPathComponent(".asoundrc"), atomically: true, encoding: .utf8)

            let server = try ParleydInstance()
            let bob = try SoftphoneProcess.listen("listen bob --device", on: server, as: "bob", ["--answer", "--device=parley_e2e"],
                                                  environment: ["HOME": directory.path])
            let alice = try SoftphoneProcess.call("bob", on: server, as: "alice", ["--duration", "5", "--tone", "1000", "--record", callerRecording])
            #expect(try alice.waitForExit(timeout: 45) == 0, "\(alice.report)")
            #expect(try bob.waitForExit(timeout: 15) == 0, "\(bob.report)")

            let heard = try RecordingAnalysis(path: callerRecording, expectedFrequency: 440)
            #expect(heard.dominantFrequency.map { abs($0 - 440) < 15 } == true, "the caller heard \(String(describing: heard.dominantFrequency)) Hz")
            #expect(heard.audibleSeconds >= 4 && heard.arrivalRatio >= 0.95, "caller: \(heard.audibleSeconds) s, \(heard.arrivalRatio)")

            let bytes = try Data(contentsOf: URL(fileURLWithPath: played))
            let output = bytes.withUnsafeBytes { raw in (0..<bytes.count / 2).map { Int16(littleEndian: raw.loadUnaligned(fromByteOffset: $0 * 2, as: Int16.self)) } }
            let wavPath = directory.appendingPathComponent("played.wav").path
            try WAVFile(sampleRate: 48_000, channels: 1, samples: output).write(path: wavPath)
            let device = try RecordingAnalysis(path: wavPath, expectedFrequency: 1000)
            #expect(device.dominantFrequency.map { abs($0 - 1000) < 15 } == true, "the device played \(String(describing: device.dominantFrequency)) Hz")
            #expect(device.audibleSeconds >= 4, "the device played \(device.audibleSeconds) s of the caller's tone")
        }

        /// The recording is complete the moment `parley` exits, however it exits: the SDK
        /// reports a call's end only once its media has closed and the WAV is written, and
        /// the softphone exits only once the client has stopped. (It used to exit 300 ms
        /// after the end, before a long call's recording was written: an empty WAV.)
        @Test func theRecordingIsCompleteWhenTheSoftphoneExits() throws {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("parley-e2e-record-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let server = try ParleydInstance()

            // The caller hangs up after 12 s: the listener's call ends, it exits at once.
            let longCall = directory.appendingPathComponent("long.wav").path
            let bob = try SoftphoneProcess.listen("listen bob", on: server, as: "bob", ["--answer", "--record", longCall])
            let alice = try SoftphoneProcess.call("bob", on: server, as: "alice", ["--duration", "12"])
            #expect(try bob.waitForExit(timeout: 60) == 0, "\(bob.report)")
            let long = try RecordingAnalysis(path: longCall, expectedFrequency: 440)
            #expect(long.audibleSeconds >= 11, "\(longCall) at exit: \(long.audibleSeconds) s of the 12 s call")
            #expect(try alice.waitForExit(timeout: 15) == 0, "\(alice.report)")

            // Ctrl-C, then Ctrl-C again: the second leaves at once (130) unless the hang-up
            // was quicker (0); either way only after the recording is written.
            let cutShort = directory.appendingPathComponent("interrupted.wav").path
            let carol = try SoftphoneProcess.listen("listen carol", on: server, as: "carol", ["--answer", "--record", cutShort])
            let dave = try SoftphoneProcess.call("carol", on: server, as: "dave")
            try carol.waitForEvent("established", timeout: 30)
            Thread.sleep(forTimeInterval: 3)   // audio to record, not synchronisation
            carol.process.interrupt()
            try carol.waitForEvent("hangingUp", timeout: 5)
            carol.process.interrupt()
            let status = try carol.waitForExit(timeout: 30)
            #expect(status == 130 || status == 0, "\(carol.report)")
            let interrupted = try RecordingAnalysis(path: cutShort, expectedFrequency: 440)
            #expect(interrupted.audibleSeconds >= 2.5, "\(cutShort) at exit: \(interrupted.audibleSeconds) s")
            _ = try dave.waitForExit(timeout: 20)
        }

        /// A client killed with SIGKILL sends no hangup: its media stops, and the server
        /// ends the call for the other side as `inactive` within the media timeout.
        @Test func killedClientEndsTheCallAsInactive() throws {
            let server = try ParleydInstance(flags: ["--media-timeout", "3", "--reconnect-grace", "3"])
            let bob = try SoftphoneProcess.listen("listen bob", on: server, as: "bob", ["--answer"])
            let alice = try SoftphoneProcess.call("bob", on: server, as: "alice")
            try alice.waitForEvent("established", timeout: 30)
            try bob.waitForEvent("established", timeout: 10)
            bob.process.killHard()
            let killed = Date()
            #expect(try alice.waitForExit(timeout: 20) == 8, "inactive: \(alice.report)")
            #expect(Date().timeIntervalSince(killed) < 12, "ended within the media timeout and its margins")
            #expect(try alice.waitForEvent("ended", timeout: 1)["cause"] as? String == "inactive")
        }

        /// `kill -9` of parleyd mid-call, then a restart on the same data directory: the
        /// call's record, left open by the crash, is closed as `error` by the restart's
        /// recovery, and both clients learn that their call ended.
        @Test func killedServerRestartClosesTheCallRecord() throws {
            let server = try ParleydInstance(flags: ["--media-timeout", "3", "--reconnect-grace", "3"])
            let bob = try SoftphoneProcess.listen("listen bob", on: server, as: "bob", ["--answer"])
            let alice = try SoftphoneProcess.call("bob", on: server, as: "alice")
            let established = try alice.waitForEvent("established", timeout: 30)
            try bob.waitForEvent("established", timeout: 10)
            let callID = try #require(established["callId"] as? String)

            server.killHard()
            try server.start()

            // The SDK reconnects; the new server does not know the old session, so the
            // session's calls end as `inactive` (protocol.md, Reconnecting).
            for side in [alice, bob] {
                let ended = try side.waitForEvent("ended", timeout: 45)
                #expect(ended["callId"] as? String == callID)
                #expect(ended["cause"] as? String == "inactive", "\(side.report)")
            }
            #expect(try alice.waitForExit(timeout: 15) == 8, "\(alice.report)")
            #expect(try bob.waitForExit(timeout: 15) == 8, "\(bob.report)")

            let (status, record) = try server.get("/v1/calls/\(callID)")
            #expect(status == 200, "GET /v1/calls/\(callID): \(status)\n\(server.process?.report ?? "")")
            #expect(record?["state"] as? String == "ended", "\(record ?? [:])")
            #expect(record?["endCause"] as? String == "error", "\(record ?? [:])")
            #expect((record?["error"] as? [String: Any])?["code"] as? String == "server_restarted", "\(record ?? [:])")
        }
    }
}
