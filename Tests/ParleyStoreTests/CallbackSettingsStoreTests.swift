import ParleySQLite
import ParleyStore
import Testing

/// Applications' callback settings (migration 7): set, read, replaced and cleared on every
/// store; the migration and hand-edited rows on SQLite.
@Suite struct CallbackSettingsStoreTests {
    static let full = CallbackSettings(
        url: "https://backend.example.com:8443/sinch/callback?tenant=7", caFile: "/etc/parley/backend-ca.pem",
        timeoutMilliseconds: 2500, events: [.ice, .dice, .notify], appCalls: true)

    @Test(arguments: StoreFactory.all) func anApplicationHasNoneUntilSet(_ factory: StoreFactory) throws {
        let fixture = try factory.make()
        defer { fixture.remove() }
        let store = try fixture.withApplication()
        #expect(try store.callbackSettings(applicationKey: "app") == nil)
        #expect(try store.callbackSettingsByApplication().isEmpty)
        #expect(try store.callbackSettings(applicationKey: "nope") == nil)
    }

    @Test(arguments: StoreFactory.all) func settingsRoundTripAndAreReplacedAsAWhole(_ factory: StoreFactory) throws {
        let fixture = try factory.make()
        defer { fixture.remove() }
        let store = try fixture.withApplication()
        try store.createApplication(key: "other", name: "o", secret: "s", at: T.at(1))
        try store.setCallbackSettings(applicationKey: "app", Self.full, at: T.at(2))
        let defaults = CallbackSettings(url: "http://127.0.0.1:9000/cb")
        try store.setCallbackSettings(applicationKey: "other", defaults, at: T.at(3))

        // Another connection sees both, each its own.
        let reader = try fixture.open()
        #expect(try reader.callbackSettings(applicationKey: "app") == Self.full)
        #expect(try reader.callbackSettingsByApplication() == ["app": Self.full, "other": defaults])
        #expect(defaults.timeoutMilliseconds == 3000 && defaults.events == Set(CallbackEvent.allCases) && !defaults.appCalls)

        // A second set replaces everything: no CA file, every event, app calls off.
        try store.setCallbackSettings(applicationKey: "app", defaults, at: T.at(4))
        #expect(try reader.callbackSettings(applicationKey: "app") == defaults)
        // Secrets and dialling settings are untouched by any of it.
        #expect(try reader.application(key: "app")?.secret == "c2VjcmV0")
    }

    @Test(arguments: StoreFactory.all) func clearingRemovesThemAndSaysWhetherThereWereAny(_ factory: StoreFactory) throws {
        let fixture = try factory.make()
        defer { fixture.remove() }
        let store = try fixture.withApplication()
        try store.setCallbackSettings(applicationKey: "app", Self.full, at: T.at(1))
        #expect(try store.clearCallbackSettings(applicationKey: "app"))
        #expect(try store.callbackSettings(applicationKey: "app") == nil)
        #expect(try store.clearCallbackSettings(applicationKey: "app") == false)
        let unknown = #expect(throws: StoreError.self) { try store.clearCallbackSettings(applicationKey: "nope") }
        #expect(unknown?.kind == .notFound)
        #expect(unknown?.message == "application nope not found")
    }

