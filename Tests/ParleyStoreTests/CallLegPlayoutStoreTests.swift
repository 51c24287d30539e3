import ParleyCallModel
import ParleySQLite
import ParleyStore
import Testing

/// Devices' playout counters on a call's legs (migration 4), on every store.
@Suite struct CallLegPlayoutStoreTests {
    static let playout = CallLegPlayout(counters: PlayoutCounters(
        framesPlayed: 5544, framesConcealed: 41, framesFECRecovered: 12, framesComfortNoise: 2, framesSilent: 15,
        framesStretched: 3, framesShrunk: 4, packetsLate: 1, targetDelayMilliseconds: 40), reportedTime: T.at(9000))

    static func leg(_ role: CallLegRole, _ user: String) -> CallLeg {
        CallLeg(role: role, userId: user, deviceId: user + "-phone", updatedTime: T.at(8000), statistics: CallLegStatistics(packetsSent: 7))
    }

    @Test(arguments: StoreFactory.all) func aReportAfterTheEndShowsOnItsLeg(_ factory: StoreFactory) throws {
        let fixture = try factory.make()
        defer { fixture.remove() }
        let store = try fixture.withApplication()
        let id = callID(1)
        try store.createCall(id: id, applicationKey: "app", caller: "alice", callee: "bob", startedTime: T.base)
        try store.finishCall(id: id, cause: .hungUp, at: T.at(8000), legs: [Self.leg(.caller, "alice"), Self.leg(.callee, "bob")])
        try store.recordLegPlayout(callId: id, role: .callee, Self.playout)
        let legs = try #require(try store.call(id: id)).legs
        #expect(legs.map(\.role) == [.caller, .callee])
        #expect(legs[0].playout == nil)
        #expect(legs[1].playout == Self.playout)
        #expect(legs[1].statistics.packetsSent == 7, "the server's figures of the leg stay")
    }

    @Test(arguments: StoreFactory.all) func aReportBeforeTheEndSurvivesTheFinalFiguresAndALaterOneReplacesIt(_ factory: StoreFactory) throws {
        let fixture = try factory.make()
        defer { fixture.remove() }
        let store = try fixture.withApplication()
        let id = callID(2)
        try store.createCall(id: id, applicationKey: "app", caller: "alice", callee: "bob", startedTime: T.base)
        var first = Self.playout
        first.framesConcealed = 1
        try store.recordLegPlayout(callId: id, role: .caller, first)
        try store.finishCall(id: id, cause: .hungUp, at: T.at(8000), legs: [Self.leg(.caller, "alice")])
        #expect(try store.call(id: id)?.legs.first?.playout == first)
        try store.recordLegPlayout(callId: id, role: .caller, Self.playout)
        #expect(try store.call(id: id)?.legs.first?.playout == Self.playout)
    }

    @Test(arguments: StoreFactory.all) func aReportForNoCallIsRefused(_ factory: StoreFactory) throws {
        let fixture = try factory.make()
        defer { fixture.remove() }
        let store = try fixture.withApplication()
        let error = #expect(throws: StoreError.self) { try store.recordLegPlayout(callId: callID(3), role: .caller, Self.playout) }
        #expect(error?.kind == .notFound)
    }

    /// SQLite-only: a store from before migration 4 keeps its calls and takes reports.
    @Test func aVersionThreeStoreMigratesKeepingItsCalls() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try SQLiteStore.withApplication(path: directory.storePath)
        let id = callID(4)
        try store.createCall(id: id, applicationKey: "app", caller: "alice", callee: "bob", startedTime: T.base)
        try store.finishCall(id: id, cause: .hungUp, at: T.at(8000), legs: [Self.leg(.caller, "alice")])
        let raw = try SQLiteDatabase(path: directory.storePath)
        try raw.execute("DROP TABLE call_leg_playout; DELETE FROM schema_version WHERE version = 4")
        try raw.execute(undoMigrationFive)
        let reopened = try SQLiteStore(path: directory.storePath)
        #expect(reopened.appliedMigrations == [4, 5, 6, 7])
        #expect(try reopened.call(id: id)?.legs.first?.playout == nil)
        try reopened.recordLegPlayout(callId: id, role: .caller, Self.playout)
        #expect(try reopened.call(id: id)?.legs.first?.playout == Self.playout)
    }
}
