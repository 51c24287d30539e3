import Dispatch
import Foundation
import ParleySQLite
import Synchronization
import ParleyStore
import Testing

/// SQLite-only: the SQLite schema, its migrations and how the SQLite file is opened.
@Suite struct SchemaTests {
    @Test func anInMemoryStoreIsPrivateToItsConnection() throws {
        let first = try SQLiteStore.withApplication()
        let second = try SQLiteStore.inMemory()
        #expect(first.path == ":memory:")
        #expect(first.appliedMigrations == [1, 2, 3, 4, 5, 6, 7])
        #expect(try first.application(key: "app") != nil)
        #expect(try second.applications().isEmpty)
    }

    @Test func aDataDirectoryFactoryMakesAPrivateDirectoryAndSharesItsFile() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let dataDirectory = directory.path + "/data/parley"
        let factory = try CallStoreFactory.sqlite(dataDirectory: dataDirectory)
        #expect(factory.description == "sqlite:" + dataDirectory + "/" + SQLiteStore.defaultFileName)
        let attributes = try FileManager.default.attributesOfItem(atPath: dataDirectory)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o700)
        let first = try factory.open(for: .requests)
        #expect(first.appliedMigrations == [1, 2, 3, 4, 5, 6, 7])
        try first.createApplication(key: "k", name: "n", secret: "s", at: T.base)
        let writer = try factory.open(for: .writer)
        #expect(writer.appliedMigrations.isEmpty)
        #expect(try writer.application(key: "k") != nil)
        #expect(FileManager.default.fileExists(atPath: dataDirectory + "/" + SQLiteStore.defaultFileName))

        // A path that cannot be a directory is a clear error, not a crash.
        let file = directory.path + "/plain-file"
        #expect(FileManager.default.createFile(atPath: file, contents: Data()))
        let error = #expect(throws: StoreError.self) { try CallStoreFactory.sqlite(dataDirectory: file + "/below") }
        #expect(error?.kind == .database)
        #expect(error?.message.hasPrefix("cannot create data directory \(file)/below") == true)
    }

    @Test func migrationsRunOnceAndOpeningTwiceChangesNothing() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let first = try SQLiteStore(path: directory.storePath)
        #expect(first.appliedMigrations == [1, 2, 3, 4, 5, 6, 7])
        #expect(SQLiteStore.schemaVersion == 7)
        try first.createApplication(key: "k", name: "n", secret: "s", at: T.base)
        let second = try SQLiteStore(path: directory.storePath)
        #expect(second.appliedMigrations.isEmpty)
        #expect(try second.application(key: "k") != nil)

        let raw = try SQLiteDatabase(path: directory.storePath)
        #expect(raw.journalMode == "wal")
        let versions = try raw.prepare("SELECT version, name FROM schema_version").query { row throws(SQLiteError) in
            (try row.int64(0), try row.string(1))
        }
        #expect(versions.map(\.0) == [1, 2, 3, 4, 5, 6, 7])
        let tables = try raw.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name")
            .query { row throws(SQLiteError) in try row.string(0) }
        #expect(tables == ["applications", "call_events", "call_leg_playout", "call_legs", "callback_settings", "calls", "push_credentials", "push_tokens", "schema_version", "users"])
    }

    @Test func aNewerSchemaIsRefusedUntouched() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        _ = try SQLiteStore(path: directory.storePath)
        let raw = try SQLiteDatabase(path: directory.storePath)
        try raw.execute("INSERT INTO schema_version (version, name) VALUES (?1, ?2)", [99, "from the future"])
        let error = #expect(throws: StoreError.self) { try SQLiteStore(path: directory.storePath) }
        #expect(error?.kind == .schemaTooNew)
        #expect(error?.message == "database schema version 99 is newer than this build's 7; upgrade parleyd")
    }

    @Test func aFileThatIsNotADatabaseIsADatabaseError() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try Array(repeating: UInt8(ascii: "x"), count: 8192).withUnsafeBytes { bytes in
            try bytes.write(to: directory.storePath)
        }
        let error = #expect(throws: StoreError.self) { try SQLiteStore(path: directory.storePath) }
        #expect(error?.kind == .database)
        #expect(error?.sqliteCode == 26)  // SQLITE_NOTADB
    }

    @Test func unknownStoredValuesAreCorruptRecords() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try SQLiteStore.withApplication(path: directory.storePath)
        try store.createCall(id: callID(1), applicationKey: "app", caller: "alice", callee: "bob", startedTime: T.base)
        let raw = try SQLiteDatabase(path: directory.storePath)
        try raw.execute("UPDATE calls SET direction = 'appToMars'")
        let error = #expect(throws: StoreError.self) { try store.call(id: callID(1)) }
        #expect(error?.kind == .corruptRecord)
        #expect(error?.message.contains("appToMars") == true)
    }

    @Test func storesOpeningAtOnceMigrateExactlyOnce() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.storePath
        let results = Mutex<[Result<[Int64], StoreError>]>([])
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            let result = Result { () throws(StoreError) -> [Int64] in try SQLiteStore(path: path).appliedMigrations }
            results.withLock { $0.append(result) }
        }
        let applied = try results.withLock { list in try list.map { try $0.get() } }
        #expect(applied.count == 4)
        #expect(applied.flatMap { $0 } == [1, 2, 3, 4, 5, 6, 7])
    }
}

extension UnsafeRawBufferPointer {
    fileprivate func write(to path: String) throws {
        guard let file = fopen(path, "wb") else { throw StoreTestError.cannotWrite(path) }
        defer { fclose(file) }
        guard fwrite(baseAddress, 1, count, file) == count else { throw StoreTestError.cannotWrite(path) }
    }
}

enum StoreTestError: Error { case cannotWrite(String) }

#if canImport(Glibc)
import Glibc
#endif
