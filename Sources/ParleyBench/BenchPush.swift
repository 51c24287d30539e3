import ParleyWireCore
import ParleyNetLinux
import Foundation
import ParleyCallCore
import ParleyCrypto
import ParleyICECore
import ParleyMediaLegCore
import ParleyPush
import ParleySignaling
import Synchronization

// Push (docs/push.md): the server's CPU path from `call.start` to an offline user until
// the APNs request is built, and pushes per second over one HTTP/2 connection to the
// provider emulator (scripts/push-emulator, needs python3 with h2).

/// p50/p99 of the sans-I/O path: registry start (push reach) -> signed payload -> provider
/// token (cached) -> APNs request. Excludes the store read parleyd does in between.
func pushPathReport(calls: Int = 20_000) -> String {
    guard let key = try? ES256Key.generate(), let pem = try? key.privateKeyPEM(),
          let credentials = try? APNsCredentials(teamID: "TEAM123456", keyID: "KEY1234567", privateKeyPEM: pem)
    else { return "push      call to offline user -> request built: could not make a key" }
    var providerToken = APNsProviderToken(credentials: credentials)
    let app = "3f6c1f2e-8d3a-4b7e-9c1d-5a2b7e9f0c41"
    let alice = Device(user: AppUser(applicationKey: app, userID: "alice"), deviceID: "a1")
    let pushKey = [UInt8](repeating: 7, count: 32)
    var registry = CallRegistry()
    registry.deviceConnected(alice, resumed: false, now: ClockReading(instant: .now, unixMilliseconds: 0)).forEach { _ in }
    var samples: [Double] = []
    samples.reserveCapacity(calls)
    let clock = ContinuousClock()
    for index in 0..<calls {
        let callee = AppUser(applicationKey: app, userID: "bob\(index)")
        registry.setPushDevices(callee, deviceIDs: ["b1"])
        let start = SignalingMessage.CallStart(requestID: "r", callID: newCallID(), to: .user(callee.userID), sdp: "v=0\r\n")
        let began = clock.now
        let now = ClockReading(instant: began, unixMilliseconds: 1_764_421_200_000)
        let actions = registry.handleRequest(.callStart(start), from: alice, now: now)
        for case .push(let instruction) in actions {
            let payload = PushPayload(callID: instruction.callID, appKey: app, deviceID: "b1", from: .user("alice"),
                                      headers: instruction.headers, issuedAt: instruction.issuedTime, expiresAt: instruction.expiresTime)
            guard let jws = try? payload.signed(pushKey: pushKey), let token = try? providerToken.token(now: 1_764_421_200) else { continue }
            let request = PushRequest.apns(endpoints: .providers, environment: .production, deviceToken: "ab", appID: "com.example",
                                           providerToken: token, payloadJWS: jws)
            benchmarkSink &+= request.body.count
        }
        let elapsed = began.duration(to: clock.now)
        samples.append(elapsed.fractionalSeconds * 1e6)
        // End the call so the registry stays small.
        _ = registry.handleRequest(.callHangup(.init(requestID: "h", callID: start.callID)), from: alice, now: now)
    }
    samples.sort()
    let p50 = samples[samples.count / 2], p99 = samples[samples.count * 99 / 100]
    return String(format: "push      call.start to offline user -> APNs request built (no store read): p50 %.1f µs, p99 %.1f µs over %d calls",
                  p50, p99, calls)
}

