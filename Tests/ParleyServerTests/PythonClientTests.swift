import Foundation
import ParleyMediaCore
import ParleyServer
import Synchronization
import Testing

/// The Python client (scripts/pyclient/parley_client.py), written from docs/protocol.md and
/// docs/auth.md alone, against a real server: if these pass, the page is enough to write a
/// client. Both parties are Python clients (separate processes, aiortc media), so neither
/// side of any call is our own code. They start Python processes with second-long
/// timeouts, so they run in the one-at-a-time pass with the real-time suites.
extension RealTimeMediaTests {
@Suite(.serialized) struct PythonClientTests {
    /// Bob acknowledges, rings for 7 s, then declines. The server's heartbeat is 3 s (closing
    /// after 6 s of silence), so both clients stay connected only by sending `ping` as the
    /// page says.
    @Test func pythonCalleeDeclines() async throws {
        let harness = try PythonClientRun.harness(heartbeat: .seconds(3))
        let (alice, bob) = try await PythonClientRun.call(harness, bob: ["--decline", "--ring-seconds", "7"],
                                                          alice: ["--tone", "440"])
        for client in [alice, bob] {
            #expect(client.status == 0, "\(client.transcript)")
            #expect(client.violations.isEmpty, "\(client.transcript)")
            #expect(client.done?["cause"] as? String == "denied", "\(client.transcript)")
            #expect(client.events("closed").first?["code"] as? Int == 1000, "\(client.transcript)")
        }
        #expect(alice.seen == ["result", "call.media", "call.progress", "call.ringing", "call.ended"], "\(alice.transcript)")
        #expect(bob.seen == ["call.incoming", "call.ended"], "\(bob.transcript)")
        let incoming = try #require(bob.events("call.incoming").first)
        #expect((incoming["from"] as? [String: Any])?["address"] as? String == "alice")
        #expect((incoming["headers"] as? [String: Any])?["X-Order"] as? String == "1187")
        // protocol.md, call.ended: rungTime is the caller's; the acknowledging callee has none.
        #expect(alice.endedDetails.keys.contains("rungTime"), "\(alice.transcript)")
        #expect(!bob.endedDetails.keys.contains("rungTime"), "\(bob.transcript)")
    }

    /// Alice (the Python caller) hangs up while Bob rings: `canceled` on both sides.
    @Test func pythonCallerCancelsWhileRinging() async throws {
        let harness = try PythonClientRun.harness()
        let (alice, bob) = try await PythonClientRun.call(harness, bob: ["--ignore"], alice: ["--cancel-after", "1.5"])
        for client in [alice, bob] {
            #expect(client.status == 0, "\(client.transcript)")
            #expect(client.violations.isEmpty, "\(client.transcript)")
            #expect(client.done?["cause"] as? String == "canceled", "\(client.transcript)")
        }
        #expect(alice.seen == ["result", "call.media", "call.progress", "call.ringing", "call.ended"], "\(alice.transcript)")
        #expect(bob.seen == ["call.incoming", "call.ended"], "\(bob.transcript)")
    }

    /// A token signed with another secret: the `error` reply `token_bad_signature`, then the
    /// close 4001, and the client exits 1 with one `error` line instead of a traceback.
    @Test func wrongSecretIsRefusedWith4001() async throws {
        let harness = try PythonClientRun.harness()
        let wrongSecret = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="  // 32 zero bytes
        #expect(harness.application.secret != wrongSecret)
        let client = try PythonClientProcess(["listen", "--as", "bob", "--server", "http://\(harness.address)",
                                              "--app", harness.application.key, "--secret", wrongSecret, "--timeout", "10"])
        let run = try await client.finish(timeout: .seconds(20))
        #expect(run.status == 1, "\(run.transcript)")
        #expect(run.events("error.reply").first?["code"] as? String == "token_bad_signature", "\(run.transcript)")
        #expect(run.events("closed").first?["code"] as? Int == 4001, "\(run.transcript)")
        #expect(run.events("error").count == 1, "\(run.transcript)")
        #expect(!run.stderr.contains("Traceback"), "\(run.transcript)")
    }

    /// A user the application never saw: `result`, then `call.ended` with cause `error`
    /// and code `destination_not_found`, and no `call.media` in between.
    @Test func callToUnknownUserEndsWithDestinationNotFound() async throws {
        let harness = try PythonClientRun.harness()
        let alice = try PythonClientRun.start(harness, ["call", "nobody", "--as", "alice"])
        let run = try await alice.finish(timeout: .seconds(30))
        #expect(run.status == 0, "\(run.transcript)")
        #expect(run.seen == ["result", "call.ended"], "\(run.transcript)")
        let ended = try #require(run.events("call.ended").first, "\(run.transcript)")
        #expect(ended["cause"] as? String == "error")
        #expect((ended["error"] as? [String: Any])?["code"] as? String == "destination_not_found")
    }
}
}

