public import ParleyCallModel
import ParleySQLite

/// The store port (`CallStore`) on SQLite, its first adapter: applications, the users each
/// application has seen, call records with their media legs, call timelines and push
/// registrations in one WAL-mode file. See docs/store.md for the schema and the guarantees.
///
/// What is SQLite's own rather than the port's: the file (`path`, `defaultFileName`), the
/// `Durability` levels (WAL with `synchronous` NORMAL or FULL), the busy timeout, the
/// schema migrations and `sqliteCode` on its errors.
///
/// Every time is a parameter in milliseconds since the Unix epoch; the store never reads
/// a clock. Every public method is one transaction: when it returns, its change is
/// committed and visible to any other connection, and it survives `parleyd` being killed.
///
/// Thread safety: not `Sendable`, like the connection it owns. `parleyd` gives the store
/// to one thread (blocking disk work stays off the cooperative pool) and sends it
/// requests; a second `SQLiteStore` on the same file (another thread or process) is safe.
public final class SQLiteStore: CallStore {
    /// What a commit must survive. See docs/store.md, "Durability".
    public enum Durability: Sendable, Hashable {
        /// Every commit survives the process being killed (`kill -9`, a crash): in WAL
        /// mode SQLite has `write()`n it to the `-wal` file, in the kernel's page cache,
        /// before returning (`synchronous=NORMAL`). A power loss or kernel crash may lose
        /// the last commits, never consistency. No `fsync` per commit. The default: it is
        /// what "a crash of parleyd loses no finished call's record" needs.
        case processCrash
        /// Also survive a power loss for what matters after one: commits that finish a
        /// call, close calls at start, or change an application wait for `fsync`
        /// (`synchronous=FULL` for that commit); in-progress updates stay as in
        /// `processCrash`. Costs one `fsync` per finished call (about 9 ms on the
        /// development VM, so about 100 finished calls per second per store).
        case powerLoss
    }

    /// The file name `parleyd` uses inside its data directory.
    public static let defaultFileName = "parley.sqlite"

    /// The schema version of a fully migrated store.
    public static var schemaVersion: Int64 { Schema.latestVersion }

    /// The underlying connection's path.
    public var path: String { db.path }
    /// The durability chosen at open.
    public let durability: Durability
    /// Schema versions applied when this store was opened (empty if it was up to date).
    public let appliedMigrations: [Int64]

    let db: SQLiteDatabase

    /// Opens (creating if needed) the store at `path` and brings its schema up to date.
    /// - Throws: `StoreError` `.schemaTooNew` for a database from a newer Parley,
    ///   `.database` when SQLite cannot open or migrate the file.
    public init(path: String, durability: Durability = .processCrash, busyTimeoutMilliseconds: Int = 5000) throws(StoreError) {
        self.durability = durability
        do {
            db = try SQLiteDatabase(
                path: path, options: .init(synchronous: .normal, busyTimeoutMilliseconds: busyTimeoutMilliseconds))
        } catch {
            throw StoreError(.database, "cannot open store: \(error)", sqliteCode: error.code,
                             isTransient: Self.isTransient(code: error.code))
        }
        let db = self.db
        appliedMigrations = try Self.mapErrors { try Schema.migrate(db) }
    }

    /// A private in-memory store, for tests and `--data-dir :memory:`-style runs.
    public static func inMemory() throws(StoreError) -> SQLiteStore {
        try SQLiteStore(path: ":memory:", durability: .processCrash)
    }

    // MARK: Applications

    /// Creates an application.
    /// - Throws: `.alreadyExists` when the key is taken.
    @discardableResult
    public func createApplication(key: String, name: String, secret: String, at time: Int64) throws(StoreError) -> Application {
        let application = Application(key: key, name: name, secret: secret, createdTime: time)
        try write(durable: true) {
            do {
                // The dialling columns are written from `DiallingSettings()`, not left to the
                // migration's defaults, so a new application always gets today's defaults.
                try db.execute(
                    """
                    INSERT INTO applications (key, name, secret, created_at, \(Self.diallingColumns))
                    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
                    """,
                    [.text(key), .text(name), .text(secret), .integer(time)] + Self.diallingValues(application.dialling))
            } catch let error as SQLiteError where error.kind == .constraint {
                throw StoreError(.alreadyExists, "application \(key) already exists")
            }
        }
        return application
    }

    /// Every application, oldest first.
    public func applications() throws(StoreError) -> [Application] {
        try read {
            try db.cachedStatement("SELECT \(Self.applicationColumns) FROM applications ORDER BY created_at, key")
                .query([], Self.readApplication)
        }.map(Self.checked)
    }

