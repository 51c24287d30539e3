import ParleyCallModel
import ParleySQLite
import ParleyStore
import Testing

/// Applications' dialling settings (`Application.dialling`, migration 5): stored with the
/// application and read back with it, on every store; the SQLite migration and hand-edited
/// rows on SQLite.
@Suite struct DiallingSettingsStoreTests {
    static let full = DiallingSettings(
        defaultCLI: "+46812345678", allowedNumberPrefixes: ["+46", "+4790", "+1212"], maxConcurrentPhoneCalls: 3,
        maxPhoneCallsPerMinute: 12, maxCallDurationSeconds: 900, allowsSIPAddresses: true)

    @Test(arguments: StoreFactory.all) func aNewApplicationDialsNothing(_ factory: StoreFactory) throws {
        let fixture = try factory.make()
        defer { fixture.remove() }
        let store = try fixture.open()
        let created = try store.createApplication(key: "k", name: "n", secret: "s", at: T.base)
        #expect(created.dialling == DiallingSettings())
        #expect(try store.application(key: "k")?.dialling == DiallingSettings())
        #expect(try store.applications().map(\.dialling) == [DiallingSettings()])
    }

    @Test(arguments: StoreFactory.all) func settingsRoundTripWithTheApplication(_ factory: StoreFactory) throws {
        let fixture = try factory.make()
        defer { fixture.remove() }
        let store = try fixture.withApplication()
        try store.createApplication(key: "other", name: "o", secret: "s", at: T.at(1))
        let set = try store.setDiallingSettings(applicationKey: "app", Self.full)
        #expect(set.dialling == Self.full)
        #expect(set.key == "app" && set.secret == "c2VjcmV0")
        #expect(try store.application(key: "app") == set)
        // Another connection reads them, with every application; the other one is untouched.
        let reader = try fixture.open()
        #expect(try reader.application(key: "app")?.dialling == Self.full)
        #expect(try reader.applications().map(\.dialling) == [Self.full, DiallingSettings()])

        // Replaced as a whole: no CLI, no prefix, SIP off again.
        let closed = DiallingSettings(maxConcurrentPhoneCalls: 0, maxPhoneCallsPerMinute: 0, maxCallDurationSeconds: 1)
        try store.setDiallingSettings(applicationKey: "app", closed)
        #expect(try reader.application(key: "app")?.dialling == closed)

        // A rotation keeps them.
        try store.rotateSecret(key: "app", newSecret: "bmV3", at: T.at(2), gracePeriodMilliseconds: 0)
        #expect(try reader.application(key: "app")?.dialling == closed)
    }

    @Test(arguments: StoreFactory.all) func theLargestSettingsRoundTrip(_ factory: StoreFactory) throws {
        let fixture = try factory.make()
        defer { fixture.remove() }
        let store = try fixture.withApplication()
        let prefixes = (0..<DiallingSettings.maxPrefixCount).map { "+" + String(100_000_000_000_000 + $0) }
        let largest = DiallingSettings(
            defaultCLI: "+999999999999999", allowedNumberPrefixes: prefixes,
            maxConcurrentPhoneCalls: DiallingSettings.concurrentPhoneCallsRange.upperBound,
            maxPhoneCallsPerMinute: DiallingSettings.phoneCallsPerMinuteRange.upperBound,
            maxCallDurationSeconds: DiallingSettings.callDurationSecondsRange.upperBound, allowsSIPAddresses: true)
        #expect(largest.problem == nil)
        try store.setDiallingSettings(applicationKey: "app", largest)
        #expect(try store.application(key: "app")?.dialling == largest)
    }

