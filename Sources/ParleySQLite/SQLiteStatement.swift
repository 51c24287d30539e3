import CSQLite

/// One compiled SQL statement (`sqlite3_stmt *`), with typed binds and typed column reads.
///
/// Parameters are numbered from 1 (`?1`, or the n-th `?`); columns from 0, as in SQLite.
/// A typical read:
///
/// ```swift
/// let statement = try db.prepare("SELECT id, name FROM t WHERE created_at >= ?1")
/// let rows = try statement.query([.integer(since)]) { row throws(SQLiteError) in
///     (try row.int64(0), try row.string(1))
/// }
/// ```
///
/// Column reads are strict: `int64(_:)` throws `typeMismatch` for a NULL or text value
/// instead of converting it the way `sqlite3_column_int64` would; the `optional...`
/// forms return nil for NULL. The only conversion allowed is INTEGER to `Double`.
///
/// Not `Sendable`; see ``SQLiteDatabase`` for the threading rule.
public final class SQLiteStatement {
    /// The statement's text.
    public let sql: String

    private let handle: OpaquePointer
    private let connection: Connection
    /// Whether the last `step()` produced a row that columns can be read from.
    private var hasRow = false

    init(_ handle: OpaquePointer, sql: String, connection: Connection) {
        self.handle = handle
        self.sql = sql
        self.connection = connection
    }

    deinit { sqlite3_finalize(handle) }

    /// The number of parameters (the largest parameter index).
    public var parameterCount: Int { Int(sqlite3_bind_parameter_count(handle)) }
    /// The number of columns in a result row (0 for statements that return no rows).
    public var columnCount: Int { Int(sqlite3_column_count(handle)) }
    /// The name of result column `index` (its `AS` name, or the column's name).
    public func columnName(_ index: Int) -> String? {
        guard index >= 0, index < columnCount, let name = sqlite3_column_name(handle, Int32(index)) else { return nil }
        return String(cString: name)
    }

    // MARK: Binding

    /// Binds an integer to parameter `index` (from 1).
    public func bind(_ value: Int64, at index: Int) throws(SQLiteError) {
        try check(sqlite3_bind_int64(handle, try parameter(index), value), "bind")
    }

    /// Binds a floating-point value to parameter `index` (from 1).
    public func bind(_ value: Double, at index: Int) throws(SQLiteError) {
        try check(sqlite3_bind_double(handle, try parameter(index), value), "bind")
    }

    /// Binds a string, as UTF-8 text (embedded NUL characters included), to parameter `index`.
    public func bind(_ value: String, at index: Int) throws(SQLiteError) {
        let position = try parameter(index)
        var text = value
        let result: Int32 = text.withUTF8 { bytes in
            guard let base = bytes.baseAddress, !bytes.isEmpty else {
                // A NULL pointer would bind SQL NULL, not the empty string.
                return "".withCString { sqlite3_bind_text(handle, position, $0, 0, parley_sqlite_transient()) }
            }
            guard bytes.count <= Int(Int32.max) else { return SQLITE_TOOBIG }
            return base.withMemoryRebound(to: CChar.self, capacity: bytes.count) {
                sqlite3_bind_text(handle, position, $0, Int32(bytes.count), parley_sqlite_transient())
            }
        }
        try check(result, "bind")
    }

    /// Binds bytes as a BLOB to parameter `index` (from 1); an empty array binds an empty
    /// BLOB, not NULL.
    public func bind(_ value: [UInt8], at index: Int) throws(SQLiteError) {
        let position = try parameter(index)
        let result: Int32 = value.withUnsafeBytes { bytes in
            guard let base = bytes.baseAddress, !bytes.isEmpty else { return sqlite3_bind_zeroblob(handle, position, 0) }
            guard bytes.count <= Int(Int32.max) else { return SQLITE_TOOBIG }
            return sqlite3_bind_blob(handle, position, base, Int32(bytes.count), parley_sqlite_transient())
        }
        try check(result, "bind")
    }