    /// The application with `key`, or nil.
    public func application(key: String) throws(StoreError) -> Application? {
        try read { try fetchApplication(key) }
    }

    /// Replaces an application's secret. The old secret stays valid for
    /// `gracePeriodMilliseconds` after `time` (0: at once invalid), replacing any
    /// earlier previous secret.
    /// - Throws: `.notFound` for an unknown key; `.invalidArgument` for a negative grace
    ///   period or a new secret equal to the current one.
    @discardableResult
    public func rotateSecret(
        key: String, newSecret: String, at time: Int64, gracePeriodMilliseconds: Int64
    ) throws(StoreError) -> Application {
        guard gracePeriodMilliseconds >= 0 else {
            throw StoreError(.invalidArgument, "grace period \(gracePeriodMilliseconds) ms is negative")
        }
        return try write(durable: true) {
            guard var application = try fetchApplication(key) else {
                throw StoreError(.notFound, "application \(key) not found")
            }
            guard application.secret != newSecret else {
                throw StoreError(.invalidArgument, "the new secret of application \(key) equals the current one")
            }
            let keepPrevious = gracePeriodMilliseconds > 0
            application.previousSecret = keepPrevious ? application.secret : nil
            application.previousSecretValidUntil = keepPrevious ? time.addingClamped(gracePeriodMilliseconds) : nil
            application.secret = newSecret
            application.secretRotatedTime = time
            try db.execute(
                """
                UPDATE applications SET secret = ?2, previous_secret = ?3, previous_secret_valid_until = ?4,
                    secret_rotated_at = ?5 WHERE key = ?1
                """,
                [.text(key), .text(newSecret), SQLiteValue(application.previousSecret),
                 SQLiteValue(application.previousSecretValidUntil), .integer(time)])
            return application
        }
    }

    /// Replaces an application's dialling settings (`Application.dialling`).
    /// - Throws: `.notFound` for an unknown key; `.invalidArgument` when the settings have a
    ///   `problem` (nothing is changed).
    @discardableResult
    public func setDiallingSettings(applicationKey: String, _ settings: DiallingSettings) throws(StoreError) -> Application {
        if let problem = settings.problem {
            throw StoreError(.invalidArgument, "dialling settings of application \(applicationKey): \(problem)")
        }
        return try write(durable: true) {
            guard var application = try fetchApplication(applicationKey) else {
                throw StoreError(.notFound, "application \(applicationKey) not found")
            }
            try db.execute(
                """
                UPDATE applications SET default_cli = ?2, allowed_number_prefixes = ?3, max_concurrent_phone_calls = ?4,
                    max_phone_calls_per_minute = ?5, max_call_duration_s = ?6, sip_addresses_allowed = ?7 WHERE key = ?1
                """,
                [.text(applicationKey)] + Self.diallingValues(settings))
            application.dialling = settings
            return application
        }
    }

    // MARK: Users

    /// Notes that `userId` connected to `applicationKey` at `time`: the first time makes
    /// the user known; later times move `lastSeenTime` forward.
    /// - Throws: `.notFound` for an unknown application.
    @discardableResult
    public func recordUserSeen(applicationKey: String, userId: String, at time: Int64) throws(StoreError) -> KnownUser {
        try write(durable: false) {
            do {
                try db.execute(
                    """
                    INSERT INTO users (application_key, user_id, first_seen_at, last_seen_at) VALUES (?1, ?2, ?3, ?3)
                    ON CONFLICT (application_key, user_id) DO UPDATE SET
                        last_seen_at = max(last_seen_at, excluded.last_seen_at),
                        first_seen_at = min(first_seen_at, excluded.first_seen_at)
                    """,
                    [.text(applicationKey), .text(userId), .integer(time)])
            } catch let error as SQLiteError where error.kind == .constraint {
                throw StoreError(.notFound, "application \(applicationKey) not found")
            }
            guard let user = try fetchUser(applicationKey, userId) else {
                throw StoreError(.database, "user \(userId) vanished after being recorded", isTransient: true)
            }
            return user
        }
    }

    /// The user if `applicationKey` has seen it, else nil.
    public func knownUser(applicationKey: String, userId: String) throws(StoreError) -> KnownUser? {
        try read { try fetchUser(applicationKey, userId) }
    }

    /// Every user the store has seen, of one application or of all, ordered by application
    /// and user id: parleyd seeds its presence with them at start, so calls to users seen
    /// in earlier runs reach "unavailable" rather than "destination user not found".
    public func knownUsers(applicationKey: String?) throws(StoreError) -> [KnownUser] {
        try read {
            let sql = "SELECT application_key, user_id, first_seen_at, last_seen_at FROM users"
                + (applicationKey == nil ? "" : " WHERE application_key = ?1") + " ORDER BY application_key, user_id"
            return try db.cachedStatement(sql).query(applicationKey.map { [.text($0)] } ?? []) { row throws(SQLiteError) in
                KnownUser(applicationKey: try row.string(0), userId: try row.string(1),
                          firstSeenTime: try row.int64(2), lastSeenTime: try row.int64(3))
            }
        }
    }