extension RealTimeMediaTests {
    /// Audio both ways between two Python clients through the server's media anchor: Alice
    /// sends a 440 Hz tone, Bob a 1000 Hz WAV file; each records what it hears.
    @Suite(.serialized) struct PythonClientAudioTests {
        /// Alice calls, Bob answers, Alice hangs up after 3 s of talk.
        @Test func pythonCallerHangsUpAfterTalking() async throws {
            let harness = try PythonClientRun.harness()
            let directory = try PythonClientRun.temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let wav = directory + "/bob-1000.wav"
            var tone = ToneGenerator(frequency: 1000, amplitude: 0.3, sampleRate: 16_000)
            try WAVFile(sampleRate: 16_000, samples: tone.next(count: 16_000 * 10)).write(path: wav)

            let (alice, bob) = try await PythonClientRun.call(
                harness,
                bob: ["--answer", "--wav", wav, "--record", directory + "/bob.wav"],
                alice: ["--tone", "440", "--record", directory + "/alice.wav", "--hangup-after", "3"])
            try Self.checkTalk(alice: alice, bob: bob, aliceHears: 1000, bobHears: 440, seconds: 3,
                               aliceRecording: directory + "/alice.wav", bobRecording: directory + "/bob.wav")
        }

        /// Alice calls, Bob answers and hangs up after 3 s: the Python callee ends the call.
        @Test func pythonCalleeHangsUpAfterTalking() async throws {
            let harness = try PythonClientRun.harness()
            let directory = try PythonClientRun.temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            // Alice offers aiortc's whole codec list (Opus, PCMU, PCMA): the answer keeps Opus.
            // Bob answers `a=setup:passive`, which the server accepts as well (it is then
            // the DTLS client on Bob's leg too).
            let (alice, bob) = try await PythonClientRun.call(
                harness,
                bob: ["--answer", "--tone", "440", "--record", directory + "/bob.wav", "--hangup-after", "3",
                      "--answer-setup", "passive"],
                alice: ["--tone", "1000", "--record", directory + "/alice.wav", "--all-codecs"])
            try Self.checkTalk(alice: alice, bob: bob, aliceHears: 440, bobHears: 1000, seconds: 3,
                               aliceRecording: directory + "/alice.wav", bobRecording: directory + "/bob.wav",
                               bobDTLSRole: "server")
        }

        /// Bob's connection drops 1 s into the call and he stays away 2.5 s; Alice hangs up
        /// meanwhile. Bob resumes his session and then gets the `call.ended` he missed.
        @Test func pythonCalleeResumesAfterADroppedConnection() async throws {
            let harness = try PythonClientRun.harness()
            let (alice, bob) = try await PythonClientRun.call(
                harness,
                bob: ["--answer", "--tone", "1000", "--drop-after", "1", "--away-seconds", "2.5"],
                alice: ["--tone", "440", "--hangup-after", "2"])
            for client in [alice, bob] {
                #expect(client.status == 0, "\(client.transcript)")
                #expect(client.violations.isEmpty, "\(client.transcript)")
                #expect(client.done?["cause"] as? String == "hungUp", "\(client.transcript)")
            }
            #expect(bob.seen == ["call.incoming", "call.answered", "call.established", "call.ended"], "\(bob.transcript)")
            #expect(bob.events("closed").first?["code"] as? Int == 1006, "\(bob.transcript)")
            let hellos = bob.events("hello.ok")
            #expect(hellos.count == 2, "\(bob.transcript)")
            #expect(hellos.last?["resumed"] as? Bool == true, "\(bob.transcript)")
            #expect(hellos.first?["sessionId"] as? String == hellos.last?["sessionId"] as? String)
            // call.ended came after the resume, not before the drop.
            let order = bob.lines.compactMap { line in ["\"resumed\"", "\"call.ended\""].first { line.contains("{\"event\":\($0)") } }
            #expect(order == ["\"resumed\"", "\"call.ended\""], "\(bob.transcript)")
            // Bob heard Alice before his connection dropped: media does not depend on the WebSocket.
            let heard = bob.events("recording").first?["dominantHz"] as? Double ?? 0
            #expect(abs(heard - 440) < 5, "\(bob.transcript)")
        }

