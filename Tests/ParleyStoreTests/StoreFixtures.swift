import Foundation
import ParleyCallModel
import ParleySQLite
import ParleyStore
import Testing

/// One kind of store the generic suite runs against: every test that takes a
/// `StoreFactory` argument runs once per entry of `all`. `make()` gives a new, empty
/// database of that kind. SQLite is the only row for now; another adapter (PostgreSQL)
/// joins by adding its row, with no test rewritten.
///
/// Tests that exercise something only SQLite has (its file, WAL, busy timeout, schema
/// migrations, raw SQL edits) do not take a factory and say so.
struct StoreFactory: Sendable, CustomTestStringConvertible {
    let name: String
    let make: @Sendable () throws -> TestStore

    var testDescription: String { name }

    static let all: [StoreFactory] = [.sqlite]

    /// A WAL file in a fresh temporary directory; writers give up on a lock after 50 ms so
    /// lock tests see retries quickly.
    static let sqlite = StoreFactory(name: "sqlite") {
        let directory = try TemporaryDirectory()
        let path = directory.storePath
        return TestStore(
            connections: .sqlite(path: path, writerBusyTimeoutMilliseconds: 50),
            freshMigrations: [1, 2, 3, 4, 5, 6, 7],
            remove: directory.remove,
            holdWriteLock: {
                let blocker = try SQLiteDatabase(path: path)
                try blocker.execute("BEGIN IMMEDIATE")
                return { try? blocker.execute("ROLLBACK") }
            },
            isLockConflict: { error in error.sqliteCode.map { $0 & 0xff == 5 /* SQLITE_BUSY */ } ?? false })
    }
}

/// One fresh, empty database for one test, with what the generic tests need from the
/// adapter beyond the `CallStore` protocol.
final class TestStore {
    /// Connections to this database (each `open()` is a new one).
    let connections: CallStoreFactory
    /// What `appliedMigrations` says on the first connection to a new database.
    let freshMigrations: [Int64]
    private let removeBody: () -> Void
    private let holdWriteLockBody: () throws -> () -> Void
    private let isLockConflictBody: @Sendable (StoreError) -> Bool

    init(connections: CallStoreFactory, freshMigrations: [Int64], remove: @escaping () -> Void,
         holdWriteLock: @escaping () throws -> () -> Void, isLockConflict: @escaping @Sendable (StoreError) -> Bool) {
        self.connections = connections
        self.freshMigrations = freshMigrations
        removeBody = remove
        holdWriteLockBody = holdWriteLock
        isLockConflictBody = isLockConflict
    }

    /// A new connection.
    func open() throws -> any CallStore { try connections.open() }

    /// A new connection, after adding application `app` (secret `c2VjcmV0`) and users
    /// alice, bob and carol.
    func withApplication() throws -> any CallStore {
        let store = try open()
        try store.createApplication(key: "app", name: "test", secret: "c2VjcmV0", at: T.base)
        for user in ["alice", "bob", "carol"] { try store.recordUserSeen(applicationKey: "app", userId: user, at: T.base) }
        return store
    }

    /// Makes another session hold the database's write lock until the returned closure
    /// runs: writes through `CallStore` connections fail (after their lock wait) meanwhile.
    func holdWriteLock() throws -> () -> Void { try holdWriteLockBody() }

    /// Whether `error` is the adapter's "another session holds the lock" failure.
    var isLockConflict: @Sendable (StoreError) -> Bool { isLockConflictBody }

    /// Deletes the database.
    func remove() { removeBody() }
}

/// A fresh directory under the system temporary directory, removed by `remove()`.
struct TemporaryDirectory {
    let path: String

    init() throws {
        path = NSTemporaryDirectory() + "parley-store-tests-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    var storePath: String { path + "/" + SQLiteStore.defaultFileName }

    func remove() { try? FileManager.default.removeItem(atPath: path) }
}

/// SQL that takes a SQLite store back to before migration 5 (applications' dialling
/// settings; and 6, calls' SIP fields; and 7, callback settings), for the tests of older
/// migrations: they then apply 5, 6 and 7 again too.
let undoMigrationFive = """
    DROP TABLE callback_settings; DELETE FROM schema_version WHERE version = 7;
    ALTER TABLE calls DROP COLUMN sip_call_id; ALTER TABLE calls DROP COLUMN sip_status;
    DELETE FROM schema_version WHERE version = 6;
    ALTER TABLE applications DROP COLUMN default_cli; ALTER TABLE applications DROP COLUMN allowed_number_prefixes;
    ALTER TABLE applications DROP COLUMN max_concurrent_phone_calls; ALTER TABLE applications DROP COLUMN max_phone_calls_per_minute;
    ALTER TABLE applications DROP COLUMN max_call_duration_s; ALTER TABLE applications DROP COLUMN sip_addresses_allowed;
    DELETE FROM schema_version WHERE version = 5
    """

/// Times used by the tests: a fixed base so expected values are exact.
enum T {
    static let base: Int64 = 1_764_421_200_000
    static func at(_ offsetMilliseconds: Int64) -> Int64 { base + offsetMilliseconds }
}

/// A call id in the protocol's format, distinct per number.
func callID(_ number: Int) -> String {
    let hex = String(number, radix: 16)
    return "00000000-0000-4000-8000-" + String(repeating: "0", count: max(0, 12 - hex.count)) + hex
}

extension SQLiteStore {
    /// A SQLite store (in memory, or the file at `path`) with application `app` (secret
    /// `c2VjcmV0`) and users alice, bob and carol, for the SQLite-only tests.
    static func withApplication(path: String? = nil) throws -> SQLiteStore {
        let store = try path.map { try SQLiteStore(path: $0) } ?? SQLiteStore.inMemory()
        try store.createApplication(key: "app", name: "test", secret: "c2VjcmV0", at: T.base)
        for user in ["alice", "bob", "carol"] { try store.recordUserSeen(applicationKey: "app", userId: user, at: T.base) }
        return store
    }
}

extension CallStore {
    /// A call from `caller` to `callee` that went all the way and was hung up after
    /// `talkMilliseconds`, with both legs' statistics.
    @discardableResult
    func completedCall(
        _ id: String, caller: String = "alice", callee: String = "bob", start: Int64, talkMilliseconds: Int64 = 60_000
    ) throws(StoreError) -> StoredCall {
        try createCall(id: id, applicationKey: "app", caller: caller, callee: callee, startedTime: start)
        try updateCallState(id: id, to: .progressing, at: start + 40)
        try updateCallState(id: id, to: .ringing, at: start + 220)
        try updateCallState(id: id, to: .answered, at: start + 4780)
        try updateCallState(id: id, to: .established, at: start + 4910)
        let end = start + 4780 + talkMilliseconds
        return try finishCall(
            id: id, cause: .hungUp, at: end,
            legs: [
                CallLeg(role: .caller, userId: caller, deviceId: "dev-\(caller)", updatedTime: end, statistics: .sample),
                CallLeg(role: .callee, userId: callee, updatedTime: end, statistics: CallLegStatistics(packetsSent: 10)),
            ])
    }
}

extension CallLegStatistics {
    static let sample = CallLegStatistics(
        packetsSent: 3000, octetsSent: 240_000, packetsReceived: 2970, octetsReceived: 237_600, inboundFractionLost: 0.0078125,
        inboundCumulativeLost: 30, inboundJitterMilliseconds: 2.5, outboundFractionLost: 0, outboundCumulativeLost: 1,
        outboundJitterMilliseconds: 1.25, roundTripTimeMilliseconds: 12.5)
}