    // MARK: Calls

    /// Records a new call in state `initiating`. The row keeps each end's address text;
    /// their kinds are the direction's.
    /// - Throws: `.alreadyExists` for a call id already stored; `.notFound` for an unknown
    ///   application; `.invalidArgument` when an address is not of its direction's kind.
    @discardableResult
    public func createCall(
        id: String, applicationKey: String, caller: PartyAddress, callee: PartyAddress, direction: CallDirection,
        startedTime: Int64
    ) throws(StoreError) -> StoredCall {
        guard direction.fits(caller: caller, callee: callee) else {
            throw StoreError(.invalidArgument, """
                call \(id): direction \(direction.rawValue) joins a \(direction.callerKind.rawValue) caller and a \
                \(direction.calleeKind.rawValue) callee, not a \(caller.kind.rawValue) and a \(callee.kind.rawValue)
                """)
        }
        try write(durable: false) {
            do {
                try db.execute(
                    """
                    INSERT INTO calls (id, application_key, caller, callee, direction, state, started_at)
                    VALUES (?1, ?2, ?3, ?4, ?5, 'initiating', ?6)
                    """,
                    [.text(id), .text(applicationKey), .text(caller.address), .text(callee.address), .text(direction.rawValue),
                     .integer(startedTime)])
            } catch let error as SQLiteError where error.code == 787 /* SQLITE_CONSTRAINT_FOREIGNKEY */ {
                throw StoreError(.notFound, "application \(applicationKey) not found")
            } catch let error as SQLiteError where error.kind == .constraint {
                throw StoreError(.alreadyExists, "call \(id) already exists")
            }
        }
        return StoredCall(
            callId: id, applicationKey: applicationKey, caller: caller, callee: callee, direction: direction,
            state: .initiating, details: CallTimes(startedTime: startedTime))
    }

    /// Moves a call to `state` and sets that state's time (`progressedTime` for
    /// `progressing`, ...) unless it was set before: a time records the first arrival.
    /// - Throws: `.notFound`; `.callEnded` for an ended call; `.invalidArgument` for
    ///   `ended` (use `finishCall`).
    public func updateCallState(id: String, to state: CallState, at time: Int64) throws(StoreError) {
        let column: String?
        switch state {
        case .initiating: column = nil
        case .progressing: column = "progressed_at"
        case .ringing: column = "rung_at"
        case .answered: column = "answered_at"
        case .established: column = "established_at"
        case .ended: throw StoreError(.invalidArgument, "call \(id): use finishCall to end a call")
        }
        try write(durable: false) {
            let setTime = column.map { ", \($0) = coalesce(\($0), ?3)" } ?? ""
            try db.execute(
                "UPDATE calls SET state = ?2\(setTime) WHERE id = ?1 AND state <> 'ended'",
                column == nil ? [.text(id), .text(state.rawValue)] : [.text(id), .text(state.rawValue), .integer(time)])
            if db.changes == 0 { try throwMissingOrEnded(id) }
        }
    }

    public func recordSIP(callId: String, sipCallId: String?, sipStatus: Int?) throws(StoreError) {
        if let sipStatus, !(100...699).contains(sipStatus) {
            throw StoreError(.invalidArgument, "call \(callId): SIP status \(sipStatus) is not 100-699")
        }
        try write(durable: false) {
            try db.execute(
                "UPDATE calls SET sip_call_id = coalesce(?2, sip_call_id), sip_status = coalesce(?3, sip_status) WHERE id = ?1",
                [.text(callId), SQLiteValue(sipCallId), sipStatus.map { .integer(Int64($0)) } ?? .null])
            if db.changes == 0 { throw StoreError(.notFound, "call \(callId) not found") }
        }
    }

    /// Stores (or replaces) the statistics of one leg of a call in progress, so a record
    /// keeps figures even if the process dies before the end.
    /// - Throws: `.notFound`; `.callEnded` once the call ended.
    public func recordLeg(callId: String, _ leg: CallLeg) throws(StoreError) {
        try write(durable: false) {
            guard let (seq, state) = try fetchSeqAndState(callId) else { throw StoreError(.notFound, "call \(callId) not found") }
            guard state != .ended else { throw StoreError(.callEnded, "call \(callId) has ended") }
            try upsertLeg(seq, leg)
        }
    }

