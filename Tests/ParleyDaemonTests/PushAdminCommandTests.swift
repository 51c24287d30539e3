import Foundation
import ParleyCrypto
import ParleyStore
import Testing
@testable import ParleyDaemon

/// `parleyd app push set-apns|set-fcm|show`: parsing, and running on a real store file.
@Suite struct PushAdminCommandTests {
    private func parse(_ arguments: [String]) -> Result<DaemonCommand, DaemonUsageError> {
        DaemonCommandLine.parse(arguments: arguments, environment: [:]) { path in throw DaemonUsageError("no file \(path)") }
    }

    @Test func parsesEachCommandAndRefusesBadUsage() {
        let options = AdminOptions(dataDirectory: "/d", json: false)
        #expect(parse(["app", "push", "set-apns", "K", "--team-id", "T", "--key-id=I", "--p8", "/k.p8", "--data-dir", "/d"])
                == .success(.appPush(options, .setAPNs(applicationKey: "K", teamID: "T", keyID: "I", p8Path: "/k.p8"))))
        #expect(parse(["app", "push", "set-fcm", "K", "--service-account", "/sa.json", "--data-dir=/d", "--json"])
                == .success(.appPush(AdminOptions(dataDirectory: "/d", json: true), .setFCM(applicationKey: "K", serviceAccountPath: "/sa.json"))))
        #expect(parse(["app", "push", "show", "K", "--data-dir", "/d"]) == .success(.appPush(options, .show(applicationKey: "K"))))
        for bad in [["app", "push"], ["app", "push", "nope", "K"], ["app", "push", "show"], ["app", "push", "show", "K", "L"],
                    ["app", "push", "set-apns", "K", "--team-id", "T"], ["app", "push", "set-fcm", "K", "--p8", "x"],
                    ["app", "push", "set-apns", "K", "--team-id", "T", "--team-id", "U", "--key-id", "I", "--p8", "p"]] {
            guard case .failure = parse(bad) else { Issue.record("accepted \(bad)"); continue }
        }
    }

    @Test func setsAndShowsCredentialsOnAStoreFile() throws {
        let directory = NSTemporaryDirectory() + "parley-push-admin-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let options = AdminOptions(dataDirectory: directory, json: false)
        _ = try AdminCommands.run(.appCreate(options, name: "demo"), now: 1)
        let store = try SQLiteStore(path: directory + "/" + SQLiteStore.defaultFileName)
        let key = try #require(try store.applications().first).key

        let p8 = directory + "/AuthKey.p8"
        try ES256Key.generate().privateKeyPEM().write(toFile: p8, atomically: true, encoding: .utf8)
        let set = try PushAdminCommands.run(.setAPNs(applicationKey: key, teamID: "TEAM123456", keyID: "KEY1234567", p8Path: p8), options: options, now: 2)
        #expect(set.contains("team TEAM123456"))
        let shown = try PushAdminCommands.run(.show(applicationKey: key), options: options, now: 3)
        #expect(shown.contains("apns: team TEAM123456, key KEY1234567"))
        #expect(shown.contains("fcm:  not set"))
        #expect(!shown.contains("PRIVATE KEY"))
        #expect(try store.pushCredentials(applicationKey: key).map(\.provider) == [.apns])

        // A file that is not a P-256 key, an unknown application, a bad service account: refused, nothing stored.
        try "not a key".write(toFile: directory + "/bad.p8", atomically: true, encoding: .utf8)
        #expect(throws: (any Error).self) {
            try PushAdminCommands.run(.setAPNs(applicationKey: key, teamID: "T", keyID: "K", p8Path: directory + "/bad.p8"), options: options, now: 4)
        }
        #expect(throws: (any Error).self) {
            try PushAdminCommands.run(.setAPNs(applicationKey: "nope", teamID: "T", keyID: "K", p8Path: p8), options: options, now: 4)
        }
        try "{}".write(toFile: directory + "/sa.json", atomically: true, encoding: .utf8)
        #expect(throws: (any Error).self) {
            try PushAdminCommands.run(.setFCM(applicationKey: key, serviceAccountPath: directory + "/sa.json"), options: options, now: 4)
        }
        #expect(try store.pushCredentials(applicationKey: key).count == 1)
    }
}
