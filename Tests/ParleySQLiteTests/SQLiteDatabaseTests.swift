import Foundation
import ParleySQLite
import ParleyTestSupport
import Synchronization
import Testing

@Suite struct SQLiteDatabaseTests {
    @Test func fileDatabaseOpensInWALModeWithForeignKeys() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let db = try SQLiteDatabase(path: directory.file("a.sqlite"))
        #expect(db.journalMode == "wal")
        #expect(db.synchronous == .normal)
        let statement = try db.prepare("PRAGMA foreign_keys")
        #expect(try statement.queryFirst { row throws(SQLiteError) in try row.int64(0) } == 1)
        let sync = try db.prepare("PRAGMA synchronous")
        #expect(try sync.queryFirst { row throws(SQLiteError) in try row.int64(0) } == 1)  // NORMAL
        try db.setSynchronous(.full)
        #expect(try sync.queryFirst { row throws(SQLiteError) in try row.int64(0) } == 2)  // FULL
        try db.execute("CREATE TABLE t (x INTEGER)")
        #expect(FileManager.default.fileExists(atPath: directory.file("a.sqlite-wal")))
    }

    @Test func inMemoryDatabaseUsesMemoryJournal() throws {
        let db = try SQLiteDatabase.inMemory()
        #expect(db.journalMode == "memory")
        #expect(db.path == ":memory:")
    }

    @Test func everyTypeBindsAndReadsBack() throws {
        let db = try SQLiteDatabase.inMemory()
        try db.execute("CREATE TABLE t (i INTEGER, r REAL, s TEXT, b BLOB, n)")
        let insert = try db.prepare("INSERT INTO t VALUES (?1, ?2, ?3, ?4, ?5)")
        var generator = SeededGenerator(seed: 7)
        let samples: [(Int64, Double, String, [UInt8])] = [
            (Int64.min, -1.5, "", []),
            (Int64.max, Double.greatestFiniteMagnitude, "alice", [0]),
            (0, 0, "ünïcødé 🎧", generator.bytes(300)),
            (-1, 1e-300, "with\u{0}nul", [0xff, 0x00, 0x7f]),
        ]
        for (i, r, s, b) in samples {
            try insert.bind(i, at: 1)
            try insert.bind(r, at: 2)
            try insert.bind(s, at: 3)
            try insert.bind(b, at: 4)
            try insert.bindNull(at: 5)
            #expect(try insert.step() == false)
            insert.reset()
        }
        let rows = try db.prepare("SELECT i, r, s, b, n FROM t ORDER BY rowid").query { row throws(SQLiteError) in
            (try row.int64(0), try row.double(1), try row.string(2), try row.blob(3), try row.isNull(4))
        }
        #expect(rows.count == samples.count)
        for (row, sample) in zip(rows, samples) {
            #expect(row.0 == sample.0)
            #expect(row.1 == sample.1)
            #expect(row.2 == sample.2)
            #expect(row.3 == sample.3)
            #expect(row.4)
        }
    }

    @Test func emptyStringAndEmptyBlobAreNotNull() throws {
        let db = try SQLiteDatabase.inMemory()
        let statement = try db.prepare("SELECT ?1 IS NULL, typeof(?1), ?2 IS NULL, typeof(?2), length(?2)")
        try statement.bind("", at: 1)
        try statement.bind([UInt8](), at: 2)
        #expect(try statement.step())
        #expect(try statement.int64(0) == 0)
        #expect(try statement.string(1) == "text")
        #expect(try statement.int64(2) == 0)
        #expect(try statement.string(3) == "blob")
        #expect(try statement.int64(4) == 0)
    }

    @Test func sqliteValuesRoundTripThroughQuery() throws {
        let db = try SQLiteDatabase.inMemory()
        let values: [SQLiteValue] = [nil, 42, 2.5, "text", .blob([1, 2, 3]), SQLiteValue(Int64?.none), SQLiteValue(true)]
        let placeholders = (1...values.count).map { "?\($0)" }.joined(separator: ", ")
        let row = try db.prepare("SELECT \(placeholders)").queryFirst(values) { row throws(SQLiteError) in
            var read: [SQLiteValue] = []
            for index in 0..<row.columnCount { read.append(try row.value(index)) }
            return read
        }
        #expect(row == [.null, .integer(42), .real(2.5), .text("text"), .blob([1, 2, 3]), .null, .integer(1)])
    }

    @Test func optionalReadsReturnNilForNull() throws {
        let db = try SQLiteDatabase.inMemory()
        let statement = try db.prepare("SELECT NULL, 5, 1.25, 'x', x'01'")
        #expect(try statement.step())
        #expect(try statement.optionalInt64(0) == nil)
        #expect(try statement.optionalDouble(0) == nil)
        #expect(try statement.optionalString(0) == nil)
        #expect(try statement.optionalBlob(0) == nil)
        #expect(try statement.optionalInt64(1) == 5)
        #expect(try statement.double(1) == 5)  // INTEGER converts to Double
        #expect(try statement.optionalDouble(2) == 1.25)
        #expect(try statement.optionalString(3) == "x")
        #expect(try statement.optionalBlob(4) == [1])
        #expect(statement.columnName(1) == "5")
    }

    @Test func wrongColumnTypeIsATypedError() throws {
        let db = try SQLiteDatabase.inMemory()
        let statement = try db.prepare("SELECT 'text' AS name, NULL AS missing, 1.5 AS real")
        #expect(try statement.step())
        let error = #expect(throws: SQLiteError.self) { try statement.int64(0) }
        #expect(error?.kind == .typeMismatch)
        #expect(error?.description.contains("column 0 (name) is TEXT, expected INTEGER") == true)
        #expect(throws: SQLiteError.self) { try statement.string(1) }
        #expect(throws: SQLiteError.self) { try statement.int64(2) }
        #expect(throws: SQLiteError.self) { try statement.blob(0) }
        let range = #expect(throws: SQLiteError.self) { try statement.value(3) }
        #expect(range?.kind == .range)
        #expect(try statement.step() == false)
        let noRow = #expect(throws: SQLiteError.self) { try statement.value(0) }
        #expect(noRow?.kind == .misuse)
    }

    @Test func badParameterIndexIsARangeError() throws {
        let db = try SQLiteDatabase.inMemory()
        let statement = try db.prepare("SELECT ?1, ?2")
        #expect(statement.parameterCount == 2)
        for index in [0, 3, -1] {
            let error = #expect(throws: SQLiteError.self) { try statement.bind(Int64(1), at: index) }
            #expect(error?.kind == .range)
        }
        let tooMany = #expect(throws: SQLiteError.self) { try statement.bind([1, 2, 3]) }
        #expect(tooMany?.kind == .range)
    }

    @Test func badSQLIsATypedError() throws {
        let db = try SQLiteDatabase.inMemory()
        let syntax = #expect(throws: SQLiteError.self) { try db.prepare("SELEKT 1") }
        #expect(syntax?.kind == .sqlError)
        #expect(syntax?.code == 1)
        #expect(syntax?.operation == "prepare")
        #expect(syntax?.sql == "SELEKT 1")
        #expect(syntax?.message.contains("syntax error") == true)
        #expect(syntax?.description.hasPrefix("prepare failed: near \"SELEKT\": syntax error (SQL error, SQLITE code 1)") == true)

        let missing = #expect(throws: SQLiteError.self) { try db.prepare("SELECT * FROM nowhere") }
        #expect(missing?.message == "no such table: nowhere")

        let script = #expect(throws: SQLiteError.self) { try db.execute("CREATE TABLE a (x); BOGUS;") }
        #expect(script?.kind == .sqlError)

        let two = #expect(throws: SQLiteError.self) { try db.prepare("SELECT 1; SELECT 2") }
        #expect(two?.kind == .misuse)
        let none = #expect(throws: SQLiteError.self) { try db.prepare("  ") }
        #expect(none?.kind == .misuse)
        _ = try db.prepare("SELECT 1;  \n")
    }

    @Test func constraintViolationsAreTypedErrors() throws {
        let db = try SQLiteDatabase.inMemory()
        try db.execute("""
            CREATE TABLE parent (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
            CREATE TABLE child (parent_id INTEGER NOT NULL REFERENCES parent(id), x INTEGER CHECK (x > 0));
            """)
        try db.execute("INSERT INTO parent (id, name) VALUES (?1, ?2)", [1, "a"])
        let unique = #expect(throws: SQLiteError.self) { try db.execute("INSERT INTO parent (id, name) VALUES (?1, ?2)", [2, "a"]) }
        #expect(unique?.kind == .constraint)
        #expect(unique?.code == 2067)  // SQLITE_CONSTRAINT_UNIQUE
        #expect(unique?.primaryCode == 19)
        #expect(unique?.message == "UNIQUE constraint failed: parent.name")

        let notNull = #expect(throws: SQLiteError.self) { try db.execute("INSERT INTO parent (id, name) VALUES (?1, ?2)", [3, nil]) }
        #expect(notNull?.code == 1299)  // SQLITE_CONSTRAINT_NOTNULL

        let foreignKey = #expect(throws: SQLiteError.self) { try db.execute("INSERT INTO child VALUES (?1, ?2)", [99, 1]) }
        #expect(foreignKey?.code == 787)  // SQLITE_CONSTRAINT_FOREIGNKEY

        let check = #expect(throws: SQLiteError.self) { try db.execute("INSERT INTO child VALUES (?1, ?2)", [1, 0]) }
        #expect(check?.code == 275)  // SQLITE_CONSTRAINT_CHECK

        // The cached statement is usable again after its failure.
        try db.execute("INSERT INTO child VALUES (?1, ?2)", [1, 5])
        #expect(db.changes == 1)
    }

    @Test func transactionCommitsAndRollsBack() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let db = try SQLiteDatabase(path: directory.file("t.sqlite"))
        try db.execute("CREATE TABLE t (x INTEGER PRIMARY KEY)")
        let count = { () throws -> Int64 in
            try db.prepare("SELECT count(*) FROM t").queryFirst { row throws(SQLiteError) in try row.int64(0) } ?? -1
        }

        let rowid = try db.transaction { () throws -> Int64 in
            try db.execute("INSERT INTO t VALUES (?1)", [1])
            return db.lastInsertRowID
        }
        #expect(rowid == 1)
        #expect(try count() == 1)
        #expect(!db.isInTransaction)

        struct Abort: Error {}
        #expect(throws: Abort.self) {
            try db.transaction {
                try db.execute("INSERT INTO t VALUES (?1)", [2])
                #expect(db.isInTransaction)
                throw Abort()
            }
        }
        #expect(try count() == 1)
        #expect(!db.isInTransaction)

        // A constraint failure inside rolls back the earlier inserts of the transaction.
        #expect(throws: SQLiteError.self) {
            try db.transaction {
                try db.execute("INSERT INTO t VALUES (?1)", [3])
                try db.execute("INSERT INTO t VALUES (?1)", [1])
            }
        }
        #expect(try count() == 1)
    }

    @Test func nestedTransactionsBecomeSavepoints() throws {
        let db = try SQLiteDatabase.inMemory()
        try db.execute("CREATE TABLE t (x INTEGER)")
        struct Abort: Error {}
        try db.transaction {
            try db.execute("INSERT INTO t VALUES (1)")
            try? db.transaction {
                try db.execute("INSERT INTO t VALUES (2)")
                throw Abort()
            }
            try db.transaction { try db.execute("INSERT INTO t VALUES (3)") }
        }
        let values = try db.prepare("SELECT x FROM t ORDER BY x").query { row throws(SQLiteError) in try row.int64(0) }
        #expect(values == [1, 3])
    }

    @Test func synchronousCannotChangeInsideATransaction() throws {
        let db = try SQLiteDatabase.inMemory()
        try db.transaction {
            let error = #expect(throws: SQLiteError.self) { try db.setSynchronous(.full) }
            #expect(error?.kind == .misuse)
        }
        try db.setSynchronous(.full)
        #expect(db.synchronous == .full)
    }

    @Test func openingANonDatabaseOrMissingDirectoryFails() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let missing = #expect(throws: SQLiteError.self) { try SQLiteDatabase(path: directory.file("no/such/dir/x.sqlite")) }
        #expect(missing?.kind == .cantOpen)

        let junk = directory.file("junk.sqlite")
        try Data(repeating: 0x41, count: 4096).write(to: URL(fileURLWithPath: junk))
        let notADatabase = #expect(throws: SQLiteError.self) { try SQLiteDatabase(path: junk) }
        #expect(notADatabase?.kind == .notADatabase)

        let absent = #expect(throws: SQLiteError.self) {
            try SQLiteDatabase(path: directory.file("absent.sqlite"), options: .init(createIfMissing: false))
        }
        #expect(absent?.kind == .cantOpen)
    }

    @Test func readOnlyConnectionRefusesWrites() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("ro.sqlite")
        let writer = try SQLiteDatabase(path: path)
        try writer.execute("CREATE TABLE t (x); INSERT INTO t VALUES (1);")
        let reader = try SQLiteDatabase(path: path, options: .init(readOnly: true))
        let error = #expect(throws: SQLiteError.self) { try reader.execute("INSERT INTO t VALUES (2)") }
        #expect(error?.kind == .readOnly)
    }

    /// Switching a new file to WAL needs an exclusive lock, and SQLite answers `busy` to
    /// some of several simultaneous openers without waiting; every opener must still get
    /// a WAL connection. 100 fresh files, 6 openers each.
    @Test func connectionsOpeningOneNewFileTogetherAllGetWAL() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        for round in 0..<100 {
            let path = directory.file("together-\(round).sqlite")
            let modes = Mutex<[String]>([])
            let failures = Mutex<[String]>([])
            DispatchQueue.concurrentPerform(iterations: 6) { _ in
                do {
                    let db = try SQLiteDatabase(path: path)
                    // What a store does next: take the write lock to migrate.
                    try db.execute("BEGIN IMMEDIATE; CREATE TABLE IF NOT EXISTS t (x); COMMIT")
                    modes.withLock { $0.append(db.journalMode) }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
            #expect(failures.withLock { $0 } == [])
            #expect(modes.withLock { $0 } == Array(repeating: "wal", count: 6))
        }
    }

    @Test func aCommitIsVisibleToAnotherConnectionAndWritersWaitForTheLock() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("two.sqlite")
        let first = try SQLiteDatabase(path: path)
        let second = try SQLiteDatabase(path: path, options: .init(busyTimeoutMilliseconds: 50))
        try first.execute("CREATE TABLE t (x)")
        try first.execute("INSERT INTO t VALUES (?1)", [7])
        let seen = try second.prepare("SELECT x FROM t").query { row throws(SQLiteError) in try row.int64(0) }
        #expect(seen == [7])

        // While the first holds the write lock, the second's write fails with busy after
        // its timeout, and its reads still see the last commit (WAL).
        try first.transaction {
            try first.execute("INSERT INTO t VALUES (?1)", [8])
            let busy = #expect(throws: SQLiteError.self) { try second.execute("INSERT INTO t VALUES (?1)", [9]) }
            #expect(busy?.kind == .busy)
            let during = try second.prepare("SELECT count(*) FROM t").queryFirst { row throws(SQLiteError) in try row.int64(0) }
            #expect(during == 1)
        }
        try second.execute("INSERT INTO t VALUES (?1)", [9])
        let after = try first.prepare("SELECT count(*) FROM t").queryFirst { row throws(SQLiteError) in try row.int64(0) }
        #expect(after == 3)
    }

    @Test func statementsOutliveTheirDatabaseObject() throws {
        var db: SQLiteDatabase? = try SQLiteDatabase.inMemory()
        let statement = try db!.prepare("SELECT 40 + 2")
        db = nil
        #expect(try statement.queryFirst { row throws(SQLiteError) in try row.int64(0) } == 42)
    }

    @Test func cachedStatementsAreReusedAndReset() throws {
        let db = try SQLiteDatabase.inMemory()
        let first = try db.cachedStatement("SELECT ?1")
        try first.bind(Int64(5), at: 1)
        #expect(try first.step())
        let again = try db.cachedStatement("SELECT ?1")
        #expect(first === again)
        #expect(try again.step())
        #expect(try again.isNull(0))  // bindings were cleared
    }
}