/// Pushes per second to the emulator over one HTTP/2 connection (TLS, ALPN h2), one at
/// a time, with the CPU time of this process per push.
func pushThroughputReport(seconds: Double) -> String {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    let script = root.appendingPathComponent("scripts/push-emulator/emulator.py").path
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("parley-bench-push-\(UUID().uuidString)")
    do {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let key = try ES256Key.generate()
        let config = ["apns": ["teamId": "TEAM123456", "keyId": "KEY1234567", "publicKeyPem": try key.publicKeyPEM()]]
        let configPath = directory.appendingPathComponent("config.json").path
        let certPath = directory.appendingPathComponent("cert.pem").path
        try JSONSerialization.data(withJSONObject: config).write(to: URL(fileURLWithPath: configPath))
        let emulator = try BenchPushEmulator(script: script, configPath: configPath, certPath: certPath)
        defer {
            emulator.stop()
            try? FileManager.default.removeItem(at: directory)
        }
        guard let port = emulator.port else { return "push      pushes/s: emulator did not start (python3 with h2?)" }
        let credentials = try APNsCredentials(teamID: "TEAM123456", keyID: "KEY1234567", privateKeyPEM: try key.privateKeyPEM())
        var token = APNsProviderToken(credentials: credentials)
        let providerToken = try token.token(now: Int64(Date().timeIntervalSince1970))
        let client = try HTTP2Client(timeoutMilliseconds: 5_000, caFile: certPath)
        let endpoints = PushEndpoints.emulator("https://127.0.0.1:\(port)")
        let request = PushRequest.apns(endpoints: endpoints, environment: .production, deviceToken: "9f1c5e2a7b3d4c6e",
                                       appID: "com.example.chat", providerToken: providerToken, payloadJWS: "h.c.s")
        _ = try client.send(request)  // connect and handshake outside the measurement
        let cpuStart = processCPUSeconds()
        let wallStart = Date()
        var sent = 0, delivered = 0
        while Date().timeIntervalSince(wallStart) < seconds, sent < 1_000_000 {
            let response = try client.send(request)
            sent += 1
            if response.status == 200, response.httpVersion == 2 { delivered += 1 }
        }
        let wall = Date().timeIntervalSince(wallStart)
        let cpu = processCPUSeconds() - cpuStart
        return String(format: "push      APNs pushes over one HTTP/2 connection (TLS) to the emulator: %.0f pushes/s, %.0f µs of our CPU per push, %d/%d delivered (the Python emulator is the bottleneck)",
                      Double(sent) / wall, cpu / Double(max(sent, 1)) * 1e6, delivered, sent)
    } catch {
        return "push      pushes/s: \(error)"
    }
}

private func processCPUSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

