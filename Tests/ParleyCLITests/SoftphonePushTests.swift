import Foundation
import Testing
@testable import ParleyCLI

/// `parley listen`'s push flags: registering a token, and relaying a received push as a
/// woken app does. Parsing, the payload file, the controller's lines and statuses, and
/// the one-line errors of the real binary; the whole path against parleyd is in
/// `Tests/ParleyEndToEndTests/EndToEndPushTests.swift`.
@Suite struct SoftphonePushTests {
    static let key = "3f6c1f2e-8d3a-4b7e-9c1d-5a2b7e9f0c41"
    static let secret = "AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA="
    static let base = ["--server", "http://127.0.0.1:8080", "--app", key, "--secret", secret, "--as", "bob"]
    static let hexToken = "5b1c5e2a7b3d4c6e8f0a1b2c3d4e5f60718293a4b5c6d7e8f9012a3b4c5d6e7f"
    static let jws = "eyJhbGciOiJIUzI1NiIsInR5cCI6InBhcmxleS1wdXNoIn0.e30.TktilcIT0tSPz-9qCpaA9t42Abve07opYcP01jur8AE"
    static let id = "6f1c2a9e-3b7d-4c55-9a41-0e8f5d2b7c13"

    @Test func pushFlagsParse() throws {
        let options = try SoftphoneOptions.parse(command: "listen", Self.base + [
            "--push-token", Self.hexToken, "--push-app-id", "com.example.chat", "--push-environment", "sandbox",
            "--push-store", "bob.json", "--device-id", "bob-phone", "--relay-push", "push.json",
        ])
        #expect(options.pushToken == .init(token: Self.hexToken, service: .apnsVoip, environment: .sandbox, appID: "com.example.chat"))
        #expect(options.pushStorePath == "bob.json" && options.relayPushPath == "push.json")
        let fcm = try SoftphoneOptions.parse(command: "listen", Self.base + ["--push-token", "fcm:token-1", "--push-type", "fcm", "--push-app-id", "com.example"])
        #expect(fcm.pushToken == .init(token: "fcm:token-1", service: .fcm, environment: .production, appID: "com.example"))
        #expect(try SoftphoneOptions.parse(command: "listen", Self.base).pushToken == nil)
    }

    @Test(arguments: [
        (["--push-token", hexToken], "--push-token needs --push-app-id"),
        (["--push-token", "not-hex", "--push-app-id", "a"], "an APNs VoIP token is the PushKit token in hex"),
        (["--push-token", "abc", "--push-app-id", "a"], "an APNs VoIP token is the PushKit token in hex"),
        (["--push-token", "x y", "--push-type", "fcm", "--push-app-id", "a"], "--push-token must be 1-1024 bytes of printable ASCII"),
        (["--push-token", hexToken, "--push-app-id", "bad app"], "--push-app-id 'bad app' must be"),
        (["--push-token", "t", "--push-type", "fcm", "--push-app-id", "a", "--push-environment", "sandbox"], "FCM tokens have no environment"),
        (["--push-type", "fcm"], "go with --push-token"),
        (["--push-app-id", "a"], "go with --push-token"),
        (["--push-token", hexToken, "--push-app-id", "a", "--push-type", "gcm"], "--push-type is one of apnsVoip, fcm, not 'gcm'"),
        (["--push-token", hexToken, "--push-app-id", "a", "--push-environment", "dev"], "--push-environment is one of sandbox, production"),
        (["--relay-push", "p.json", "--device-id", "d"], "--relay-push needs --push-store FILE"),
        (["--relay-push", "p.json", "--push-store", "s.json"], "--relay-push needs --device-id"),
        (["--push-store", ""], "--push-store needs a file path"),
        (["--push-token", "a", "--push-token", "b"], "--push-token given twice"),
    ])
    func pushUsageErrors(extra: [String], message: String) {
        do {
            _ = try SoftphoneOptions.parse(command: "listen", extra + Self.base)
            Issue.record("accepted \(extra)")
        } catch {
            #expect(error.message.contains(message), "\(error.message)")
        }
    }