    @Test(arguments: StoreFactory.all) func badSettingsAndUnknownApplicationsAreRefused(_ factory: StoreFactory) throws {
        let fixture = try factory.make()
        defer { fixture.remove() }
        let store = try fixture.withApplication()
        try store.setCallbackSettings(applicationKey: "app", Self.full, at: T.at(1))
        var bad = Self.full
        bad.url = "ftp://backend.example.com/"
        let invalid = #expect(throws: StoreError.self) { try store.setCallbackSettings(applicationKey: "app", bad, at: T.at(2)) }
        #expect(invalid?.kind == .invalidArgument)
        #expect(invalid?.message == "callback settings of application app: URL \"ftp://backend.example.com/\" is not an http:// or https:// URL")
        bad = Self.full
        bad.timeoutMilliseconds = 99
        #expect(throws: StoreError.self) { try store.setCallbackSettings(applicationKey: "app", bad, at: T.at(2)) }
        bad = Self.full
        bad.events = []
        #expect(throws: StoreError.self) { try store.setCallbackSettings(applicationKey: "app", bad, at: T.at(2)) }
        #expect(try store.callbackSettings(applicationKey: "app") == Self.full, "a refused change changes nothing")

        let unknown = #expect(throws: StoreError.self) {
            try store.setCallbackSettings(applicationKey: "nope", Self.full, at: T.at(3))
        }
        #expect(unknown?.kind == .notFound)
        #expect(unknown?.message == "application nope not found")
    }

    /// SQLite-only (applications are deleted only by hand today): the cascade keeps no
    /// orphan row that a later application with the same key would inherit.
    @Test func deletingTheApplicationDeletesItsSettings() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try SQLiteStore.withApplication(path: directory.storePath)
        try store.setCallbackSettings(applicationKey: "app", Self.full, at: T.at(1))
        let raw = try SQLiteDatabase(path: directory.storePath)
        try raw.execute("PRAGMA foreign_keys = ON; DELETE FROM applications WHERE key = 'app'")
        try store.createApplication(key: "app", name: "again", secret: "s", at: T.at(2))
        #expect(try store.callbackSettings(applicationKey: "app") == nil)
    }

    /// SQLite-only: a store from before migration 7 keeps its applications, which have no
    /// callback settings until set.
    @Test func aVersionSixStoreMigratesWithoutCallbacks() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        _ = try SQLiteStore.withApplication(path: directory.storePath)
        let raw = try SQLiteDatabase(path: directory.storePath)
        try raw.execute("DROP TABLE callback_settings; DELETE FROM schema_version WHERE version = 7")
        let reopened = try SQLiteStore(path: directory.storePath)
        #expect(reopened.appliedMigrations == [7])
        #expect(try reopened.application(key: "app") != nil)
        #expect(try reopened.callbackSettings(applicationKey: "app") == nil)
        try reopened.setCallbackSettings(applicationKey: "app", Self.full, at: T.at(1))
        #expect(try reopened.callbackSettings(applicationKey: "app") == Self.full)
    }

    /// SQLite-only: a row a hand edit broke reads as `corruptRecord`, never as settings
    /// guessed at, whether read alone or with every application's.
    @Test(arguments: [
        ("UPDATE callback_settings SET url = 'gopher://x'", "is not an http:// or https:// URL"),
        ("UPDATE callback_settings SET events = 'ice,ring'", "unknown event \"ring\""),
        ("UPDATE callback_settings SET events = ''", "an empty event name"),
        ("UPDATE callback_settings SET timeout_ms = 0", "timeout 0 ms is outside 100...30000 ms"),
        ("UPDATE callback_settings SET url = 'http://backend.example.com/'", "a CA file needs an https:// URL"),
    ])
    func handEditedSettingsAreCorruptRecords(_ edit: String, _ expected: String) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try SQLiteStore.withApplication(path: directory.storePath)
        try store.setCallbackSettings(applicationKey: "app", Self.full, at: T.at(1))
        let raw = try SQLiteDatabase(path: directory.storePath)
        try raw.execute(edit)
        let one = #expect(throws: StoreError.self) { try store.callbackSettings(applicationKey: "app") }
        #expect(one?.kind == .corruptRecord)
        #expect(one?.message.hasPrefix("callback settings of application app: ") == true)
        #expect(one?.message.contains(expected) == true, "\(one?.message ?? "")")
        let all = #expect(throws: StoreError.self) { try store.callbackSettingsByApplication() }
        #expect(all?.kind == .corruptRecord)
    }

    /// SQLite-only: the table refuses an `app_calls` that is not 0 or 1 outright.
    @Test func theTableChecksAppCalls() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try SQLiteStore.withApplication(path: directory.storePath)
        try store.setCallbackSettings(applicationKey: "app", Self.full, at: T.at(1))
        let raw = try SQLiteDatabase(path: directory.storePath)
        #expect(throws: SQLiteError.self) { try raw.execute("UPDATE callback_settings SET app_calls = 2") }
    }
}
