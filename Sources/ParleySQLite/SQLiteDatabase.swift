import CSQLite

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One SQLite connection (`sqlite3 *`) to a database file or to a private in-memory database.
///
/// Opening sets up what Parley relies on: WAL journal mode (readers never block the writer,
/// and a commit is one append to the `-wal` file), a busy timeout, foreign keys enforced,
/// and the `synchronous` level chosen in `Options` (see ``Options/Synchronous`` for what
/// each level survives).
///
/// Thread safety: not `Sendable`. The connection is opened in SQLite's multi-thread mode
/// (`SQLITE_OPEN_NOMUTEX`): it and its statements may move between threads, but only one
/// thread may use them at a time. Give each owner (a store thread, a test) its own
/// connection; several connections to one file are safe, across threads and processes.
public final class SQLiteDatabase {
    /// How the connection is opened and configured.
    public struct Options: Sendable, Hashable {
        /// `PRAGMA synchronous`: when SQLite waits for the disk.
        ///
        /// In WAL mode a commit `write()`s its pages to the `-wal` file before returning.
        /// From then on the data is in the operating system's page cache, so **every level
        /// survives the process being killed** (`kill -9`, a crash): the next opener reads
        /// the WAL. What differs is a power loss or kernel crash:
        /// - `normal`: the WAL is synced only at checkpoints; a power loss may lose the
        ///   last commits, never the database's consistency.
        /// - `full`: the WAL is synced at every commit; a committed transaction survives a
        ///   power loss. Costs one `fsync` per commit.
        /// - `extra`: `full`, plus syncing the directory in rollback-journal mode.
        /// - `off`: no syncs at all; a power loss may corrupt the database.
        public enum Synchronous: String, Sendable, Hashable, CaseIterable {
            case off = "OFF"
            case normal = "NORMAL"
            case full = "FULL"
            case extra = "EXTRA"
        }

        /// Open read-only (no journal-mode change is attempted then).
        public var readOnly: Bool
        /// Create the file when it does not exist (read-write only).
        public var createIfMissing: Bool
        /// Switch the database to WAL journal mode (ignored for in-memory databases).
        public var writeAheadLog: Bool
        /// The `synchronous` level of this connection.
        public var synchronous: Synchronous
        /// How long a statement waits for another connection's lock before failing with
        /// `busy`, in milliseconds.
        public var busyTimeoutMilliseconds: Int
        /// `PRAGMA foreign_keys`: enforce REFERENCES clauses.
        public var foreignKeys: Bool

        public init(
            readOnly: Bool = false, createIfMissing: Bool = true, writeAheadLog: Bool = true,
            synchronous: Synchronous = .normal, busyTimeoutMilliseconds: Int = 5000, foreignKeys: Bool = true
        ) {
            self.readOnly = readOnly
            self.createIfMissing = createIfMissing
            self.writeAheadLog = writeAheadLog
            self.synchronous = synchronous
            self.busyTimeoutMilliseconds = busyTimeoutMilliseconds
            self.foreignKeys = foreignKeys
        }
    }

    /// How `BEGIN` takes its locks.
    public enum TransactionMode: String, Sendable, Hashable {
        /// Takes the write lock at the first write: a read-then-write transaction may then
        /// fail with `busy` without waiting.
        case deferred = "DEFERRED"
        /// Takes the write lock at `BEGIN`, waiting up to the busy timeout. The right mode
        /// for any transaction that writes.
        case immediate = "IMMEDIATE"
        /// Like `immediate` (in WAL mode the two are the same).
        case exclusive = "EXCLUSIVE"
    }

    /// The path given to `init` (`:memory:` for an in-memory database).
    public let path: String
    /// The journal mode in effect after opening, lower case: `wal` for a file opened with
    /// `writeAheadLog`, `memory` for an in-memory database, `delete` otherwise.
    public private(set) var journalMode: String = ""
    /// The `synchronous` level currently in effect.
    public private(set) var synchronous: Options.Synchronous

    let connection: Connection
    private var statementCache: [String: SQLiteStatement] = [:]
    private var savepointDepth = 0

