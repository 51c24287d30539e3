/// The one error type of the store port (`CallStore`), whatever the adapter.
///
/// `kind` says what the caller should do (a REST layer maps `notFound` to 404,
/// `alreadyExists` and `callEnded` to 409, `invalidArgument` to 400, the rest to 500);
/// `message` is one line for logs and error bodies, such as
/// `call 6f1c2a9e-3b7d-4c55-9a41-0e8f5d2b7c13 not found`.
public struct StoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The class of failure, comparable with `==` against the static members.
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
        private enum Code: String, Sendable, Hashable {
            case notFound = "not found"
            case alreadyExists = "already exists"
            case callEnded = "call ended"
            case invalidArgument = "invalid argument"
            case schemaTooNew = "schema too new"
            case corruptRecord = "corrupt record"
            case database = "database"
        }

        private let code: Code
        private init(_ code: Code) { self.code = code }

        /// The application, user or call does not exist (in that application).
        public static let notFound = Kind(.notFound)
        /// An application with that key, or a call with that id, exists already.
        public static let alreadyExists = Kind(.alreadyExists)
        /// The call has ended; its record no longer changes.
        public static let callEnded = Kind(.callEnded)
        /// An argument is out of range or inconsistent (a limit, a cursor, an error
        /// without cause `error`, ...).
        public static let invalidArgument = Kind(.invalidArgument)
        /// The database was written by a newer Parley (its schema version is higher than
        /// this build knows); nothing was changed.
        public static let schemaTooNew = Kind(.schemaTooNew)
        /// A stored value could not be read back (an unknown state or cause string).
        public static let corruptRecord = Kind(.corruptRecord)
        /// The database failed (busy, disk full, I/O error, ...); `isTransient` says
        /// whether trying again later may succeed, and a SQLite store sets `sqliteCode`.
        public static let database = Kind(.database)

        public var description: String { code.rawValue }
    }

    /// What went wrong.
    public let kind: Kind
    /// One line saying what and where.
    public let message: String
    /// SQLite's extended result code when a SQLite store failed with `database`, else nil.
    /// (A SQLite detail on the port's error: REST answers 503 for SQLite's busy code.)
    public let sqliteCode: Int32?
    /// Whether the failure passes with time, so the same operation may succeed when tried
    /// again: the database was locked or busy, an I/O error, a full disk, no memory. Only
    /// ever true for `database`; the adapter decides, because only it knows its codes.
    /// `StoreWriter` retries a transaction that failed this way and drops a write that
    /// failed otherwise.
    public let isTransient: Bool

    /// An error of `kind`; `isTransient` only takes effect for `database`.
    public init(_ kind: Kind, _ message: String, sqliteCode: Int32? = nil, isTransient: Bool = false) {
        self.kind = kind
        self.message = message
        self.sqliteCode = sqliteCode
        self.isTransient = kind == .database && isTransient
    }

    public var description: String { "\(message) (\(kind))" }
}