    /// Stores (or replaces) a device's playout counters for its leg of a call, in progress
    /// or ended.
    /// - Throws: `.notFound` when there is no such call.
    public func recordLegPlayout(callId: String, role: CallLegRole, _ playout: CallLegPlayout) throws(StoreError) {
        try write(durable: false) {
            guard let (seq, _) = try fetchSeqAndState(callId) else { throw StoreError(.notFound, "call \(callId) not found") }
            let p = playout
            try db.execute(
                """
                INSERT OR REPLACE INTO call_leg_playout (call_seq, role, reported_at, frames_played, frames_concealed,
                    frames_fec_recovered, frames_comfort_noise, frames_silent, frames_stretched, frames_shrunk,
                    packets_late, target_delay_ms)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)
                """,
                [.integer(seq), .text(role.rawValue), .integer(p.reportedTime), .integer(p.framesPlayed),
                 .integer(p.framesConcealed), .integer(p.framesFECRecovered), .integer(p.framesComfortNoise),
                 .integer(p.framesSilent), .integer(p.framesStretched), .integer(p.framesShrunk), .integer(p.packetsLate),
                 .integer(p.targetDelayMilliseconds)])
        }
    }

    /// Ends a call: sets `ended`, the end time, the cause (and error), the duration
    /// (answer to end, 0 when never answered), and the final statistics of `legs`.
    /// The commit is durable as chosen by `durability`.
    /// - Returns: the finished record.
    /// - Throws: `.notFound`; `.callEnded` when it had ended already (the record is left
    ///   as it was); `.invalidArgument` when `error` is missing for cause `error` or given
    ///   for another cause.
    @discardableResult
    public func finishCall(
        id: String, cause: CallEndCause, error callError: CallError?, at time: Int64, legs: [CallLeg]
    ) throws(StoreError) -> StoredCall {
        try Self.checkCause(cause, callError, id)
        return try write(durable: true) {
            guard let (seq, state) = try fetchSeqAndState(id) else { throw StoreError(.notFound, "call \(id) not found") }
            guard state != .ended else { throw StoreError(.callEnded, "call \(id) has ended already") }
            try endCall(seq: seq, cause: cause, error: callError, at: time)
            for leg in legs { try upsertLeg(seq, leg) }
            guard let record = try fetchCall(whereClause: "seq = ?1", [.integer(seq)]) else {
                throw StoreError(.database, "call \(id) vanished while ending", isTransient: true)
            }
            return record
        }
    }

    /// Closes every call not yet ended, as a restart must for calls a crash interrupted:
    /// cause `cause` (with `error`), ended at `time` (the restart: when the process
    /// died is not known). Run once at start, before accepting connections.
    /// - Returns: the calls closed, so their parties can be told.
    @discardableResult
    public func closeCallsInProgress(
        cause: CallEndCause, error callError: CallError?, at time: Int64
    ) throws(StoreError) -> [StoredCall] {
        try Self.checkCause(cause, callError, "in progress")
        return try write(durable: true) {
            let open = try db.cachedStatement("SELECT seq FROM calls WHERE state <> 'ended' ORDER BY seq")
                .query { row throws(SQLiteError) in try row.int64(0) }
            var closed: [StoredCall] = []
            for seq in open {
                try endCall(seq: seq, cause: cause, error: callError, at: time)
                if let record = try fetchCall(whereClause: "seq = ?1", [.integer(seq)]) { closed.append(record) }
            }
            return closed
        }
    }

    /// The call with `id`, with its legs; nil if there is none, or if `applicationKey` is
    /// given and the call belongs to another application.
    public func call(id: String, applicationKey: String?) throws(StoreError) -> StoredCall? {
        try read {
            if let applicationKey {
                return try fetchCall(whereClause: "id = ?1 AND application_key = ?2", [.text(id), .text(applicationKey)])
            }
            return try fetchCall(whereClause: "id = ?1", [.text(id)])
        }
    }

