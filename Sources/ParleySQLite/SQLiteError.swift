import CSQLite

/// The one error type of ParleySQLite: an SQLite call failed, or the wrapper refused an
/// operation before it reached SQLite (a column of the wrong type, a string too long to bind).
///
/// It carries SQLite's extended result code and message, the operation that failed and the
/// statement text, and renders as one line such as
/// `step failed: UNIQUE constraint failed: calls.id (constraint, SQLITE code 2067) in "INSERT INTO calls ..."`.
public struct SQLiteError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The class of failure, comparable with `==` against the static members.
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
        private enum Code: String, Sendable, Hashable {
            case sqlError = "SQL error"
            case constraint = "constraint"
            case busy = "busy"
            case locked = "locked"
            case readOnly = "read-only"
            case ioError = "I/O error"
            case corrupt = "corrupt"
            case notADatabase = "not a database"
            case full = "full"
            case cantOpen = "cannot open"
            case tooBig = "too big"
            case range = "range"
            case misuse = "misuse"
            case typeMismatch = "type mismatch"
            case other = "other"
        }

        private let code: Code
        private init(_ code: Code) { self.code = code }

        /// A syntax error, a missing table or column, or another generic `SQLITE_ERROR`.
        public static let sqlError = Kind(.sqlError)
        /// A UNIQUE, PRIMARY KEY, NOT NULL, CHECK or FOREIGN KEY constraint failed.
        public static let constraint = Kind(.constraint)
        /// Another connection holds a lock and the busy timeout ran out.
        public static let busy = Kind(.busy)
        /// A conflict inside this connection (e.g. dropping a table a statement is reading).
        public static let locked = Kind(.locked)
        /// The database is read-only (opened so, or the file is not writable).
        public static let readOnly = Kind(.readOnly)
        /// The operating system reported an I/O error.
        public static let ioError = Kind(.ioError)
        /// The database file is malformed.
        public static let corrupt = Kind(.corrupt)
        /// The file is not an SQLite database.
        public static let notADatabase = Kind(.notADatabase)
        /// The disk is full.
        public static let full = Kind(.full)
        /// The file could not be opened.
        public static let cantOpen = Kind(.cantOpen)
        /// A string or blob is larger than SQLite (or `Int32`) allows.
        public static let tooBig = Kind(.tooBig)
        /// A bind parameter or column index is out of range.
        public static let range = Kind(.range)
        /// The API was used in a way SQLite does not allow (reported by SQLite).
        public static let misuse = Kind(.misuse)
        /// A column read asked for a type the value does not have (wrapper check).
        public static let typeMismatch = Kind(.typeMismatch)
        /// Any other result code; see `code`.
        public static let other = Kind(.other)

        static func from(resultCode: Int32) -> Kind {
            switch resultCode & 0xff {
            case SQLITE_ERROR: .sqlError
            case SQLITE_CONSTRAINT: .constraint
            case SQLITE_BUSY: .busy
            case SQLITE_LOCKED: .locked
            case SQLITE_READONLY: .readOnly
            case SQLITE_IOERR: .ioError
            case SQLITE_CORRUPT: .corrupt
            case SQLITE_NOTADB: .notADatabase
            case SQLITE_FULL: .full
            case SQLITE_CANTOPEN: .cantOpen
            case SQLITE_TOOBIG: .tooBig
            case SQLITE_RANGE: .range
            case SQLITE_MISUSE: .misuse
            case SQLITE_MISMATCH: .typeMismatch
            default: .other
            }
        }

        public var description: String { code.rawValue }
    }

    /// What went wrong.
    public let kind: Kind
    /// SQLite's extended result code (e.g. 2067, `SQLITE_CONSTRAINT_UNIQUE`), or 0 when
    /// the wrapper refused the operation itself.
    public let code: Int32
    /// SQLite's message for the connection (`sqlite3_errmsg`), or the wrapper's reason.
    public let message: String
    /// The step that failed: `open`, `prepare`, `bind`, `step`, `column`, `exec`, ...
    public let operation: String
    /// The statement text, when the failure belongs to a statement.
    public let sql: String?

    /// SQLite's primary result code (the low 8 bits of `code`), e.g. 19 for any constraint.
    public var primaryCode: Int32 { code & 0xff }

    /// An error from an SQLite result code, with the connection's message when it has one.
    init(code: Int32, connection: OpaquePointer?, operation: String, sql: String?) {
        self.kind = Kind.from(resultCode: code)
        self.code = code
        if let connection, sqlite3_errcode(connection) != SQLITE_OK {
            self.message = String(cString: sqlite3_errmsg(connection))
        } else {
            self.message = String(cString: sqlite3_errstr(code))
        }
        self.operation = operation
        self.sql = sql
    }

    /// An error raised by the wrapper's own checks.
    init(_ kind: Kind, operation: String, message: String, sql: String?) {
        self.kind = kind
        self.code = 0
        self.message = message
        self.operation = operation
        self.sql = sql
    }

    public var description: String {
        var text = "\(operation) failed: \(message) (\(kind)"
        if code != 0 { text += ", SQLITE code \(code)" }
        text += ")"
        if let sql {
            // Statements are often written over several indented lines; show them on one.
            let oneLine = sql.split(whereSeparator: { $0.isNewline || $0 == " " || $0 == "\t" }).joined(separator: " ")
            text += " in \"" + (oneLine.count > 120 ? String(oneLine.prefix(117)) + "..." : oneLine) + "\""
        }
        return text
    }
}