    /// Opens (and by default creates) a database file, or `":memory:"` for a private
    /// in-memory database that disappears with the connection.
    /// - Throws: `SQLiteError` (`cantOpen`, `notADatabase`, ...) when the file cannot be
    ///   opened or configured.
    public init(path: String, options: Options = Options()) throws(SQLiteError) {
        var flags = SQLITE_OPEN_NOMUTEX
        if options.readOnly {
            flags |= SQLITE_OPEN_READONLY
        } else {
            flags |= SQLITE_OPEN_READWRITE
            if options.createIfMissing { flags |= SQLITE_OPEN_CREATE }
        }
        var handle: OpaquePointer?
        let result = sqlite3_open_v2(path, &handle, flags, nil)
        guard result == SQLITE_OK, let handle else {
            // sqlite3_open_v2 allocates a handle even on failure; it carries the message.
            let error = SQLiteError(code: result, connection: handle, operation: "open \(path)", sql: nil)
            sqlite3_close_v2(handle)
            throw error
        }
        sqlite3_extended_result_codes(handle, 1)
        sqlite3_busy_timeout(handle, Int32(clamping: options.busyTimeoutMilliseconds))
        self.connection = Connection(handle)
        self.path = path
        self.synchronous = options.synchronous

        if options.writeAheadLog && !options.readOnly {
            journalMode = try switchToWriteAheadLog(patienceMilliseconds: options.busyTimeoutMilliseconds)
        } else {
            journalMode = try pragmaText("PRAGMA journal_mode")
        }
        try execute("PRAGMA synchronous=\(options.synchronous.rawValue)")
        try execute("PRAGMA foreign_keys=\(options.foreignKeys ? "ON" : "OFF")")
    }

