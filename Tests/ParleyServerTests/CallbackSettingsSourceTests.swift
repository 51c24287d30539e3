import Foundation
import ParleyServer
import ParleySQLite
import ParleyStore
import ParleyTestSupport
import Testing

/// `CallbackSettingsSource`: what a running server knows of each application's callback
/// settings, read at start and again every interval on a manual scheduler, while another
/// connection (as `parleyd app callback set` does) changes the store.
@Suite struct CallbackSettingsSourceTests {
    /// A store file with applications `shop` and `crm`, the server's queue on it, an admin
    /// connection beside it, and a source on a manual scheduler.
    final class Rig {
        let directory = ServerHarness.temporaryDirectory()
        let scheduler = ManualScheduler()
        let store: StoreQueue
        let admin: SQLiteStore
        let lines = LogLines()
        let log: ServerLog
        let source = CallbackSettingsSource(refreshInterval: .seconds(5))

        init() throws {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let stores = try CallStoreFactory.sqlite(dataDirectory: directory)
            store = try StoreQueue(opening: stores, label: "callback.settings.tests")
            admin = try SQLiteStore(path: directory + "/" + SQLiteStore.defaultFileName)
            try admin.createApplication(key: "shop", name: "shop", secret: "c2VjcmV0", at: 1)
            try admin.createApplication(key: "crm", name: "crm", secret: "c2VjcmV0", at: 2)
            let lines = self.lines
            log = ServerLog(level: .debug) { line in lines.append(line) }
        }

        /// Moves past one refresh interval and waits (bounded) for the reread to land.
        func refresh() -> Bool {
            let refreshes = refreshCount
            scheduler.advance(by: .seconds(5))
            return scheduler.run(until: { self.refreshCount > refreshes }, timeout: .seconds(10))
        }

        /// Rereads finished so far, read off the log (debug for success, warning for failure).
        var refreshCount: Int {
            lines.text.components(separatedBy: "callback.settings.refreshed").count - 1
                + lines.text.components(separatedBy: "callback.settings.failed").count - 1
        }

        deinit {
            source.stop()
            scheduler.stop()
            try? FileManager.default.removeItem(atPath: directory)
        }
    }

    static let shop = CallbackSettings(url: "https://shop.example/sinch", timeoutMilliseconds: 1200, events: [.ice, .dice])
    static let crm = CallbackSettings(url: "http://127.0.0.1:9000/cb", appCalls: true)

    @Test func startReadsEveryApplicationsSettingsAtOnce() throws {
        let rig = try Rig()
        try rig.admin.setCallbackSettings(applicationKey: "shop", Self.shop, at: 10)
        #expect(rig.source.all.isEmpty, "nothing before start")
        rig.source.start(loop: rig.scheduler, store: rig.store, log: rig.log)
        #expect(rig.source.settings(applicationKey: "shop") == Self.shop)
        #expect(rig.source.settings(applicationKey: "crm") == nil)
        #expect(rig.source.all == ["shop": Self.shop])
        #expect(rig.scheduler.pendingTimerCount == 1, "the next reread is scheduled")
    }

    @Test func changesMadeOutsideTheServerArriveWithinAnInterval() throws {
        let rig = try Rig()
        rig.source.start(loop: rig.scheduler, store: rig.store, log: rig.log)
        #expect(rig.source.all.isEmpty)

        try rig.admin.setCallbackSettings(applicationKey: "shop", Self.shop, at: 10)
        try rig.admin.setCallbackSettings(applicationKey: "crm", Self.crm, at: 11)
        rig.scheduler.advance(by: .seconds(4))
        #expect(rig.source.all.isEmpty, "not before the interval")
        #expect(rig.refresh())
        #expect(rig.source.all == ["shop": Self.shop, "crm": Self.crm])

        // Replaced and cleared: the next reread follows both.
        var changed = Self.shop
        changed.url = "https://shop.example/v2"
        try rig.admin.setCallbackSettings(applicationKey: "shop", changed, at: 12)
        try rig.admin.clearCallbackSettings(applicationKey: "crm")
        #expect(rig.refresh())
        #expect(rig.source.all == ["shop": changed])
        #expect(rig.scheduler.pendingTimerCount == 1, "one reread pending at a time")
    }

    @Test func aFailedRereadKeepsTheLastSettingsAndTriesAgain() throws {
        let rig = try Rig()
        try rig.admin.setCallbackSettings(applicationKey: "shop", Self.shop, at: 10)
        rig.source.start(loop: rig.scheduler, store: rig.store, log: rig.log)

        // A hand edit the store refuses to read (corruptRecord) fails the whole reread.
        let raw = try SQLiteDatabase(path: rig.directory + "/" + SQLiteStore.defaultFileName)
        try raw.execute("UPDATE callback_settings SET events = 'ice,ring'")
        #expect(rig.refresh())
        #expect(rig.source.settings(applicationKey: "shop") == Self.shop)
        #expect(rig.lines.text.contains("warning callback.settings.failed"))
        #expect(rig.lines.text.contains("ring"))

        // Repaired: the next reread succeeds.
        try raw.execute("UPDATE callback_settings SET events = 'ice'")
        #expect(rig.refresh())
        var repaired = Self.shop
        repaired.events = [.ice]
        #expect(rig.source.settings(applicationKey: "shop") == repaired)
    }

    @Test func refreshNowThrowsTheStoresErrorAndKeepsWhatItHad() throws {
        let rig = try Rig()
        try rig.admin.setCallbackSettings(applicationKey: "shop", Self.shop, at: 10)
        try rig.source.refreshNow(from: rig.store)
        #expect(rig.source.all == ["shop": Self.shop])
        let raw = try SQLiteDatabase(path: rig.directory + "/" + SQLiteStore.defaultFileName)
        try raw.execute("UPDATE callback_settings SET timeout_ms = 5")
        let error = #expect(throws: StoreError.self) { try rig.source.refreshNow(from: rig.store) }
        #expect(error?.kind == .corruptRecord)
        #expect(rig.source.all == ["shop": Self.shop])
    }

    @Test func stopEndsTheRereadsAndASecondStartIsIgnored() throws {
        let rig = try Rig()
        rig.source.start(loop: rig.scheduler, store: rig.store, log: rig.log)
        rig.source.start(loop: rig.scheduler, store: rig.store, log: rig.log)
        #expect(rig.scheduler.pendingTimerCount == 1)
        #expect(rig.refresh())
        rig.source.stop()
        #expect(rig.scheduler.pendingTimerCount == 0)
        try rig.admin.setCallbackSettings(applicationKey: "shop", Self.shop, at: 10)
        let before = rig.refreshCount
        rig.scheduler.advance(by: .seconds(60))
        #expect(rig.refreshCount == before)
        #expect(rig.source.all.isEmpty, "a stopped source keeps what it read last")
        // Stopped for good: a start after stop does nothing.
        rig.source.start(loop: rig.scheduler, store: rig.store, log: rig.log)
        #expect(rig.source.all.isEmpty)
        #expect(rig.scheduler.pendingTimerCount == 0)
    }
}
