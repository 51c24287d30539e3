import Foundation
import ParleyMediaCore
import Testing

extension EndToEndRealTimeMediaTests.SIPInteropBaresipTests {
    /// A parleyd recording into `recordings`, whose trunk is `trunk`, whose application
    /// dials `+46` numbers, with `number` routed by a test backend answering from `script`
    /// (set before the restart, so the first call finds it), and `extraFlags`.
    static func recordingGateway(trunk: String, number: String, scratch: URL, recordings: URL, extraFlags: [String] = [],
                                 script: [String: Any]) throws -> (server: ParleydInstance, backend: TestBackend) {
        try FileManager.default.createDirectory(at: recordings, withIntermediateDirectories: true)
        let server = try ParleydInstance(flags: [
            "--sip-listen", "127.0.0.1:0", "--sip-trunk", "sip:\(trunk);transport=udp", "--recording-directory", recordings.path,
        ] + extraFlags) { key in ["--sip-number", "\(number)=\(key)"] }
        try server.admin(["set-dialling", server.applicationKey, "--allow-prefix", "+46"])
        let backend = try TestBackend(directory: scratch, applicationKey: server.applicationKey, secret: server.secret, script: script)
        try server.admin(["callback", "set", server.applicationKey, "http://127.0.0.1:\(backend.port)/sinch/callback", "--timeout-ms", "3000"])
        server.process?.killHard()
        try server.start()
        return (server, backend)
    }