    @Test(arguments: StoreFactory.all) func badSettingsAndUnknownApplicationsAreRefused(_ factory: StoreFactory) throws {
        let fixture = try factory.make()
        defer { fixture.remove() }
        let store = try fixture.withApplication()
        try store.setDiallingSettings(applicationKey: "app", Self.full)
        var bad = Self.full
        bad.allowedNumberPrefixes.append("+46")
        let invalid = #expect(throws: StoreError.self) { try store.setDiallingSettings(applicationKey: "app", bad) }
        #expect(invalid?.kind == .invalidArgument)
        #expect(invalid?.message == "dialling settings of application app: prefix +46 is listed twice")
        bad = Self.full
        bad.defaultCLI = "0812345678"
        #expect(throws: StoreError.self) { try store.setDiallingSettings(applicationKey: "app", bad) }
        #expect(try store.application(key: "app")?.dialling == Self.full, "a refused change changes nothing")

        let unknown = #expect(throws: StoreError.self) { try store.setDiallingSettings(applicationKey: "nope", Self.full) }
        #expect(unknown?.kind == .notFound)
        #expect(unknown?.message == "application nope not found")
    }

    @Test(arguments: StoreFactory.all) func readAndChangeInOneTransaction(_ factory: StoreFactory) throws {
        let fixture = try factory.make()
        defer { fixture.remove() }
        let store = try fixture.withApplication()
        try store.setDiallingSettings(applicationKey: "app", Self.full)
        // What `parleyd app set-cli` does: only the CLI changes.
        let updated = try store.transaction(durable: true) { (store) throws(StoreError) -> Application in
            guard var settings = try store.application(key: "app")?.dialling else { throw StoreError(.notFound, "gone") }
            settings.defaultCLI = nil
            return try store.setDiallingSettings(applicationKey: "app", settings)
        }
        var expected = Self.full
        expected.defaultCLI = nil
        #expect(updated.dialling == expected)
        #expect(try fixture.open().application(key: "app")?.dialling == expected)
    }

    /// SQLite-only: migration 5 on a store that has applications gives them the settings
    /// that dial nothing, the same as `DiallingSettings()`.
    @Test func aVersionFourStoreMigratesToSettingsThatDialNothing() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        _ = try SQLiteStore.withApplication(path: directory.storePath)
        let raw = try SQLiteDatabase(path: directory.storePath)
        try raw.execute(undoMigrationFive)
        let reopened = try SQLiteStore(path: directory.storePath)
        #expect(reopened.appliedMigrations == [5, 6, 7])
        let application = try #require(try reopened.application(key: "app"))
        #expect(application.secret == "c2VjcmV0")
        #expect(application.dialling == DiallingSettings())
        try reopened.setDiallingSettings(applicationKey: "app", Self.full)
        #expect(try reopened.application(key: "app")?.dialling == Self.full)
    }

    /// SQLite-only: a row a hand edit broke reads as `corruptRecord`, never as settings
    /// guessed at (which could open dialling that was closed).
    @Test(arguments: [
        "UPDATE applications SET allowed_number_prefixes = '+46,,+47'",
        "UPDATE applications SET allowed_number_prefixes = '46'",
        "UPDATE applications SET default_cli = 'anonymous'",
        "UPDATE applications SET max_phone_calls_per_minute = -5",
        "UPDATE applications SET max_call_duration_s = 0",
    ])
    func handEditedSettingsAreCorruptRecords(_ edit: String) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try SQLiteStore.withApplication(path: directory.storePath)
        let raw = try SQLiteDatabase(path: directory.storePath)
        try raw.execute(edit)
        let one = #expect(throws: StoreError.self) { try store.application(key: "app") }
        #expect(one?.kind == .corruptRecord)
        #expect(one?.message.hasPrefix("dialling settings of application app: ") == true)
        let all = #expect(throws: StoreError.self) { try store.applications() }
        #expect(all?.kind == .corruptRecord)
    }

    /// SQLite-only: the column refuses what is not a boolean.
    @Test func sipAllowedIsZeroOrOne() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        _ = try SQLiteStore.withApplication(path: directory.storePath)
        let raw = try SQLiteDatabase(path: directory.storePath)
        #expect(throws: SQLiteError.self) { try raw.execute("UPDATE applications SET sip_addresses_allowed = 2") }
    }
}