/// Push-to-ring: a real `parleyd` (flags `--apns-url` ... to the emulator) calls an
/// offline callee with an APNs token; the bench plays the callee's phone, which relays
/// at once: as soon as the emulator holds the push (polled every millisecond), it
/// connects, says hello, sends `push.relay` and `call.ack`. Measured: from the push
/// being at the emulator to the caller's `call.ringing`, p50/p99 over `calls` calls.
func pushToRingReport(calls: Int = 30) -> String {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    let script = root.appendingPathComponent("scripts/push-emulator/emulator.py").path
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("parley-bench-ring-\(UUID().uuidString)")
    do {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let key = try ES256Key.generate()
        let config = ["apns": ["teamId": "TEAM123456", "keyId": "KEY1234567", "publicKeyPem": try key.publicKeyPEM()]]
        let configPath = directory.appendingPathComponent("config.json").path
        let certPath = directory.appendingPathComponent("cert.pem").path
        let p8Path = directory.appendingPathComponent("key.p8").path
        try JSONSerialization.data(withJSONObject: config).write(to: URL(fileURLWithPath: configPath))
        try key.privateKeyPEM().write(toFile: p8Path, atomically: true, encoding: .utf8)
        let emulator = try BenchPushEmulator(script: script, configPath: configPath, certPath: certPath)
        defer {
            emulator.stop()
            try? FileManager.default.removeItem(at: directory)
        }
        guard let port = emulator.port else { return "push      push-to-ring: emulator did not start (python3 with h2?)" }
        let base = "https://127.0.0.1:\(port)"
        let server = try ServerUnderTest(extraArguments: ["--apns-url", base, "--apns-sandbox-url", base, "--push-ca-file", certPath,
                                                          "--ring-timeout", "10"])
        defer { server.stop() }
        guard let executable = ServerUnderTest.executable else { return "push      push-to-ring: no parleyd" }
        let admin = try ChildProcess(path: executable, arguments: [
            "app", "push", "set-apns", server.credentials.key, "--team-id", "TEAM123456", "--key-id", "KEY1234567", "--p8", p8Path,
            "--data-dir", server.dataDirectory], pipeStdin: false, pipeStdout: true)
        guard admin.waitExit(timeoutMs: 20_000) else { return "push      push-to-ring: parleyd app push set-apns did not finish" }

        let token = "7e1c5e2a7b3d4c6e8f0a1b2c3d4e5f60718293a4b5c6d7e8f9012a3b4c5d6e7f"
        let registering = try BenchDevice(address: server.address, credentials: server.credentials, user: "bob", deviceID: "bob-phone")
        try registering.request { .pushRegister(.init(requestID: $0, pushType: .apnsVoip, token: token, environment: .sandbox, appID: "com.example.chat")) }
        registering.client.close()  // 1000: a logout, so bob is offline at once
        Thread.sleep(forTimeInterval: 0.2)

        let control = try HTTP2Client(timeoutMilliseconds: 5_000, caFile: certPath)
        func pushPayloads() throws -> [String] {
            let response = try control.send(PushRequest(url: base + "/control/requests", headers: [("content-type", "application/json")], body: Array("{}".utf8)))
            let list = (try JSONSerialization.jsonObject(with: Data(response.body))) as? [[String: Any]] ?? []
            return list.compactMap { entry in
                guard entry["provider"] as? String == "apns", entry["status"] as? Int == 200, let body = entry["body"] as? String,
                      let object = try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any] else { return nil }
                return object["parley"] as? String
            }
        }
        var core = MediaLegCore(configuration: try DeviceMedia.configuration(), localAddresses: [ICETransportAddress(ip: .ipv4(0x7F00_0001), port: 9)],
                                now: SystemClock.now(), random: SystemRandomNumberGenerator())
        let offer = try core.makeOffer()
        let alice = try BenchDevice(address: server.address, credentials: server.credentials, user: "alice", deviceID: "alice-phone")
        var samples: [Double] = []
        for index in 0..<calls {
          do {
            // The request log is cleared per call, so each poll stays one small answer.
            _ = try control.send(PushRequest(url: base + "/control/reset", headers: [("content-type", "application/json")], body: Array("{}".utf8)))
            let seen = try pushPayloads().count
            let callID = newCallID()
            try alice.send(.callStart(.init(requestID: alice.requestID(), callID: callID, to: .user("bob"), sdp: offer)))
            var payload: String?
            let deadline = Date(timeIntervalSinceNow: 10)
            while payload == nil, Date() < deadline {
                let payloads = try pushPayloads()
                if payloads.count > seen { payload = payloads.last } else { Thread.sleep(forTimeInterval: 0.001) }
            }
            guard let payload else { return "push      push-to-ring: no push reached the emulator (log: \(server.dataDirectory)/server.log)" }
            let pushed = wallSeconds()
            let bob = try BenchDevice(address: server.address, credentials: server.credentials, user: "bob", deviceID: "bob-phone")
            try bob.send(.pushRelay(.init(requestID: bob.requestID(), payload: payload)))
            try bob.expect(.callIncoming, callID: callID)
            try bob.send(.callAck(.init(requestID: bob.requestID(), callID: callID)))
            try alice.expect(.callRinging, callID: callID)
            samples.append((wallSeconds() - pushed) * 1000)
            // Hanging up while ringing ends the call as canceled; its call.ended is read
            // here so the next call's wait does not meet it.
            try alice.send(.callHangup(.init(requestID: alice.requestID(), callID: callID)))
            try alice.expect(.callEnded, callID: callID)
            _ = try? bob.expect(.callEnded, callID: callID)
            bob.client.close()
            Thread.sleep(forTimeInterval: 0.05)  // the logout lands before the next call
          } catch {
            return "push      push-to-ring: call \(index + 1): \(error)"
          }
        }
        alice.client.close()
        samples.sort()
        let p50 = samples[samples.count / 2], p99 = samples[min(samples.count - 1, samples.count * 99 / 100)]
        return String(format: "push      push-to-ring (push at the emulator -> device connects, hello, push.relay, call.ack -> caller's call.ringing), real parleyd: p50 %.2f ms, p99 %.2f ms over %d calls",
                      p50, p99, samples.count)
    } catch {
        return "push      push-to-ring: \(error)"
    }
}

/// The push provider emulator (scripts/push-emulator) as a child of the bench: started
/// with its config, TLS certificate written to `certPath`, port read from its first line.
/// Foundation's Process, not ChildProcess: it needs this environment's python3 and its h2
/// (ChildProcess gives children a bare PATH).
final class BenchPushEmulator {
    private let process = Process()
    /// The HTTPS port it listens on; nil when it did not start.
    private(set) var port: Int?

    init(script: String, configPath: String, certPath: String) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script, "--config", configPath, "--tls-cert-out", certPath]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try process.run()
        // The first line is "listening <port>"; bounded by the emulator's own start.
        var first = Data()
        while !first.contains(0x0A) {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            first.append(chunk)
        }
        let line = String(decoding: first.prefix { $0 != 0x0A }, as: UTF8.self)
        if line.hasPrefix("listening ") { port = Int(line.dropFirst(10)) }
    }

    func stop() {
        kill(process.processIdentifier, SIGKILL)
        var status: Int32 = 0
        _ = waitpid(process.processIdentifier, &status, 0)
    }
}
