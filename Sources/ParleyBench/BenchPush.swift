import Foundation
import ParleyCalling
import ParleyCrypto
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
    registry.deviceConnected(alice, resumed: false, now: CallTime(instant: .now, unixMillis: 0)).forEach { _ in }
    var samples: [Double] = []
    samples.reserveCapacity(calls)
    let clock = ContinuousClock()
    for index in 0..<calls {
        let callee = AppUser(applicationKey: app, userID: "bob\(index)")
        registry.setPushDevices(callee, deviceIDs: ["b1"])
        let start = SignalingMessage.CallStart(requestID: "r", callID: CallID.random(), to: .user(callee.userID), sdp: "v=0\r\n")
        let began = clock.now
        let now = CallTime(instant: began, unixMillis: 1_764_421_200_000)
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
        samples.append(Double(elapsed.components.attoseconds) / 1e12 + Double(elapsed.components.seconds) * 1e6)
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
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script, "--config", configPath, "--tls-cert-out", certPath]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try process.run()
        defer {
            kill(process.processIdentifier, SIGKILL)
            var status: Int32 = 0
            _ = waitpid(process.processIdentifier, &status, 0)
            try? FileManager.default.removeItem(at: directory)
        }
        // The first line is "listening <port>"; bounded by the emulator's own start.
        var line = Data()
        let reader = output.fileHandleForReading
        while !line.contains(0x0A) {
            let chunk = reader.availableData
            if chunk.isEmpty { break }
            line.append(chunk)
        }
        let text = String(decoding: line.prefix { $0 != 0x0A }, as: UTF8.self)
        guard text.hasPrefix("listening "), let port = Int(text.dropFirst(10)) else { return "push      pushes/s: emulator did not start (python3 with h2?)" }
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
