public import ParleyPush
import ParleyCrypto
public import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The APNs + FCM emulator (`scripts/push-emulator/emulator.py`) as a child process on a
/// loopback port, with fresh keys, and its control endpoints.
public final class ProviderEmulator: Sendable {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    public static let repositoryRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    private let process: Process
    /// `https://127.0.0.1:<port>` (HTTP/2 over TLS, ALPN h2).
    public let baseURL: String
    /// The emulator's self-signed certificate, for ``HTTP2Client``'s `caFile`.
    public let caFile: String
    public let apns: APNsCredentials
    public let fcm: FCMCredentials
    public let projectID = "parley-test"
    private let control: HTTP2Client

    /// Starts the emulator; waits at most 10 s for it to listen.
    public init() throws {
        let apnsKey = try ES256Key.generate()
        let fcmKey = try RS256Key.generate()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("parley-push-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let clientEmail = "parley-push@parley-test.iam.gserviceaccount.com"
        // The emulator listens on a port the OS picks, so the full token URI (the
        // assertions' `aud`) is sent to it once it listens.
        let configPath = directory.appendingPathComponent("config.json")
        let certificatePath = directory.appendingPathComponent("emulator-cert.pem").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", Self.repositoryRoot.appendingPathComponent("scripts/push-emulator/emulator.py").path,
                             "--config", configPath.path, "--tls-cert-out", certificatePath]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle(forWritingAtPath: "/dev/null")
        let config: [String: Any] = [
            "apns": ["teamId": "TEAM123456", "keyId": "KEY1234567", "publicKeyPem": try apnsKey.publicKeyPEM()],
            "fcm": ["clientEmail": clientEmail, "publicKeyPem": try fcmKey.publicKeyPEM(), "tokenUri": "/token", "projectId": projectID],
        ]
        try JSONSerialization.data(withJSONObject: config).write(to: configPath)
        try process.run()
        self.process = process
        let line = try Self.readLine(output.fileHandleForReading, timeoutSeconds: 10)
        guard line.hasPrefix("listening "), let port = Int(line.dropFirst("listening ".count)) else {
            process.terminate()
            throw Failure(description: "emulator did not start: \(line)")
        }
        baseURL = "https://127.0.0.1:\(port)"
        caFile = certificatePath
        apns = try APNsCredentials(teamID: "TEAM123456", keyID: "KEY1234567", privateKeyPEM: try apnsKey.privateKeyPEM())
        let account: [String: Any] = [
            "type": "service_account", "project_id": projectID, "private_key_id": "0123456789abcdef",
            "private_key": try fcmKey.privateKeyPEM(), "client_email": clientEmail, "token_uri": baseURL + "/token",
        ]
        let json = String(decoding: try JSONSerialization.data(withJSONObject: account), as: UTF8.self)
        fcm = try FCMCredentials(serviceAccountJSON: json)
        control = try HTTP2Client(timeoutMilliseconds: 5_000, caFile: certificatePath)
        // The emulator compares `aud` with its configured token URI: tell it the full one.
        _ = try post("/control/token-uri", ["tokenUri": baseURL + "/token"])
    }

    deinit { stop() }

    /// Stops the emulator: SIGTERM, then SIGKILL if it is still running after 2 s.
    /// (Foundation's `waitUntilExit` spins forever off the main thread on Linux.)
    public func stop() {
        let pid = process.processIdentifier
        guard pid > 0 else { return }
        kill(pid, SIGTERM)
        for _ in 0..<200 {
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) != 0 { return }
            usleep(10_000)
        }
        kill(pid, SIGKILL)
        var status: Int32 = 0
        _ = waitpid(pid, &status, 0)
    }

    public var endpoints: PushEndpoints { .emulator(baseURL) }

    /// The emulator as two APNs environments: production at the base URL, the sandbox at
    /// `<base>/sandbox` (see ``knownAPNsTokens(production:sandbox:)``).
    public var endpointsWithSandbox: PushEndpoints {
        PushEndpoints(apnsProduction: baseURL, apnsDevelopment: baseURL + "/sandbox", fcm: baseURL)
    }

    /// One scripted answer: a status, optionally an APNs reason and a `retry-after` value
    /// sent as given (delta-seconds or an HTTP date).
    public struct ScriptedAnswer: Sendable {
        public var status: Int
        public var reason: String?
        public var retryAfter: String?

        public init(_ status: Int, reason: String? = nil, retryAfter: String? = nil) {
            self.status = status
            self.reason = reason
            self.retryAfter = retryAfter
        }

        var json: [String: Any] {
            var object: [String: Any] = ["status": status]
            if let reason { object["reason"] = reason }
            if let retryAfter { object["retryAfter"] = retryAfter }
            return object
        }
    }

    /// Scripts the next answers: e.g. `script(apns: [410])`, `script(fcm: [503])`.
    public func script(apns: [Int] = [], fcm: [Int] = []) throws {
        _ = try post("/control/script", ["apns": apns, "fcm": fcm])
    }

    /// Scripts the next answers with reasons or `retry-after` headers.
    public func script(apnsAnswers: [ScriptedAnswer] = [], fcmAnswers: [ScriptedAnswer] = []) throws {
        _ = try post("/control/script", ["apns": apnsAnswers.map(\.json), "fcm": fcmAnswers.map(\.json)])
    }

    /// Says which tokens each APNs environment knows; from then on a token sent to an
    /// environment that does not know it gets 400 `BadDeviceToken`, as Apple answers.
    public func knownAPNsTokens(production: [String], sandbox: [String]) throws {
        _ = try post("/control/apns-tokens", ["production": production, "sandbox": sandbox])
    }

    /// Every provider request seen so far (each a JSON object, see the emulator's doc).
    public func requests() throws -> [[String: Any]] {
        let body = try post("/control/requests", [:])
        return (try JSONSerialization.jsonObject(with: Data(body))) as? [[String: Any]] ?? []
    }

    private func post(_ path: String, _ object: [String: Any]) throws -> [UInt8] {
        let body = Array(try JSONSerialization.data(withJSONObject: object))
        let response = try control.send(PushRequest(url: baseURL + path, headers: [("content-type", "application/json")], body: body))
        guard response.status == 200 else { throw Failure(description: "\(path): status \(response.status)") }
        return response.body
    }


    private static func readLine(_ handle: FileHandle, timeoutSeconds: Double) throws -> String {
        let box = LineBox()
        let thread = Thread {
            var data = Data()
            while !data.contains(0x0A) {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                data.append(chunk)
            }
            box.set(String(decoding: data.prefix { $0 != 0x0A }, as: UTF8.self))
        }
        thread.start()
        guard let line = box.wait(seconds: timeoutSeconds) else { throw Failure(description: "emulator gave no port in time") }
        return line
    }
}

/// One line handed from a reader thread. `@unchecked Sendable`: guarded by `condition`.
private final class LineBox: @unchecked Sendable {
    private let condition = NSCondition()
    private var line: String?

    func set(_ value: String) {
        condition.lock()
        line = value
        condition.broadcast()
        condition.unlock()
    }

    func wait(seconds: Double) -> String? {
        let deadline = Date(timeIntervalSinceNow: seconds)
        condition.lock()
        defer { condition.unlock() }
        while line == nil { if !condition.wait(until: deadline) { break } }
        return line
    }
}