    /// The notify's file, checked: signed, naming the call, `recording_finished`, a
    /// `file://` URL of `{callid}.wav` in `recordings`. Its two channels are written
    /// beside it as mono files, to be analysed like a phone's recording.
    static func recordedChannels(notifiedBy backend: TestBackend, callID: String, recordings: URL,
                                 sourceLocation: SourceLocation = #_sourceLocation) throws -> (left: String, right: String) {
        let notify = try backend.waitFor("notify")
        #expect(notify.verified, sourceLocation: sourceLocation)
        #expect(notify.body["callid"] as? String == callID && notify.body["type"] as? String == "recording_finished",
                "\(notify.body)", sourceLocation: sourceLocation)
        let path = recordings.resolvingSymlinksInPath().appendingPathComponent("\(callID).wav").path
        #expect(notify.body["destination"] as? String == "file://" + path, "\(notify.body)", sourceLocation: sourceLocation)
        let wav = try WAVFile.read(path: path)
        #expect(wav.channels == 2 && wav.sampleRate == 16_000, "\(wav.channels) x \(wav.sampleRate)", sourceLocation: sourceLocation)
        var paths: [String] = []
        for channel in 0..<2 {
            let mono = stride(from: channel, to: wav.samples.count, by: 2).map { wav.samples[$0] }
            let out = recordings.appendingPathComponent("channel-\(channel).wav").path
            try WAVFile(sampleRate: wav.sampleRate, samples: mono).write(path: out)
            paths.append(out)
        }
        return (paths[0], paths[1])
    }

    /// A phone (1000 Hz) calls a number whose backend answers `startRecording` then
    /// `connectPstn` to a second phone (440 Hz): the call is bridged, transcoded since it
    /// is recorded (both phones speak PCMU, which would relay), and both phones hear each
    /// other; when the caller hangs up, the backend gets a signed notify naming
    /// `{callid}.wav`, whose left channel holds the caller's tone and right the callee's.
    @Test func aBridgedCallRecordedByTheBackendHoldsBothPhonesTones() throws {
        let scratch = try Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let recordings = scratch.appendingPathComponent("recordings")
        let callee = try BaresipPeer(user: "+4615550202", tone: 440)
        let caller = try BaresipPeer(user: "+4615550101", tone: 1000)
        let (server, backend) = try Self.recordingGateway(trunk: callee.address, number: "+46700000090", scratch: scratch,
                                                          recordings: recordings, script: [
            "ice": ["instructions": [["name": "startRecording", "options": ["format": "mp3", "notificationEvents": true]]],
                    "action": ["name": "connectPstn", "number": "+4615550202", "maxDuration": 60]],
        ])
        let sipPort = try Self.sipPort(of: server)
        try caller.command("dial", "sip:+46700000090@127.0.0.1:\(sipPort)")
        let callID = try #require(try backend.waitFor("ice").body["callid"] as? String)
        try callee.waitForCall(timeout: 20)
        try caller.waitForCall(timeout: 20)
        try Self.talkAndHangUp(caller: caller, callee: callee, hangingUp: caller)
        let recordingLines = (server.process?.errorText ?? "").split(separator: "\n").filter { $0.contains("recording.") }
        #expect(recordingLines.contains { $0.contains("recording.started") }, "\(recordingLines)")

        let (left, right) = try Self.recordedChannels(notifiedBy: backend, callID: callID, recordings: recordings)
        try Self.expectTone(1000, in: left, minimumRatio: 0.75)
        try Self.expectTone(440, in: right, minimumRatio: 0.75)
        // Each channel holds one phone only: over the whole file (a window long enough that
        // the other tone's leakage is not counted), the other phone's tone is far below.
        let leftSamples = try WAVFile.read(path: left).samples, rightSamples = try WAVFile.read(path: right).samples
        #expect(FrequencyAnalysis.toneLevelDBFS(samples: leftSamples, sampleRate: 16_000, frequency: 440) < -40)
        #expect(FrequencyAnalysis.toneLevelDBFS(samples: rightSamples, sampleRate: 16_000, frequency: 1000) < -40)
        let log = (server.process?.errorText ?? "").split(separator: "\n")
        #expect(log.contains { $0.contains("media.bridge") && $0.contains("transcode") }, "\(log.filter { $0.contains("media.") })")
        #expect(log.contains { $0.contains("recording.format") && $0.contains("asked=mp3") })
        #expect(log.contains { $0.contains("recording.finished") && $0.contains("dropped=0") })
    }

    /// A call parleyd answers itself: `startRecording`, then `playFiles` of a 440 Hz file
    /// from the prompt directory, then `hangup`. The phone sends 1000 Hz: the recording's
    /// left channel holds it, the right the prompt; the notify follows parleyd's BYE.
    @Test func aCallTheServerAnsweredIsRecordedWithItsPrompt() throws {
        let scratch = try Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let recordings = scratch.appendingPathComponent("recordings")
        let prompts = scratch.appendingPathComponent("prompts")
        try FileManager.default.createDirectory(at: prompts, withIntermediateDirectories: true)
        var tone = ToneGenerator(frequency: 440, amplitude: 0.3, sampleRate: 16_000)
        try WAVFile(sampleRate: 16_000, samples: tone.next(count: 16_000 * 5)).write(path: prompts.appendingPathComponent("tone.wav").path)
        let phone = try BaresipPeer(user: "+4615550101", tone: 1000)
        let (server, backend) = try Self.recordingGateway(
            trunk: phone.address, number: "+46700000089", scratch: scratch, recordings: recordings,
            extraFlags: ["--prompt-directory", prompts.path], script: [
                "ice": ["instructions": [["name": "startRecording"], ["name": "playFiles", "ids": ["tone"]]],
                        "action": ["name": "hangup"]],
            ])
        let sipPort = try Self.sipPort(of: server)
        try phone.command("dial", "sip:+46700000089@127.0.0.1:\(sipPort)")
        let callID = try #require(try backend.waitFor("ice").body["callid"] as? String)
        try phone.waitForCall(timeout: 10)
        try phone.waitForCallEnd(timeout: 20)
        let heard = try phone.receivedRecording().path
        phone.stop()
        try Self.expectTone(440, in: heard, minimumRatio: 0.75)

        let (left, right) = try Self.recordedChannels(notifiedBy: backend, callID: callID, recordings: recordings)
        try Self.expectTone(1000, in: left, minimumRatio: 0.75)
        try Self.expectTone(440, in: right, minimumRatio: 0.75)
        let dice = try backend.waitFor("dice")
        #expect(dice.body["reason"] as? String == "MANAGERHANGUP", "\(dice.body)")
    }

    /// Without `--recording-directory`, `startRecording` is refused with a log line and
    /// the call goes on unrecorded: bridged, both tones crossing, no notify.
    @Test func withoutARecordingDirectoryTheCallGoesOnUnrecorded() throws {
        let scratch = try Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let callee = try BaresipPeer(user: "+4615550202", tone: 440)
        let caller = try BaresipPeer(user: "+4615550101", tone: 1000)
        let (server, maybeBackend) = try Self.bridgeGateway(trunk: callee.address, scratch: scratch, rule: { "+46700000088=\($0)" }, script: [
            "ice": ["instructions": [["name": "startRecording"]], "action": ["name": "connectPstn", "number": "+4615550202"]],
        ])
        let backend = try #require(maybeBackend)
        let sipPort = try Self.sipPort(of: server)
        try caller.command("dial", "sip:+46700000088@127.0.0.1:\(sipPort)")
        _ = try backend.waitFor("ice")
        try callee.waitForCall(timeout: 20)
        try caller.waitForCall(timeout: 20)
        try Self.talkAndHangUp(caller: caller, callee: callee, hangingUp: callee)
        _ = try backend.waitFor("dice")
        let log = (server.process?.errorText ?? "").split(separator: "\n")
        #expect(log.contains { $0.contains("recording.refused") && $0.contains("no --recording-directory") }, "\(log.suffix(20))")
        // Unrecorded, the two PCMU phones' call relays as any bridge does.
        #expect(log.contains { $0.contains("media.bridge") && $0.contains("relay") })
        #expect(!backend.received.contains { $0["event"] as? String == "notify" })
    }
}
