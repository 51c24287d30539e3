import Foundation
import ParleyStore
import Testing
@testable import ParleyDaemon

/// `parleyd app callback set|show|clear`: parsing with its errors, and running on a real
/// store file (text and JSON).
@Suite struct CallbackAdminCommandTests {
    private func parse(_ arguments: [String]) -> Result<DaemonCommand, DaemonUsageError> {
        DaemonCommandLine.parse(arguments: arguments, environment: [:]) { path in throw DaemonUsageError("no file \(path)") }
    }

    private func error(_ arguments: [String]) -> String? {
        if case .failure(let error) = parse(arguments) { return error.message }
        return nil
    }

    @Test func parsesEachCommand() {
        let options = AdminOptions(dataDirectory: "/d", json: false)
        #expect(parse(["app", "callback", "set", "K", "https://b.example/cb", "--data-dir", "/d"])
                == .success(.appCallback(options, .set(applicationKey: "K", CallbackSettings(url: "https://b.example/cb")))))
        #expect(parse(["app", "callback", "set", "K", "https://b.example/cb", "--timeout-ms", "1500", "--events=ice,dice",
                       "--app-calls", "--ca-file", "/etc/parley/ca.pem", "--data-dir=/d", "--json"])
                == .success(.appCallback(AdminOptions(dataDirectory: "/d", json: true), .set(applicationKey: "K", CallbackSettings(
                    url: "https://b.example/cb", caFile: "/etc/parley/ca.pem", timeoutMilliseconds: 1500, events: [.ice, .dice],
                    appCalls: true)))))
        #expect(parse(["app", "callback", "show", "K", "--data-dir", "/d"]) == .success(.appCallback(options, .show(applicationKey: "K"))))
        #expect(parse(["app", "callback", "clear", "--data-dir", "/d", "K"]) == .success(.appCallback(options, .clear(applicationKey: "K"))))
        #expect(DaemonCommandLine.parse(arguments: ["app", "callback", "show", "K"], environment: ["PARLEY_DATA_DIR": "/env"], readFile: { _ in "" })
                == .success(.appCallback(AdminOptions(dataDirectory: "/env", json: false), .show(applicationKey: "K"))))
        #expect(parse(["app", "callback", "--help"]) == .success(.help))
    }

    @Test(arguments: [
        (["app", "callback"], "parleyd app callback needs a command: set, show or clear"),
        (["app", "callback", "delete", "K"], #"unknown app callback command "delete" (set, show, clear)"#),
        (["app", "callback", "show"], "parleyd app callback show needs the application KEY"),
        (["app", "callback", "show", "K", "L"], "parleyd app callback show takes one KEY, not 2"),
        (["app", "callback", "clear", "K", "--events", "ice"], "unknown flag --events for parleyd app callback clear (see parleyd --help)"),
        (["app", "callback", "set"], "parleyd app callback set needs the application KEY"),
        (["app", "callback", "set", "K"], "parleyd app callback set needs the callback URL after KEY"),
        (["app", "callback", "set", "K", "https://a.example", "https://b.example"], "parleyd app callback set takes KEY and one URL, not 2 URLs"),
        (["app", "callback", "set", "K", "ftp://b.example/cb"], #"callback URL "ftp://b.example/cb" is not an http:// or https:// URL"#),
        (["app", "callback", "set", "K", "b.example/cb"], #"callback URL "b.example/cb" is not an http:// or https:// URL"#),
        (["app", "callback", "set", "K", "https://u:p@b.example/cb"], #"callback URL "https://u:p@b.example/cb" has a user name or password (give neither in the URL)"#),
        (["app", "callback", "set", "K", "https://b.example:99999/"], #"callback URL "https://b.example:99999/" has a port that is not 1-65535"#),
        (["app", "callback", "set", "K", "https://b.example", "--events", "ice,ring"], #"--events: unknown event "ring" (expected ice,ace,dice,pie,notify)"#),
        (["app", "callback", "set", "K", "https://b.example", "--events", "ice,ice"], "--events: event ice is named twice"),
        (["app", "callback", "set", "K", "https://b.example", "--events="], "--events needs a value"),
        (["app", "callback", "set", "K", "https://b.example", "--timeout-ms", "99"], "--timeout-ms 99: expected a whole number of milliseconds from 100 to 30000"),
        (["app", "callback", "set", "K", "https://b.example", "--timeout-ms", "30001"], "--timeout-ms 30001: expected a whole number of milliseconds from 100 to 30000"),
        (["app", "callback", "set", "K", "https://b.example", "--timeout-ms", "3s"], "--timeout-ms 3s: expected a whole number of milliseconds from 100 to 30000"),
        (["app", "callback", "set", "K", "https://b.example", "--timeout-ms", "-5"], "--timeout-ms -5: expected a whole number of milliseconds from 100 to 30000"),
        (["app", "callback", "set", "K", "https://b.example", "--timeout-ms"], "--timeout-ms needs a value"),
        (["app", "callback", "set", "K", "https://b.example", "--timeout-ms", "100", "--timeout-ms", "200"], "--timeout-ms is given more than once"),
        (["app", "callback", "set", "K", "https://b.example", "--app-calls=yes"], "--app-calls takes no value"),
        (["app", "callback", "set", "K", "https://b.example", "--ca-file", "ca.pem"], "--ca-file ca.pem: give an absolute path (the server reads it, not this command)"),
        (["app", "callback", "set", "K", "http://b.example", "--ca-file", "/ca.pem"], "--ca-file needs an https:// callback URL"),
        (["app", "callback", "set", "K", "https://b.example", "--cli", "+4681"], "unknown flag --cli for parleyd app callback set (see parleyd --help)"),
    ])
    func refusesBadUsageClearly(_ arguments: [String], _ expected: String) {
        #expect(error(arguments) == expected)
    }

    @Test func theUsageNamesTheCommands() {
        let text = DaemonUsage.text
        for fragment in ["app callback set|show|clear KEY", "app callback set KEY URL [options]", "--timeout-ms N",
                         "--events LIST", "--app-calls", "--ca-file PATH", "app callback show KEY", "app callback clear KEY"] {
            #expect(text.contains(fragment), "\(fragment)")
        }
    }

    @Test func setsShowsAndClearsOnAStoreFile() throws {
        let directory = NSTemporaryDirectory() + "parley-callback-admin-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let options = AdminOptions(dataDirectory: directory, json: false)
        let json = AdminOptions(dataDirectory: directory, json: true)
        _ = try AdminCommands.run(.appCreate(options, name: "shop"), now: 1_764_421_200_000)
        let store = try SQLiteStore(path: directory + "/" + SQLiteStore.defaultFileName)
        let key = try #require(try store.applications().first).key

        // None at first, and show says what that means.
        #expect(try AdminCommands.run(.appCallback(options, .show(applicationKey: key)), now: 2) == """
            application \(key)  shop
              callback URL: none (no callbacks; calls to its numbers follow their --sip-number rules)

            """)

        // The defaults.
        let set = try AdminCommands.run(
            .appCallback(options, .set(applicationKey: key, CallbackSettings(url: "https://backend.example/sinch"))), now: 3)
        #expect(set == """
            set the callback settings of \(key)
            application \(key)  shop
              callback URL: https://backend.example/sinch
              CA file:      none (the system's CAs)
              timeout:      3000 ms
              events:       ice ace dice pie notify
              app calls:    routed without the backend

            """)
        #expect(try store.callbackSettings(applicationKey: key) == CallbackSettings(url: "https://backend.example/sinch"))

        // Everything given, with a CA file that holds a certificate; replaced as a whole.
        let caFile = directory + "/ca.pem"
        try "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n".write(toFile: caFile, atomically: true, encoding: .utf8)
        let full = CallbackSettings(url: "https://backend.example:8443/cb", caFile: caFile, timeoutMilliseconds: 1500,
                                    events: [.dice, .ice], appCalls: true)
        let changed = try AdminCommands.run(.appCallback(options, .set(applicationKey: key, full)), now: 4)
        #expect(changed.contains("  CA file:      \(caFile)\n"))
        #expect(changed.contains("  timeout:      1500 ms\n"))
        #expect(changed.contains("  events:       ice dice\n"))
        #expect(changed.contains("  app calls:    ask the backend\n"))
        #expect(try store.callbackSettings(applicationKey: key) == full)

        // JSON: the application and its settings, events in their order.
        let shown = try AdminCommands.run(.appCallback(json, .show(applicationKey: key)), now: 5)
        let decoded = try JSONDecoder().decode(CallbackAdminCommands.ShowJSONForTests.self, from: Data(shown.utf8))
        #expect(decoded.key == key && decoded.name == "shop" && decoded.callback == full)
        #expect(shown.contains("\"events\" : [\n      \"ice\",\n      \"dice\"\n    ]"))
        #expect(shown.contains("\"timeoutMs\" : 1500"))

        // Clear, twice: the second says there was nothing.
        let cleared = try AdminCommands.run(.appCallback(options, .clear(applicationKey: key)), now: 6)
        #expect(cleared.hasPrefix("removed the callback settings of \(key)\napplication \(key)  shop\n  callback URL: none"))
        #expect(try store.callbackSettings(applicationKey: key) == nil)
        let again = try AdminCommands.run(.appCallback(options, .clear(applicationKey: key)), now: 7)
        #expect(again.hasPrefix("\(key) had no callback settings\n"))
        let none = try AdminCommands.run(.appCallback(json, .show(applicationKey: key)), now: 8)
        #expect(none.contains("\"callback\" : null"))
    }

    @Test func failuresAreClearAndWriteNothing() throws {
        let directory = NSTemporaryDirectory() + "parley-callback-admin-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let options = AdminOptions(dataDirectory: directory, json: false)
        _ = try AdminCommands.run(.appCreate(options, name: "shop"), now: 1)
        let store = try SQLiteStore(path: directory + "/" + SQLiteStore.defaultFileName)
        let key = try #require(try store.applications().first).key
        let settings = CallbackSettings(url: "https://backend.example/cb")

        for command in [CallbackAdminCommand.set(applicationKey: "nope", settings), .show(applicationKey: "nope"), .clear(applicationKey: "nope")] {
            let unknown = #expect(throws: AdminCommands.Failure.self) { try AdminCommands.run(.appCallback(options, command), now: 2) }
            #expect(unknown?.description == "no application nope (see parleyd app list)")
        }

        var withCA = settings
        withCA.caFile = directory + "/missing.pem"
        let missing = #expect(throws: AdminCommands.Failure.self) {
            try AdminCommands.run(.appCallback(options, .set(applicationKey: key, withCA)), now: 3)
        }
        #expect(missing?.description == "cannot read CA file \(directory)/missing.pem (missing, unreadable or over 1 MiB)")
        withCA.caFile = directory + "/not-a-cert.pem"
        try "hello\n".write(toFile: directory + "/not-a-cert.pem", atomically: true, encoding: .utf8)
        let notPEM = #expect(throws: AdminCommands.Failure.self) {
            try AdminCommands.run(.appCallback(options, .set(applicationKey: key, withCA)), now: 3)
        }
        #expect(notPEM?.description == "CA file \(directory)/not-a-cert.pem holds no PEM certificate (-----BEGIN CERTIFICATE-----)")
        #expect(try store.callbackSettings(applicationKey: key) == nil)

        let noStore = AdminOptions(dataDirectory: directory + "/elsewhere", json: false)
        let failure = #expect(throws: AdminCommands.Failure.self) { try AdminCommands.run(.appCallback(noStore, .show(applicationKey: key)), now: 4) }
        #expect(failure?.description.hasPrefix("no store at ") == true)
    }
}

extension CallbackAdminCommands {
    /// `ShowJSON` read back, for the tests.
    struct ShowJSONForTests: Decodable {
        var key: String
        var name: String
        var callback: CallbackSettings?
    }
}