    @Test func pushFlagsAreForListenOnly() {
        #expect(throws: SoftphoneUsageError("unknown option '--push-token' for parley call")) {
            try SoftphoneOptions.parse(command: "call", ["alice", "--push-token", Self.hexToken] + Self.base)
        }
    }

    @Test func aPushPayloadIsItsJSONDataOrTheBareJWS() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("parley-cli-push-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        func file(_ text: String) throws -> String {
            let path = directory.appendingPathComponent(UUID().uuidString).path
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            return path
        }
        #expect(try SoftphoneCommand.loadPushPayload(path: file(#"{"aps":{},"parley":"\#(Self.jws)"}"#)) == ["parley": Self.jws])
        #expect(try SoftphoneCommand.loadPushPayload(path: file(Self.jws + "\n")) == ["parley": Self.jws])
        for bad in [#"{"aps":{}}"#, #"{"parley":7}"#, "{not json", "a.b", "a..c", "a.b.c d", ""] {
            #expect(throws: SoftphoneUsageError.self, "\(bad)") { try SoftphoneCommand.loadPushPayload(path: file(bad)) }
        }
        #expect(throws: SoftphoneUsageError.self) { try SoftphoneCommand.loadPushPayload(path: directory.appendingPathComponent("none").path) }
        let huge = try file(String(repeating: "a", count: SoftphoneCommand.maximumPushPayloadBytes + 1))
        #expect(throws: SoftphoneUsageError.self) { try SoftphoneCommand.loadPushPayload(path: huge) }
    }

    @Test func theControllerReportsPushOutcomes() throws {
        let options = try SoftphoneOptions.parse(command: "listen", Self.base + ["--answer", "--push-token", Self.hexToken, "--push-app-id", "com.example.chat"])
        var registering = SoftphoneController(options: options, formatter: SoftphoneFormatter(json: false), isTerminal: false)
        _ = registering.start(nowMs: 0)
        #expect(registering.handle(.pushRegistered(alreadyRegistered: false), nowMs: 5) == [.print("00:00:00.005 push token registered (apnsVoip)")])
        #expect(registering.handle(.pushRegistered(alreadyRegistered: true), nowMs: 6) == [.print("00:00:00.006 push token already registered (apnsVoip)")])
        #expect(registering.handle(.pushRelayed(callID: Self.id, caller: "alice"), nowMs: 7)
            == [.print("00:00:00.007 push from alice relayed (call \(Self.id))")])
        #expect(registering.handle(.pushRegistrationFailed(message: "push is unavailable on this server"), nowMs: 8)
            == [.error("cannot register the push token: push is unavailable on this server"), .terminateClient, .exit(.usage)])

        var expired = SoftphoneController(options: options, formatter: SoftphoneFormatter(json: true), isTerminal: false)
        _ = expired.start(nowMs: 0)
        #expect(expired.handle(.pushExpired(callID: Self.id, caller: "alice"), nowMs: 9) == [
            .print(#"{"event":"pushExpired","timeMs":9,"callId":"\#(Self.id)","from":"alice"}"#),
            .error("the push expired: a missed call from alice"), .terminateClient, .exit(.timeout),
        ])
        var refused = SoftphoneController(options: options, formatter: SoftphoneFormatter(json: false), isTerminal: false)
        _ = refused.start(nowMs: 0)
        #expect(refused.handle(.pushRefused(message: "not a Parley push"), nowMs: 9)
            == [.error("cannot relay the push: not a Parley push"), .terminateClient, .exit(.usage)])
    }

    @Test func pushEventsAsJSON() {
        let json = SoftphoneFormatter(json: true)
        #expect(json.line(.pushRegistered(pushType: "fcm", alreadyRegistered: false), callID: nil, timeMs: 1)
            == #"{"event":"pushRegistered","timeMs":1,"pushType":"fcm","already":false}"#)
        #expect(json.line(.pushRelayed(caller: "alice"), callID: Self.id, timeMs: 2)
            == #"{"event":"pushRelayed","timeMs":2,"callId":"\#(Self.id)","from":"alice"}"#)
    }

    @Test func badPushFilesAreOneLineWithStatus2() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("parley-cli-push-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let payload = directory.appendingPathComponent("push.json").path
        try "garbage".write(toFile: payload, atomically: true, encoding: .utf8)
        let store = directory.appendingPathComponent("bob.json").path
        let listen = ["listen", "--server", "http://127.0.0.1:9"] + Self.base.dropFirst(2) + ["--device-id", "bob-phone"]
        let noStore = try ParleyProcess.run(listen + ["--push-store", store, "--relay-push", payload])
        #expect(noStore.status == 2 && noStore.stderr.hasPrefix("parley listen: --relay-push \(payload): no registration in --push-store"), "\(noStore.stderr)")
        try "{}".write(toFile: store, atomically: true, encoding: .utf8)
        let garbage = try ParleyProcess.run(listen + ["--push-store", store, "--relay-push", payload])
        #expect(garbage.status == 2 && garbage.stderr.hasPrefix("parley listen: --relay-push \(payload): neither"), "\(garbage.stderr)")
        #expect(garbage.stderr.filter { $0 == "\n" }.count == 1 && garbage.stdout.isEmpty)
        let badDirectory = try ParleyProcess.run(listen + ["--push-store", "/nonexistent/dir/bob.json"])
        #expect(badDirectory.status == 2 && badDirectory.stderr.contains("--push-store /nonexistent/dir/bob.json: directory"), "\(badDirectory.stderr)")
    }
}