        /// What protocol.md ("Media", `call.media`, `call.incoming`, `call.ended`, the
        /// deviations) says of the SDP, the DTLS roles and the end details, as the clients saw it.
        static func checkMediaDescription(alice: PythonClientRun, bob: PythonClientRun, bobDTLSRole: String) throws {
            let answer = try #require(alice.events("call.media").first?["sdp"] as? [String: Any], "\(alice.transcript)")
            #expect(answer["setup"] as? String == "active")
            #expect(answer["iceLite"] as? Bool == true)
            #expect(answer["codecs"] as? [String] == ["opus/48000/2"])
            #expect(answer["candidates"] as? Int == 1)
            let offer = try #require(bob.events("call.incoming").first?["sdp"] as? [String: Any], "\(bob.transcript)")
            #expect(offer["setup"] as? String == "actpass")
            #expect(offer["iceLite"] as? Bool == true)
            #expect((offer["codecs"] as? [String])?.first == "opus/48000/2")
            let connected = { (client: PythonClientRun) in
                client.events("media.state").first { $0["state"] as? String == "connected" }?["dtlsRole"] as? String
            }
            #expect(connected(alice) == "server", "\(alice.transcript)")
            #expect(connected(bob) == bobDTLSRole, "\(bob.transcript)")
            for client in [alice, bob] {
                let media = client.events("hello.ok").first?["media"] as? [String: Any]
                #expect(media?["codecs"] as? [String] == ["opus/48000/2"], "\(client.transcript)")
                #expect(Set(["startedTime", "answeredTime", "establishedTime", "endedTime"])
                    .isSubset(of: client.endedDetails.keys), "\(client.transcript)")
            }
            #expect(Set(["progressedTime", "rungTime"]).isSubset(of: alice.endedDetails.keys))
            #expect(Set(["progressedTime", "rungTime"]).isDisjoint(with: bob.endedDetails.keys))
        }

        static func checkTalk(alice: PythonClientRun, bob: PythonClientRun, aliceHears: Double, bobHears: Double,
                              seconds: Double, aliceRecording: String, bobRecording: String,
                              bobDTLSRole: String = "client") throws {
            for client in [alice, bob] {
                #expect(client.status == 0, "\(client.transcript)")
                #expect(client.violations.isEmpty, "\(client.transcript)")
                #expect(client.done?["cause"] as? String == "hungUp", "\(client.transcript)")
            }
            #expect(alice.seen == ["result", "call.media", "call.progress", "call.ringing", "call.answered",
                                   "call.established", "call.ended"], "\(alice.transcript)")
            #expect(bob.seen == ["call.incoming", "call.answered", "call.established", "call.ended"], "\(bob.transcript)")
            try checkMediaDescription(alice: alice, bob: bob, bobDTLSRole: bobDTLSRole)
            for (client, path, expected) in [(alice, aliceRecording, aliceHears), (bob, bobRecording, bobHears)] {
                // Our own analysis of the file the client wrote, and the client's own report.
                let file = try WAVFile.read(path: path)
                let tail = Array(file.samples.suffix(file.sampleRate * 2))
                let heard = try #require(FrequencyAnalysis.dominantFrequency(samples: tail, sampleRate: file.sampleRate,
                                                                             range: 100...4000), "\(client.transcript)")
                #expect(abs(heard - expected) < 5, "heard \(heard) Hz, expected \(expected)\n\(client.transcript)")
                #expect(FrequencyAnalysis.rmsDBFS(samples: tail) > -30, "\(client.transcript)")
                let recording = try #require(client.events("recording").first, "\(client.transcript)")
                #expect(abs((recording["dominantHz"] as? Double ?? 0) - expected) < 5, "\(client.transcript)")
                // Arrival: audio within a second of call.established, and at least 80 % of
                // the 20 ms frames of the talk time.
                let first = recording["firstAudibleMsAfterEstablished"] as? Int
                #expect(first != nil && first! < 1000, "\(client.transcript)")
                let audible = recording["audibleFrames"] as? Int ?? 0
                #expect(Double(audible) >= 0.8 * seconds / 0.020, "\(audible) audible frames\n\(client.transcript)")
            }
        }
    }
}

/// One finished run of the Python client: its exit status and its JSON event lines.
struct PythonClientRun: Sendable {
    let status: Int32
    let lines: [String]
    let stderr: String

    /// A server for one test, on loopback; a short heartbeat makes the clients' pings matter.
    static func harness(heartbeat: Duration = .seconds(20)) throws -> ServerHarness {
        try ServerHarness { $0.heartbeatInterval = heartbeat }
    }