    /// One page of an application's calls; see `CallQuery` for the order and paging.
    /// - Throws: `.invalidArgument` for a limit outside 1...1000 or a cursor this store
    ///   did not write.
    public func calls(_ query: CallQuery) throws(StoreError) -> CallPage {
        guard (1...CallQuery.maximumLimit).contains(query.limit) else {
            throw StoreError(.invalidArgument, "limit \(query.limit) is not in 1...\(CallQuery.maximumLimit)")
        }
        var after = CallCursor(startedTime: Int64.min, row: Int64.min)
        if let text = query.cursor {
            guard let cursor = CallCursor(text) else { throw StoreError(.invalidArgument, "cursor \"\(text)\" is not valid") }
            after = cursor
        }
        return try read {
            // Two statements rather than `?2 IS NULL OR ...`, so each can use its index.
            let userFilter = query.user == nil ? "" : Self.userFilter
            let statement = try db.cachedStatement(
                """
                SELECT \(Self.callColumns) FROM calls
                WHERE application_key = ?1 \(userFilter) AND started_at >= ?3 AND (started_at, seq) > (?4, ?5)
                ORDER BY started_at, seq LIMIT ?6
                """)
            let rows = try statement.query(
                [.text(query.applicationKey), SQLiteValue(query.user), .integer(query.since),
                 .integer(after.startedTime), .integer(after.row), .integer(Int64(query.limit) + 1)],
                Self.readCallRow)
            var calls: [StoredCall] = []
            for row in rows.prefix(query.limit) {
                var record = try Self.decode(row)
                record.legs = try fetchLegs(seq: row.seq)
                calls.append(record)
            }
            let last = rows.count > query.limit ? rows[query.limit - 1] : nil
            return CallPage(calls: calls, nextCursor: last.map { CallCursor(startedTime: $0.record.details.startedTime, row: $0.seq).text })
        }
    }

    /// How many calls are in each state (for metrics), of one application or of all.
    public func callCountsByState(applicationKey: String?) throws(StoreError) -> [CallState: Int] {
        try read {
            let filter = applicationKey == nil ? "" : "WHERE application_key = ?1"
            let pairs = try db.cachedStatement("SELECT state, count(*) FROM calls \(filter) GROUP BY state")
                .query(applicationKey.map { [.text($0)] } ?? []) { row throws(SQLiteError) in
                    (try row.string(0), try row.int64(1))
                }
            var counts: [CallState: Int] = [:]
            for (name, count) in pairs {
                guard let state = CallState(rawValue: name) else { throw StoreError(.corruptRecord, "unknown call state \"\(name)\"") }
                counts[state] = Int(count)
            }
            return counts
        }
    }

    // MARK: Transactions and error mapping

    /// Runs `body` in one write transaction; with `durable` and `.powerLoss`, its commit
    /// waits for `fsync`.
    func write<T>(durable: Bool, _ body: () throws -> T) throws(StoreError) -> T {
        // Inside an outer transaction (`transaction(durable:)`) the outer one decides.
        let full = durable && durability == .powerLoss && !db.isInTransaction
        return try Self.mapErrors {
            if full { try db.setSynchronous(.full) }
            defer { if full { try? db.setSynchronous(.normal) } }
            return try db.transaction(.immediate, body)
        }
    }

    /// Runs several of this store's changes as one transaction (each method's own
    /// transaction becomes a savepoint inside it): all of them commit together, or none.
    /// With `durable` and `.powerLoss`, the commit waits for `fsync`. `StoreWriter` uses
    /// it for group commits.
    public func transaction<T>(durable: Bool, _ body: (any CallStore) throws(StoreError) -> T) throws(StoreError) -> T {
        try write(durable: durable) { () throws -> T in try body(self) }
    }

    /// Runs `body` in one read transaction, so its several statements see one snapshot.
    func read<T>(_ body: () throws -> T) throws(StoreError) -> T {
        try Self.mapErrors { try db.transaction(.deferred, body) }
    }

    private static func mapErrors<T>(_ body: () throws -> T) throws(StoreError) -> T {
        do {
            return try body()
        } catch let error as StoreError {
            throw error
        } catch let error as SQLiteError {
            throw StoreError(.database, error.description, sqliteCode: error.code, isTransient: Self.isTransient(code: error.code))
        } catch {
            throw StoreError(.database, "\(error)", isTransient: true)
        }
    }

    /// SQLite failures that pass with time: the file busy or locked, no memory, I/O, a full
    /// disk, a file that cannot be opened now, a WAL lock protocol error.
    static func isTransient(code: Int32) -> Bool {
        switch code & 0xff {
        case 5 /* BUSY */, 6 /* LOCKED */, 7 /* NOMEM */, 10 /* IOERR */, 13 /* FULL */, 14 /* CANTOPEN */, 15 /* PROTOCOL */:
            return true
        default:
            return false
        }
    }

    private static func checkCause(_ cause: CallEndCause, _ error: CallError?, _ what: String) throws(StoreError) {
        if cause == .error, error == nil {
            throw StoreError(.invalidArgument, "call \(what): cause error needs an error code and message")
        }
        if cause != .error, error != nil {
            throw StoreError(.invalidArgument, "call \(what): an error is only recorded with cause error, not \(cause.rawValue)")
        }
    }

    // MARK: Rows

