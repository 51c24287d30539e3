import Foundation
import ParleyCallModel
import ParleyServer
import ParleyStore
import Testing
@testable import ParleyDaemon

/// `parleyd app show|set-cli|set-dialling`: parsing with its errors, and running on a real
/// store file (text and JSON).
@Suite struct DiallingAdminCommandTests {
    private func parse(_ arguments: [String]) -> Result<DaemonCommand, DaemonUsageError> {
        DaemonCommandLine.parse(arguments: arguments, environment: [:]) { path in throw DaemonUsageError("no file \(path)") }
    }

    private func error(_ arguments: [String]) -> String? {
        if case .failure(let error) = parse(arguments) { return error.message }
        return nil
    }

    @Test func parsesEachCommand() {
        let options = AdminOptions(dataDirectory: "/d", json: false)
        #expect(parse(["app", "show", "K", "--data-dir", "/d"]) == .success(.appDialling(options, .show(applicationKey: "K"))))
        #expect(parse(["app", "set-cli", "K", "+46812345678", "--data-dir=/d", "--json"])
                == .success(.appDialling(AdminOptions(dataDirectory: "/d", json: true), .setCLI(applicationKey: "K", cli: "+46812345678"))))
        #expect(parse(["app", "set-cli", "--clear", "K", "--data-dir", "/d"]) == .success(.appDialling(options, .setCLI(applicationKey: "K", cli: nil))))
        #expect(parse(["app", "set-dialling", "K", "--allow-prefix", "+46", "--allow-prefix=+4790", "--max-concurrent", "3",
                       "--max-per-minute=12", "--max-duration", "900", "--sip", "on", "--data-dir", "/d"])
                == .success(.appDialling(options, .setDialling(applicationKey: "K", DiallingChange(
                    allowedNumberPrefixes: ["+46", "+4790"], maxConcurrentPhoneCalls: 3, maxPhoneCallsPerMinute: 12,
                    maxCallDurationSeconds: 900, allowsSIPAddresses: true)))))
        #expect(parse(["app", "set-dialling", "K", "--clear-prefixes", "--sip=off", "--data-dir", "/d"])
                == .success(.appDialling(options, .setDialling(applicationKey: "K", DiallingChange(allowedNumberPrefixes: [], allowsSIPAddresses: false)))))
        #expect(parse(["app", "set-dialling", "K", "--max-concurrent", "0", "--data-dir", "/d"])
                == .success(.appDialling(options, .setDialling(applicationKey: "K", DiallingChange(maxConcurrentPhoneCalls: 0)))))
        // The data directory follows the usual precedence.
        #expect(DaemonCommandLine.parse(arguments: ["app", "show", "K"], environment: ["PARLEY_DATA_DIR": "/env"], readFile: { _ in "" })
                == .success(.appDialling(AdminOptions(dataDirectory: "/env", json: false), .show(applicationKey: "K"))))
    }

    @Test(arguments: [
        (["app", "show"], "parleyd app show needs the application KEY"),
        (["app", "show", "K", "L"], "parleyd app show takes one KEY, not 2"),
        (["app", "show", "K", "--sip", "on"], "unknown flag --sip for parleyd app show (see parleyd --help)"),
        (["app", "set-cli", "K"], "parleyd app set-cli takes KEY and one NUMBER (or --clear), not 0 numbers"),
        (["app", "set-cli", "K", "+46812345678", "+46812345679"], "parleyd app set-cli takes KEY and one NUMBER (or --clear), not 2 numbers"),
        (["app", "set-cli", "K", "0812345678"], "CLI 0812345678 is not an E.164 number: '+' then 2 to 15 digits, the first not 0"),
        (["app", "set-cli", "K", "+46 8123"], "CLI +46 8123 is not an E.164 number: '+' then 2 to 15 digits, the first not 0"),
        (["app", "set-cli", "K", "+46812345678", "--clear"], "parleyd app set-cli takes KEY and --clear, not a NUMBER too"),
        (["app", "set-cli", "K", "--clear=yes"], "--clear takes no value"),
        (["app", "set-dialling", "K"], "parleyd app set-dialling needs something to change (see parleyd --help)"),
        (["app", "set-dialling", "K", "--allow-prefix"], "--allow-prefix needs a value"),
        (["app", "set-dialling", "K", "--allow-prefix", "46"], "--allow-prefix 46 is not a number prefix: '+' then 1 to 15 digits, the first not 0"),
        (["app", "set-dialling", "K", "--allow-prefix", "+"], "--allow-prefix + is not a number prefix: '+' then 1 to 15 digits, the first not 0"),
        (["app", "set-dialling", "K", "--allow-prefix", "+46", "--allow-prefix", "+46"], "--allow-prefix +46 is given twice"),
        (["app", "set-dialling", "K", "--allow-prefix", "+46", "--clear-prefixes"], "--clear-prefixes and --allow-prefix contradict each other"),
        (["app", "set-dialling", "K", "--max-concurrent", "-1"], "--max-concurrent -1: expected a whole number from 0 to 100000"),
        (["app", "set-dialling", "K", "--max-concurrent", "ten"], "--max-concurrent ten: expected a whole number from 0 to 100000"),
        (["app", "set-dialling", "K", "--max-concurrent", "1", "--max-concurrent", "2"], "--max-concurrent is given more than once"),
        (["app", "set-dialling", "K", "--max-per-minute", "10001"], "--max-per-minute 10001: expected a whole number from 0 to 10000"),
        (["app", "set-dialling", "K", "--max-duration", "0"], "--max-duration 0: expected a whole number from 1 to 604800"),
        (["app", "set-dialling", "K", "--max-duration", "1.5"], "--max-duration 1.5: expected a whole number from 1 to 604800"),
        (["app", "set-dialling", "K", "--sip", "yes"], "--sip yes: expected on or off"),
        (["app", "set-dialling", "K", "L", "--sip", "on"], "parleyd app set-dialling takes one KEY, not 2"),
        (["app", "set-dialling", "K", "--cli", "+46812345678"], "unknown flag --cli for parleyd app set-dialling (see parleyd --help)"),
    ])
    func refusesBadUsageClearly(_ arguments: [String], _ expected: String) {
        #expect(error(arguments) == expected)
    }

    @Test func aHundredPrefixesParseButTooManyAreRefused() {
        let many = (1...DiallingSettings.maxPrefixCount + 1).flatMap { ["--allow-prefix", "+\($0)"] }
        #expect(error(["app", "set-dialling", "K"] + many) == "at most 256 --allow-prefix")
        let enough = (1...100).flatMap { ["--allow-prefix", "+\($0)"] }
        guard case .success(.appDialling(_, .setDialling(_, let change))) = parse(["app", "set-dialling", "K"] + enough) else {
            Issue.record("refused")
            return
        }
        #expect(change.allowedNumberPrefixes?.count == 100)
    }

    @Test func theUsageNamesTheCommands() {
        let text = DaemonUsage.text
        for fragment in ["app show|set-cli|set-dialling KEY", "app set-cli KEY NUMBER", "--allow-prefix P", "--clear-prefixes",
                         "--max-concurrent N", "--max-per-minute N", "--max-duration SECONDS", "--sip on|off"] {
            #expect(text.contains(fragment), "\(fragment)")
        }
    }

    @Test func setsAndShowsOnAStoreFile() throws {
        let directory = NSTemporaryDirectory() + "parley-dialling-admin-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let options = AdminOptions(dataDirectory: directory, json: false)
        let json = AdminOptions(dataDirectory: directory, json: true)
        _ = try AdminCommands.run(.appCreate(options, name: "shop"), now: 1_764_421_200_000)
        let store = try SQLiteStore(path: directory + "/" + SQLiteStore.defaultFileName)
        let key = try #require(try store.applications().first).key

        // A new application dials nothing, and says so.
        let shown = try AdminCommands.run(.appDialling(options, .show(applicationKey: key)), now: 2)
        #expect(shown == """
            application \(key)  shop  created 2025-11-29T13:00:00Z
              default CLI:             none (call.start must give cli)
              allowed number prefixes: none (no phone numbers)
              concurrent phone calls:  at most 10
              phone calls per minute:  at most 30
              longest call:            7200 s (phone numbers and SIP addresses)
              SIP addresses:           not allowed

            """)

        let setCLI = try AdminCommands.run(.appDialling(options, .setCLI(applicationKey: key, cli: "+46812345678")), now: 3)
        #expect(setCLI.hasPrefix("set the default CLI of \(key) to +46812345678\napplication \(key)  shop"))
        #expect(setCLI.contains("default CLI:             +46812345678\n"))

        let change = DiallingChange(allowedNumberPrefixes: ["+46", "+4790"], maxConcurrentPhoneCalls: 3, allowsSIPAddresses: true)
        let changed = try AdminCommands.run(.appDialling(options, .setDialling(applicationKey: key, change)), now: 4)
        #expect(changed.hasPrefix("changed the dialling settings of \(key)\n"))
        #expect(changed.contains("allowed number prefixes: +46 +4790\n"))
        #expect(changed.contains("concurrent phone calls:  at most 3\n"))
        #expect(changed.contains("SIP addresses:           allowed\n"))
        // What was not named stayed; the CLI set before is kept.
        #expect(try store.application(key: key)?.dialling == DiallingSettings(
            defaultCLI: "+46812345678", allowedNumberPrefixes: ["+46", "+4790"], maxConcurrentPhoneCalls: 3, allowsSIPAddresses: true))

        // JSON: the application and its settings; no CLI, no member.
        let cleared = try AdminCommands.run(.appDialling(json, .setCLI(applicationKey: key, cli: nil)), now: 5)
        let decoded = try JSONDecoder().decode(DiallingAdminCommands.ShowJSONForTests.self, from: Data(cleared.utf8))
        #expect(decoded.key == key && decoded.name == "shop" && decoded.createdTime == 1_764_421_200_000)
        #expect(decoded.dialling == DiallingSettings(allowedNumberPrefixes: ["+46", "+4790"], maxConcurrentPhoneCalls: 3, allowsSIPAddresses: true))
        #expect(!cleared.contains("defaultCLI"))
        #expect(cleared.contains("\"allowedNumberPrefixes\" : [\n      \"+46\",\n      \"+4790\"\n    ]"))

        // An unknown application: exit status 1 with its name, nothing written.
        #expect(throws: AdminCommands.Failure.self) {
            try AdminCommands.run(.appDialling(options, .setCLI(applicationKey: "nope", cli: "+46812345678")), now: 6)
        }
        let unknown = #expect(throws: AdminCommands.Failure.self) { try AdminCommands.run(.appDialling(options, .show(applicationKey: "nope")), now: 6) }
        #expect(unknown?.description == "no application nope (see parleyd app list)")
    }

    @Test func parleydEnforcesEveryApplicationsSettings() throws {
        let directory = NSTemporaryDirectory() + "parley-dialling-composition-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let components = try DaemonComposition.components(for: ServerConfiguration(dataDirectory: directory), log: ServerLog(level: .error))
        defer { components.engineLoop.shutdown() }
        #expect(components.diallingSettings == .store)
        #expect(components.diallingSettings?.refreshInterval == .seconds(5))
    }

    @Test func aMissingStoreIsAFailureNotACrash() {
        let options = AdminOptions(dataDirectory: NSTemporaryDirectory() + "parley-no-store-" + UUID().uuidString, json: false)
        let failure = #expect(throws: AdminCommands.Failure.self) { try AdminCommands.run(.appDialling(options, .show(applicationKey: "k")), now: 1) }
        #expect(failure?.description.hasPrefix("no store at ") == true)
    }
}

extension DiallingAdminCommands {
    /// `ShowJSON` read back, for the tests.
    struct ShowJSONForTests: Decodable {
        var key: String
        var name: String
        var createdTime: Int64
        var dialling: DiallingSettings
    }
}