    /// Binds NULL to parameter `index` (from 1).
    public func bindNull(at index: Int) throws(SQLiteError) {
        try check(sqlite3_bind_null(handle, try parameter(index)), "bind")
    }

    /// Binds any value to parameter `index` (from 1).
    public func bind(_ value: SQLiteValue, at index: Int) throws(SQLiteError) {
        switch value {
        case .null: try bindNull(at: index)
        case .integer(let integer): try bind(integer, at: index)
        case .real(let real): try bind(real, at: index)
        case .text(let text): try bind(text, at: index)
        case .blob(let bytes): try bind(bytes, at: index)
        }
    }

    /// Binds `values` to parameters 1...n, in order.
    /// - Throws: `range` when there are more values than parameters.
    public func bind(_ values: [SQLiteValue]) throws(SQLiteError) {
        for (offset, value) in values.enumerated() { try bind(value, at: offset + 1) }
    }

    /// Resets the statement to run again and sets every parameter back to NULL.
    public func reset() {
        hasRow = false
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    // MARK: Running

    /// Runs the statement to its next row: true when a row is ready to read, false when
    /// the statement is done.
    /// - Throws: `SQLiteError` (`constraint`, `busy`, ...); the statement is then reset,
    ///   its bindings kept.
    public func step() throws(SQLiteError) -> Bool {
        let result = sqlite3_step(handle)
        switch result {
        case SQLITE_ROW:
            hasRow = true
            return true
        case SQLITE_DONE:
            hasRow = false
            return false
        default:
            hasRow = false
            let error = SQLiteError(code: result, connection: connection.handle, operation: "step", sql: sql)
            sqlite3_reset(handle)
            throw error
        }
    }

    /// Binds `values`, runs the statement to completion ignoring any rows, and resets it.
    public func run(_ values: [SQLiteValue] = []) throws(SQLiteError) {
        reset()
        defer { reset() }
        try bind(values)
        while try step() {}
    }

    /// Binds `values`, runs the statement and maps every row through `row`, then resets it.
    public func query<Row>(
        _ values: [SQLiteValue] = [], _ row: (SQLiteStatement) throws(SQLiteError) -> Row
    ) throws(SQLiteError) -> [Row] {
        reset()
        defer { reset() }
        try bind(values)
        var rows: [Row] = []
        while try step() { rows.append(try row(self)) }
        return rows
    }

    /// Like `query`, but only the first row (nil when there is none).
    public func queryFirst<Row>(
        _ values: [SQLiteValue] = [], _ row: (SQLiteStatement) throws(SQLiteError) -> Row
    ) throws(SQLiteError) -> Row? {
        reset()
        defer { reset() }
        try bind(values)
        return try step() ? try row(self) : nil
    }

    // MARK: Reading columns of the current row

    /// Whether column `index` (from 0) of the current row is NULL.
    public func isNull(_ index: Int) throws(SQLiteError) -> Bool {
        try columnType(index) == SQLITE_NULL
    }

    /// Column `index` (from 0) as it is stored.
    public func value(_ index: Int) throws(SQLiteError) -> SQLiteValue {
        switch try columnType(index) {
        case SQLITE_INTEGER: .integer(sqlite3_column_int64(handle, Int32(index)))
        case SQLITE_FLOAT: .real(sqlite3_column_double(handle, Int32(index)))
        case SQLITE_TEXT: .text(readText(index))
        case SQLITE_BLOB: .blob(readBlob(index))
        default: .null
        }
    }

    /// Column `index` (from 0) as an integer. Throws `typeMismatch` unless it is INTEGER.
    public func int64(_ index: Int) throws(SQLiteError) -> Int64 {
        try require(SQLITE_INTEGER, "INTEGER", index)
        return sqlite3_column_int64(handle, Int32(index))
    }

    /// Column `index` as an integer, or nil for NULL.
    public func optionalInt64(_ index: Int) throws(SQLiteError) -> Int64? {
        try isNull(index) ? nil : try int64(index)
    }

    /// Column `index` (from 0) as a `Double`. INTEGER values convert; others throw
    /// `typeMismatch`.
    public func double(_ index: Int) throws(SQLiteError) -> Double {
        let type = try columnType(index)
        guard type == SQLITE_FLOAT || type == SQLITE_INTEGER else { throw mismatch(index, expected: "REAL", found: type) }
        return sqlite3_column_double(handle, Int32(index))
    }

    /// Column `index` as a `Double`, or nil for NULL.
    public func optionalDouble(_ index: Int) throws(SQLiteError) -> Double? {
        try isNull(index) ? nil : try double(index)
    }

    /// Column `index` (from 0) as a string. Throws `typeMismatch` unless it is TEXT.
    /// Invalid UTF-8 is repaired with U+FFFD.
    public func string(_ index: Int) throws(SQLiteError) -> String {
        try require(SQLITE_TEXT, "TEXT", index)
        return readText(index)
    }

    /// Column `index` as a string, or nil for NULL.
    public func optionalString(_ index: Int) throws(SQLiteError) -> String? {
        try isNull(index) ? nil : try string(index)
    }

    /// Column `index` (from 0) as bytes. Throws `typeMismatch` unless it is a BLOB.
    public func blob(_ index: Int) throws(SQLiteError) -> [UInt8] {
        try require(SQLITE_BLOB, "BLOB", index)
        return readBlob(index)
    }

    /// Column `index` as bytes, or nil for NULL.
    public func optionalBlob(_ index: Int) throws(SQLiteError) -> [UInt8]? {
        try isNull(index) ? nil : try blob(index)
    }

    // MARK: Private

    private func parameter(_ index: Int) throws(SQLiteError) -> Int32 {
        guard index >= 1, index <= parameterCount else {
            throw SQLiteError(.range, operation: "bind", message: "parameter \(index) is not in 1...\(parameterCount)", sql: sql)
        }
        return Int32(index)
    }

    private func columnType(_ index: Int) throws(SQLiteError) -> Int32 {
        // sqlite3_column_* are undefined without a row or for an index out of range.
        guard hasRow else {
            throw SQLiteError(.misuse, operation: "column", message: "no current row (step() did not return true)", sql: sql)
        }
        guard index >= 0, index < columnCount else {
            throw SQLiteError(.range, operation: "column", message: "column \(index) is not in 0..<\(columnCount)", sql: sql)
        }
        return sqlite3_column_type(handle, Int32(index))
    }

    private func require(_ type: Int32, _ name: String, _ index: Int) throws(SQLiteError) {
        let found = try columnType(index)
        if found != type { throw mismatch(index, expected: name, found: found) }
    }

    private func mismatch(_ index: Int, expected: String, found: Int32) -> SQLiteError {
        let names = [SQLITE_INTEGER: "INTEGER", SQLITE_FLOAT: "REAL", SQLITE_TEXT: "TEXT", SQLITE_BLOB: "BLOB", SQLITE_NULL: "NULL"]
        let column = columnName(index).map { "column \(index) (\($0))" } ?? "column \(index)"
        return SQLiteError(.typeMismatch, operation: "column", message: "\(column) is \(names[found] ?? "unknown"), expected \(expected)", sql: sql)
    }

    private func readText(_ index: Int) -> String {
        // column_text before column_bytes, so the byte count is of the UTF-8 form.
        guard let text = sqlite3_column_text(handle, Int32(index)) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, Int32(index)))
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }

    private func readBlob(_ index: Int) -> [UInt8] {
        guard let bytes = sqlite3_column_blob(handle, Int32(index)) else { return [] }
        let count = Int(sqlite3_column_bytes(handle, Int32(index)))
        return Array(UnsafeRawBufferPointer(start: bytes, count: count))
    }

    private func check(_ result: Int32, _ operation: String) throws(SQLiteError) {
        if result != SQLITE_OK { throw SQLiteError(code: result, connection: connection.handle, operation: operation, sql: sql) }
    }
}