    private static let diallingColumns = """
        default_cli, allowed_number_prefixes, max_concurrent_phone_calls, max_phone_calls_per_minute, max_call_duration_s, \
        sip_addresses_allowed
        """

    private static let applicationColumns =
        "key, name, secret, previous_secret, previous_secret_valid_until, created_at, secret_rotated_at, \(diallingColumns)"

    /// The values of `diallingColumns`, in their order.
    private static func diallingValues(_ settings: DiallingSettings) -> [SQLiteValue] {
        [SQLiteValue(settings.defaultCLI), .text(settings.allowedNumberPrefixes.joined(separator: ",")),
         .integer(Int64(settings.maxConcurrentPhoneCalls)), .integer(Int64(settings.maxPhoneCallsPerMinute)),
         .integer(Int64(settings.maxCallDurationSeconds)), .integer(settings.allowsSIPAddresses ? 1 : 0)]
    }

    /// An application row; its dialling settings are checked by `checked(_:)`.
    private static func readApplication(_ row: SQLiteStatement) throws(SQLiteError) -> Application {
        let prefixes = try row.string(8)
        let dialling = DiallingSettings(
            defaultCLI: try row.optionalString(7),
            allowedNumberPrefixes: prefixes.isEmpty ? [] : prefixes.split(separator: ",", omittingEmptySubsequences: false).map(String.init),
            maxConcurrentPhoneCalls: Int(clamping: try row.int64(9)), maxPhoneCallsPerMinute: Int(clamping: try row.int64(10)),
            maxCallDurationSeconds: Int(clamping: try row.int64(11)), allowsSIPAddresses: try row.int64(12) != 0)
        return Application(
            key: try row.string(0), name: try row.string(1), secret: try row.string(2),
            previousSecret: try row.optionalString(3), previousSecretValidUntil: try row.optionalInt64(4),
            createdTime: try row.int64(5), secretRotatedTime: try row.optionalInt64(6), dialling: dialling)
    }

    /// `application`, unless its stored dialling settings break their rules (a hand edit of
    /// the file): then `corruptRecord`, since guessing what an operator meant could open
    /// dialling that was closed.
    private static func checked(_ application: Application) throws(StoreError) -> Application {
        if let problem = application.dialling.problem {
            throw StoreError(.corruptRecord, "dialling settings of application \(application.key): \(problem)")
        }
        return application
    }

    private func fetchApplication(_ key: String) throws -> Application? {
        try db.cachedStatement("SELECT \(Self.applicationColumns) FROM applications WHERE key = ?1")
            .queryFirst([.text(key)], Self.readApplication).map(Self.checked)
    }

    private func fetchUser(_ applicationKey: String, _ userId: String) throws -> KnownUser? {
        try db.cachedStatement("SELECT first_seen_at, last_seen_at FROM users WHERE application_key = ?1 AND user_id = ?2")
            .queryFirst([.text(applicationKey), .text(userId)]) { row throws(SQLiteError) in
                KnownUser(applicationKey: applicationKey, userId: userId, firstSeenTime: try row.int64(0), lastSeenTime: try row.int64(1))
            }
    }

    /// Calls where `?2` is the caller or the callee as a user (a room or a number with
    /// the same text is not that user): at each side, the directions whose end there is a
    /// user. A side where every direction has a user (the caller's, while every call is
    /// placed by an app) needs no direction term, so the query reads only that side's
    /// index; the callee side names the directions whose callee is a user (`appToApp`).
    private static let userFilter: String = {
        func side(_ column: String, _ userEnd: (CallDirection) -> Bool) -> String {
            let directions = CallDirection.allCases.filter(userEnd)
            if directions.count == CallDirection.allCases.count { return "\(column) = ?2" }
            if directions.isEmpty { return "0" }
            return "(\(column) = ?2 AND direction IN (\(directions.map { "'\($0.rawValue)'" }.joined(separator: ", "))))"
        }
        return "AND (\(side("caller") { $0.callerKind == .user }) OR \(side("callee") { $0.calleeKind == .user }))"
    }()

    private static let callColumns = """
        seq, id, application_key, caller, callee, direction, state, started_at, progressed_at, rung_at, answered_at,
        established_at, ended_at, end_cause, error_code, error_message, duration_ms, sip_call_id, sip_status
        """

    /// A call row as stored, before its enumeration strings are checked.
    private struct CallRow {
        var seq: Int64
        var record: StoredCall
        var caller: String
        var callee: String
        var direction: String
        var state: String
        var endCause: String?
    }