    static func temporaryDirectory() throws -> String {
        let path = NSTemporaryDirectory() + "parley-pyclient-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// Starts the client against `harness` with the application's key and secret.
    static func start(_ harness: ServerHarness, _ arguments: [String]) throws -> PythonClientProcess {
        try PythonClientProcess(arguments + ["--server", "http://\(harness.address)", "--app", harness.application.key,
                                             "--secret", harness.application.secret, "--loopback", "--timeout", "25"])
    }

    /// Bob listens (and is known to the application once `listening` shows), then Alice calls him.
    static func call(_ harness: ServerHarness, bob bobArguments: [String],
                     alice aliceArguments: [String]) async throws -> (alice: PythonClientRun, bob: PythonClientRun) {
        let bob = try start(harness, ["listen", "--as", "bob"] + bobArguments)
        do {
            try await bob.waitFor(event: "listening", timeout: .seconds(20))
        } catch {
            let run = try await bob.finish(timeout: .seconds(1))
            throw TestFailure("bob never listened: \(error)\n\(run.transcript)")
        }
        let alice = try start(harness, ["call", "bob", "--as", "alice", "--header", "X-Order=1187"] + aliceArguments)
        let aliceRun = try await alice.finish(timeout: .seconds(40))
        let bobRun = try await bob.finish(timeout: .seconds(15))
        return (aliceRun, bobRun)
    }

    /// Every event line named `name`, decoded.
    func events(_ name: String) -> [[String: Any]] {
        lines.compactMap { line -> [String: Any]? in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { return nil }
            return object["event"] as? String == name ? object : nil
        }
    }

    var done: [String: Any]? { events("done").last }
    /// `details` of the call's `call.ended`.
    var endedDetails: [String: Any] { events("call.ended").first?["details"] as? [String: Any] ?? [:] }
    /// The call's events in the order the client saw them (from `done`).
    var seen: [String] { done?["seen"] as? [String] ?? [] }
    var violations: [[String: Any]] { events("protocol.violation") + events("error") }
    var transcript: String { "exit \(status)\n" + lines.joined(separator: "\n") + "\n--- stderr ---\n" + stderr }
}

/// The client as a child process; its stdout lines and stderr are collected as they come.
final class PythonClientProcess: Sendable {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("scripts/pyclient/parley_client.py").path

    private let process: Process
    private let output = ClientOutput()

    init(_ arguments: [String]) throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", Self.script] + arguments
        let stdout = Pipe()
        let stderr = Pipe()
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        let output = self.output
        Self.collect(stdout.fileHandleForReading) { line in output.lines.withLock { $0.lines.append(line) } }
            ended: { output.lines.withLock { $0.ended = true } }
        Self.collect(stderr.fileHandleForReading) { line in
            output.errors.withLock { lines in
                lines.append(line)
                if lines.count > 60 { lines.removeFirst(lines.count - 60) }
            }
        } ended: {}
    }

    /// Reads `handle` line by line on a thread of its own until end of file.
    private static func collect(_ handle: FileHandle, line: @escaping @Sendable (String) -> Void,
                                ended: @escaping @Sendable () -> Void) {
        Thread.detachNewThread {
            var buffer = Data()
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                buffer.append(chunk)
                while let newline = buffer.firstIndex(of: 0x0A) {
                    line(String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self))
                    buffer = Data(buffer[(newline + 1)...])
                }
            }
            ended()
        }
    }

    /// Waits (bounded) until an event line named `event` has been printed.
    func waitFor(event: String, timeout: Duration) async throws {
        let deadline = ContinuousClock.now + timeout
        let needle = "{\"event\":\"\(event)\""
        while ContinuousClock.now < deadline {
            let (found, ended) = output.lines.withLock { ($0.lines.contains { $0.hasPrefix(needle) }, $0.ended) }
            if found { return }
            if ended { throw TestFailure("the client exited before \(event)") }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw TestFailure("no \(event) within \(timeout)")
    }

    /// Waits (bounded) for the exit, killing the client after `timeout`; then its run.
    func finish(timeout: Duration) async throws -> PythonClientRun {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        if process.isRunning {
            process.terminate()
            let kill = ContinuousClock.now + .seconds(3)
            while process.isRunning, ContinuousClock.now < kill { try await Task.sleep(for: .milliseconds(20)) }
        }
        // Let the reader threads take the last lines after the exit.
        let drain = ContinuousClock.now + .seconds(2)
        while !output.lines.withLock({ $0.ended }), ContinuousClock.now < drain { try await Task.sleep(for: .milliseconds(10)) }
        let status = process.isRunning ? -1 : process.terminationStatus
        return PythonClientRun(status: status, lines: output.lines.withLock { $0.lines },
                               stderr: output.errors.withLock { $0.joined(separator: "\n") })
    }

    deinit {
        if process.isRunning { process.terminate() }
    }
}

/// What a client printed: stdout lines (and whether stdout ended), the tail of stderr.
final class ClientOutput: Sendable {
    let lines = Mutex<(lines: [String], ended: Bool)>(([], false))
    let errors = Mutex<[String]>([])
}