    /// Turns on WAL, retrying while another connection holds the lock. Switching needs an
    /// exclusive lock, and SQLite answers `busy` at once, without calling the busy handler,
    /// when connections opening the same new file at the same moment would otherwise
    /// deadlock; so the busy timeout alone does not cover several processes (or threads)
    /// opening one store together.
    private func switchToWriteAheadLog(patienceMilliseconds: Int) throws(SQLiteError) -> String {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: .milliseconds(max(patienceMilliseconds, 0)))
        var pauseMicroseconds: UInt32 = 500
        while true {
            do {
                return try pragmaText("PRAGMA journal_mode=WAL")
            } catch where error.kind == .busy && clock.now < deadline {
                usleep(pauseMicroseconds)
                pauseMicroseconds = min(pauseMicroseconds * 2, 20_000)
            }
        }
    }

    /// A private in-memory database (no WAL: memory databases keep their journal in memory).
    public static func inMemory(options: Options = Options()) throws(SQLiteError) -> SQLiteDatabase {
        try SQLiteDatabase(path: ":memory:", options: options)
    }

    /// Changes this connection's `synchronous` level, e.g. to `full` for one commit that
    /// must survive a power loss. Not allowed inside a transaction.
    public func setSynchronous(_ level: Options.Synchronous) throws(SQLiteError) {
        guard level != synchronous else { return }
        if isInTransaction {
            throw SQLiteError(.misuse, operation: "PRAGMA synchronous", message: "cannot change synchronous inside a transaction", sql: nil)
        }
        try execute("PRAGMA synchronous=\(level.rawValue)")
        synchronous = level
    }

    /// Runs one or more SQL statements separated by semicolons, discarding any rows
    /// (schema scripts, pragmas).
    public func execute(_ sql: String) throws(SQLiteError) {
        var message: UnsafeMutablePointer<CChar>?
        let result = sqlite3_exec(connection.handle, sql, nil, nil, &message)
        if let message { sqlite3_free(message) }
        if result != SQLITE_OK {
            throw SQLiteError(code: result, connection: connection.handle, operation: "exec", sql: sql)
        }
    }

    /// Runs one statement with `values` bound to its parameters `?1...?n`, through the
    /// statement cache.
    public func execute(_ sql: String, _ values: [SQLiteValue]) throws(SQLiteError) {
        try cachedStatement(sql).run(values)
    }

    /// Compiles one statement. The statement keeps the connection open while it lives.
    /// - Throws: `SQLiteError` `.sqlError` for bad SQL; `.misuse` for an empty string or
    ///   text after the first statement.
    public func prepare(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        var statement: OpaquePointer?
        var tail: UnsafePointer<CChar>?
        let result = sql.withCString { text in
            let result = sqlite3_prepare_v2(connection.handle, text, -1, &statement, &tail)
            // Anything but whitespace after the first statement would be silently ignored.
            if result == SQLITE_OK, let tail, tail.pointee != 0 {
                var rest = tail
                while rest.pointee == 0x20 || rest.pointee == 0x0A || rest.pointee == 0x0D || rest.pointee == 0x09 || rest.pointee == 0x3B {
                    rest += 1
                }
                if rest.pointee != 0 { return SQLITE_MISUSE }
            }
            return result
        }
        guard result == SQLITE_OK, let statement else {
            if let statement { sqlite3_finalize(statement) }
            if result == SQLITE_OK || result == SQLITE_MISUSE {
                let reason = result == SQLITE_OK ? "no statement in the text" : "more than one statement in the text"
                throw SQLiteError(.misuse, operation: "prepare", message: reason, sql: sql)
            }
            throw SQLiteError(code: result, connection: connection.handle, operation: "prepare", sql: sql)
        }
        return SQLiteStatement(statement, sql: sql, connection: connection)
    }

    /// The compiled statement for `sql`, prepared once and reused: reset, with its
    /// bindings cleared. Do not hold two uses of the same text at once (e.g. iterating
    /// one while running it again inside the loop); `prepare` gives an independent one.
    public func cachedStatement(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        if let statement = statementCache[sql] {
            statement.reset()
            return statement
        }
        let statement = try prepare(sql)
        statementCache[sql] = statement
        return statement
    }

    /// Runs `body` in a transaction: commits when it returns, rolls back when it throws
    /// (and rethrows its error). Inside another transaction it becomes a savepoint, so
    /// transactions nest.
    /// - Throws: `body`'s error, or `SQLiteError` when `BEGIN` or `COMMIT` fails (`busy`
    ///   after the busy timeout); after a failed `COMMIT` everything is rolled back.
    public func transaction<T>(_ mode: TransactionMode = .immediate, _ body: () throws -> T) throws -> T {
        if isInTransaction {
            savepointDepth += 1
            defer { savepointDepth -= 1 }
            let name = "parley_savepoint_\(savepointDepth)"
            try execute("SAVEPOINT \(name)")
            do {
                let result = try body()
                try execute("RELEASE \(name)")
                return result
            } catch {
                try? execute("ROLLBACK TO \(name)")
                try? execute("RELEASE \(name)")
                throw error
            }
        }
        try cachedStatement("BEGIN \(mode.rawValue)").run()
        do {
            let result = try body()
            try cachedStatement("COMMIT").run()
            return result
        } catch {
            if isInTransaction { try? cachedStatement("ROLLBACK").run() }
            throw error
        }
    }

    /// Whether a transaction is open (`BEGIN` without `COMMIT`/`ROLLBACK` yet).
    public var isInTransaction: Bool { sqlite3_get_autocommit(connection.handle) == 0 }

    /// The rowid of the last successful `INSERT` on this connection.
    public var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(connection.handle) }

    /// Rows changed by the last `INSERT`, `UPDATE` or `DELETE` on this connection.
    public var changes: Int { Int(sqlite3_changes64(connection.handle)) }

    /// The first column of the first row of `sql` as text (for pragmas), or "" without rows.
    private func pragmaText(_ sql: String) throws(SQLiteError) -> String {
        let statement = try prepare(sql)
        guard try statement.step() else { return "" }
        return try statement.optionalString(0)?.lowercased() ?? ""
    }
}

/// Owns the `sqlite3 *`; statements hold it too, so the handle is closed only after the
/// database object and every statement are gone.
final class Connection {
    let handle: OpaquePointer

    init(_ handle: OpaquePointer) { self.handle = handle }

    deinit { sqlite3_close_v2(handle) }
}
