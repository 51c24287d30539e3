import ParleyCallModel
import ParleySQLite
import ParleyStore
import Testing

/// Push tokens per device and push credentials per application (migration 2), on every store.
@Suite struct PushStoreTests {
    private func registration(_ device: String, user: String = "bob", type: PushType = .apnsVoip,
                              token: String = "aa11", key: UInt8 = 1) -> PushRegistration {
        PushRegistration(applicationKey: "app", userId: user, deviceId: device, pushType: type, token: token,
                         environment: type == .fcm ? .production : .sandbox, appId: "com.example.chat",
                         pushKey: [UInt8](repeating: key, count: 32), registeredTime: T.base)
    }

    @Test(arguments: StoreFactory.all) func registeringAgainReplacesTheTokenAndTheKey(_ factory: StoreFactory) throws {
        let fixture = try factory.make()
        defer { fixture.remove() }
        let store = try fixture.withApplication()
        try store.registerPushToken(registration("b1"))
        try store.registerPushToken(registration("b1", type: .fcm, token: "fcm-1", key: 2))
        try store.registerPushToken(registration("b1", token: "bb22", key: 3))
        let stored = try store.pushRegistrations(applicationKey: "app", userId: "bob")
        #expect(stored.map(\.pushType) == [.apnsVoip, .fcm])
        #expect(stored[0].token == "bb22" && stored[0].pushKey == [UInt8](repeating: 3, count: 32))
        #expect(stored[0].environment == .sandbox && stored[1].environment == .production)
        #expect(try store.pushDevices().map(\.deviceId) == ["b1"])
    }

    @Test(arguments: StoreFactory.all) func aTokenMovesToTheDeviceThatRegistersItLast(_ factory: StoreFactory) throws {
        let fixture = try factory.make()
        defer { fixture.remove() }
        let store = try fixture.withApplication()
        try store.registerPushToken(registration("b1", token: "shared"))
        try store.registerPushToken(registration("c1", user: "carol", token: "shared"))
        #expect(try store.pushRegistrations(applicationKey: "app", userId: "bob").isEmpty)
        #expect(try store.pushRegistrations(applicationKey: "app", deviceId: "c1").count == 1)
    }

    @Test(arguments: StoreFactory.all) func unregisterAndRemoval(_ factory: StoreFactory) throws {
        let fixture = try factory.make()
        defer { fixture.remove() }
        let store = try fixture.withApplication()
        try store.registerPushToken(registration("b1"))
        try store.registerPushToken(registration("b1", type: .fcm, token: "fcm-1"))
        try store.registerPushToken(registration("b2", token: "cc33"))
        #expect(try store.unregisterPushTokens(applicationKey: "app", deviceId: "b1", token: "fcm-1") == 1)
        #expect(try store.removePushToken(applicationKey: "app", pushType: .apnsVoip, token: "cc33") == 1)
        #expect(try store.removePushToken(applicationKey: "app", pushType: .fcm, token: "aa11") == 0)
        #expect(try store.unregisterPushTokens(applicationKey: "app", deviceId: "b1") == 1)
        #expect(try store.unregisterPushTokens(applicationKey: "app", deviceId: "b1") == 0)
        #expect(try store.pushDevices().isEmpty)
    }

    @Test(arguments: StoreFactory.all) func unknownApplicationsAreRefused(_ factory: StoreFactory) throws {
        let fixture = try factory.make()
        defer { fixture.remove() }
        let store = try fixture.withApplication()
        var other = registration("b1")
        other.applicationKey = "nope"
        #expect { try store.registerPushToken(other) } throws: { ($0 as? StoreError)?.kind == .notFound }
        #expect { try store.setPushCredentials(StoredPushCredentials(applicationKey: "nope", provider: .apns, settings: "{}", updatedTime: 1)) }
            throws: { ($0 as? StoreError)?.kind == .notFound }
    }

    @Test(arguments: StoreFactory.all) func credentialsPerProviderAreReplaced(_ factory: StoreFactory) throws {
        let fixture = try factory.make()
        defer { fixture.remove() }
        let store = try fixture.withApplication()
        try store.setPushCredentials(StoredPushCredentials(applicationKey: "app", provider: .fcm, settings: "{\"a\":1}", updatedTime: 1))
        try store.setPushCredentials(StoredPushCredentials(applicationKey: "app", provider: .apns, settings: "{\"b\":1}", updatedTime: 2))
        try store.setPushCredentials(StoredPushCredentials(applicationKey: "app", provider: .fcm, settings: "{\"a\":2}", updatedTime: 3))
        let stored = try store.pushCredentials(applicationKey: "app")
        #expect(stored.map(\.provider) == [.apns, .fcm])
        #expect(stored[1].settings == "{\"a\":2}" && stored[1].updatedTime == 3)
    }

    /// SQLite-only: a migration of the SQLite schema.
    @Test func aVersionOneStoreMigratesKeepingItsData() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        _ = try SQLiteStore.withApplication(path: directory.storePath)
        // Make the file look like a version-1 store: no push or timeline tables, version 1 only.
        let raw = try SQLiteDatabase(path: directory.storePath)
        try raw.execute("DROP TABLE push_tokens; DROP TABLE push_credentials; DROP TABLE call_events; DROP TABLE call_leg_playout; DELETE FROM schema_version WHERE version IN (2, 3, 4)")
        try raw.execute(undoMigrationFive)
        let reopened = try SQLiteStore(path: directory.storePath)
        #expect(reopened.appliedMigrations == [2, 3, 4, 5, 6, 7])
        #expect(try reopened.application(key: "app") != nil)
        try reopened.registerPushToken(registration("b1"))
        #expect(try reopened.pushDevices().count == 1)
    }
}