    private static func readCallRow(_ row: SQLiteStatement) throws(SQLiteError) -> CallRow {
        let times = CallTimes(
            startedTime: try row.int64(7), progressedTime: try row.optionalInt64(8), rungTime: try row.optionalInt64(9),
            answeredTime: try row.optionalInt64(10), establishedTime: try row.optionalInt64(11),
            endedTime: try row.optionalInt64(12))
        var error: CallError?
        if let code = try row.optionalString(14) { error = CallError(code: code, message: try row.optionalString(15) ?? "") }
        // The ends and the direction are set by `decode`, once the direction text is checked.
        var record = StoredCall(
            callId: try row.string(1), applicationKey: try row.string(2), caller: "", callee: "", direction: .appToApp,
            state: .initiating, details: times, error: error, durationMs: try row.optionalInt64(16))
        record.sipCallId = try row.optionalString(17)
        record.sipStatus = try row.optionalInt64(18).map { Int($0) }
        return CallRow(
            seq: try row.int64(0), record: record, caller: try row.string(3), callee: try row.string(4),
            direction: try row.string(5), state: try row.string(6), endCause: try row.optionalString(13))
    }

    /// The record of a row without its legs. Unknown enumeration strings (written by a
    /// newer Parley, or by hand) are `corruptRecord`.
    private static func decode(_ row: CallRow) throws(StoreError) -> StoredCall {
        func value<E: RawRepresentable<String>>(_ text: String, _ column: String) throws(StoreError) -> E {
            guard let value = E(rawValue: text) else {
                throw StoreError(.corruptRecord, "unknown value \"\(text)\" in calls.\(column) of call \(row.record.callId)")
            }
            return value
        }
        var record = row.record
        let direction: CallDirection = try value(row.direction, "direction")
        record.direction = direction
        record.caller = PartyAddress(kind: direction.callerKind, address: row.caller)
        record.callee = PartyAddress(kind: direction.calleeKind, address: row.callee)
        record.state = try value(row.state, "state")
        if let cause = row.endCause { record.endCause = try value(cause, "end_cause") as CallEndCause }
        return record
    }

    private func fetchCall(whereClause: String, _ values: [SQLiteValue]) throws -> StoredCall? {
        let found = try db.cachedStatement("SELECT \(Self.callColumns) FROM calls WHERE \(whereClause)")
            .queryFirst(values, Self.readCallRow)
        guard let found else { return nil }
        var record = try Self.decode(found)
        record.legs = try fetchLegs(seq: found.seq)
        return record
    }

    private func fetchLegs(seq: Int64) throws -> [CallLeg] {
        var legs = try db.cachedStatement(
            """
            SELECT role, user_id, device_id, updated_at, packets_sent, octets_sent, packets_received, octets_received,
                inbound_fraction_lost, inbound_cumulative_lost, inbound_jitter_ms, outbound_fraction_lost,
                outbound_cumulative_lost, outbound_jitter_ms, round_trip_time_ms
            FROM call_legs WHERE call_seq = ?1 ORDER BY role = 'callee', role
            """
        ).query([.integer(seq)]) { row throws(SQLiteError) -> (String, CallLeg) in
            let statistics = CallLegStatistics(
                packetsSent: try row.int64(4), octetsSent: try row.int64(5), packetsReceived: try row.int64(6),
                octetsReceived: try row.int64(7), inboundFractionLost: try row.double(8),
                inboundCumulativeLost: try row.int64(9), inboundJitterMilliseconds: try row.double(10),
                outboundFractionLost: try row.optionalDouble(11), outboundCumulativeLost: try row.optionalInt64(12),
                outboundJitterMilliseconds: try row.optionalDouble(13), roundTripTimeMilliseconds: try row.optionalDouble(14))
            let leg = CallLeg(
                role: .caller, userId: try row.string(1), deviceId: try row.optionalString(2), updatedTime: try row.int64(3),
                statistics: statistics)
            return (try row.string(0), leg)
        }.map { (roleText, leg) throws(StoreError) -> CallLeg in
            guard let role = CallLegRole(rawValue: roleText) else {
                throw StoreError(.corruptRecord, "unknown value \"\(roleText)\" in call_legs.role")
            }
            var typed = leg
            typed.role = role
            return typed
        }
        guard !legs.isEmpty else { return legs }
        let playouts = try db.cachedStatement(
            """
            SELECT role, reported_at, frames_played, frames_concealed, frames_fec_recovered, frames_comfort_noise,
                frames_silent, frames_stretched, frames_shrunk, packets_late, target_delay_ms
            FROM call_leg_playout WHERE call_seq = ?1
            """
        ).query([.integer(seq)]) { row throws(SQLiteError) -> (String, CallLegPlayout) in
            (try row.string(0), CallLegPlayout(counters: PlayoutCounters(
                framesPlayed: try row.int64(2), framesConcealed: try row.int64(3), framesFECRecovered: try row.int64(4),
                framesComfortNoise: try row.int64(5), framesSilent: try row.int64(6), framesStretched: try row.int64(7),
                framesShrunk: try row.int64(8), packetsLate: try row.int64(9), targetDelayMilliseconds: try row.int64(10)),
                reportedTime: try row.int64(1)))
        }
        for (roleText, playout) in playouts {
            if let index = legs.firstIndex(where: { $0.role.rawValue == roleText }) { legs[index].playout = playout }
        }
        return legs
    }

    private func fetchSeqAndState(_ id: String) throws -> (Int64, CallState)? {
        let found = try db.cachedStatement("SELECT seq, state FROM calls WHERE id = ?1")
            .queryFirst([.text(id)]) { row throws(SQLiteError) in (try row.int64(0), try row.string(1)) }
        guard let (seq, stateText) = found else { return nil }
        guard let state = CallState(rawValue: stateText) else {
            throw StoreError(.corruptRecord, "unknown state \"\(stateText)\" of call \(id)")
        }
        return (seq, state)
    }

    private func throwMissingOrEnded(_ id: String) throws -> Never {
        if try fetchSeqAndState(id) == nil { throw StoreError(.notFound, "call \(id) not found") }
        throw StoreError(.callEnded, "call \(id) has ended")
    }

    private func endCall(seq: Int64, cause: CallEndCause, error: CallError?, at time: Int64) throws {
        try db.execute(
            """
            UPDATE calls SET state = 'ended', ended_at = ?2, end_cause = ?3, error_code = ?4, error_message = ?5,
                duration_ms = CASE WHEN answered_at IS NULL THEN 0 ELSE max(?2 - answered_at, 0) END
            WHERE seq = ?1
            """,
            [.integer(seq), .integer(time), .text(cause.rawValue), SQLiteValue(error?.code), SQLiteValue(error?.message)])
    }

    private func upsertLeg(_ seq: Int64, _ leg: CallLeg) throws {
        // SQLite stores NaN as NULL; keep the NOT NULL columns numbers.
        func finite(_ value: Double) -> Double { value.isFinite ? value : 0 }
        func finite(_ value: Double?) -> Double? { value.flatMap { $0.isFinite ? $0 : nil } }
        var s = leg.statistics
        s.inboundFractionLost = finite(s.inboundFractionLost)
        s.inboundJitterMilliseconds = finite(s.inboundJitterMilliseconds)
        s.outboundFractionLost = finite(s.outboundFractionLost)
        s.outboundJitterMilliseconds = finite(s.outboundJitterMilliseconds)
        s.roundTripTimeMilliseconds = finite(s.roundTripTimeMilliseconds)
        try db.execute(
            """
            INSERT INTO call_legs (call_seq, role, user_id, device_id, updated_at, packets_sent, octets_sent,
                packets_received, octets_received, inbound_fraction_lost, inbound_cumulative_lost, inbound_jitter_ms,
                outbound_fraction_lost, outbound_cumulative_lost, outbound_jitter_ms, round_trip_time_ms)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)
            ON CONFLICT (call_seq, role) DO UPDATE SET user_id = excluded.user_id, device_id = excluded.device_id,
                updated_at = excluded.updated_at, packets_sent = excluded.packets_sent, octets_sent = excluded.octets_sent,
                packets_received = excluded.packets_received, octets_received = excluded.octets_received,
                inbound_fraction_lost = excluded.inbound_fraction_lost,
                inbound_cumulative_lost = excluded.inbound_cumulative_lost, inbound_jitter_ms = excluded.inbound_jitter_ms,
                outbound_fraction_lost = excluded.outbound_fraction_lost,
                outbound_cumulative_lost = excluded.outbound_cumulative_lost,
                outbound_jitter_ms = excluded.outbound_jitter_ms, round_trip_time_ms = excluded.round_trip_time_ms
            """,
            [.integer(seq), .text(leg.role.rawValue), .text(leg.userId), SQLiteValue(leg.deviceId), .integer(leg.updatedTime),
             .integer(s.packetsSent), .integer(s.octetsSent), .integer(s.packetsReceived), .integer(s.octetsReceived),
             .real(s.inboundFractionLost), .integer(s.inboundCumulativeLost), .real(s.inboundJitterMilliseconds),
             SQLiteValue(s.outboundFractionLost), SQLiteValue(s.outboundCumulativeLost),
             SQLiteValue(s.outboundJitterMilliseconds), SQLiteValue(s.roundTripTimeMilliseconds)])
    }
}

extension Int64 {
    fileprivate func addingClamped(_ other: Int64) -> Int64 {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? (other > 0 ? .max : .min) : sum
    }
}
