import ParleySQLite

extension SQLiteStore {
    // MARK: Callback settings (issue 12)

    /// Sets how an application's backend is called back, replacing earlier settings.
    /// - Throws: `.notFound` for an unknown application; `.invalidArgument` when the
    ///   settings have a `problem` (nothing is changed).
    public func setCallbackSettings(applicationKey: String, _ settings: CallbackSettings, at time: Int64) throws(StoreError) {
        if let problem = settings.problem {
            throw StoreError(.invalidArgument, "callback settings of application \(applicationKey): \(problem)")
        }
        try write(durable: true) {
            do {
                try db.execute(
                    """
                    INSERT INTO callback_settings (application_key, url, ca_file, timeout_ms, events, app_calls, updated_at)
                    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
                    ON CONFLICT (application_key) DO UPDATE SET url = excluded.url, ca_file = excluded.ca_file,
                        timeout_ms = excluded.timeout_ms, events = excluded.events, app_calls = excluded.app_calls,
                        updated_at = excluded.updated_at
                    """,
                    [.text(applicationKey), .text(settings.url), SQLiteValue(settings.caFile),
                     .integer(Int64(settings.timeoutMilliseconds)),
                     .text(settings.orderedEvents.map(\.rawValue).joined(separator: ",")),
                     .integer(settings.appCalls ? 1 : 0), .integer(time)])
            } catch let error as SQLiteError where error.kind == .constraint {
                throw StoreError(.notFound, "application \(applicationKey) not found")
            }
        }
    }

    /// An application's callback settings, or nil when it has none (or is unknown).
    /// - Throws: `.corruptRecord` for a row that breaks the settings' rules.
    public func callbackSettings(applicationKey: String) throws(StoreError) -> CallbackSettings? {
        let row = try read {
            try db.cachedStatement("SELECT \(Self.callbackColumns) FROM callback_settings WHERE application_key = ?1")
                .queryFirst([.text(applicationKey)], Self.readCallbackRow)
        }
        return try row.map(Self.decodeCallbackRow)
    }

    /// The callback settings of every application that has them, by application key.
    /// - Throws: `.corruptRecord` when any row breaks the settings' rules: a server must not
    ///   quietly stop calling one backend because another's row was edited by hand.
    public func callbackSettingsByApplication() throws(StoreError) -> [String: CallbackSettings] {
        let rows = try read {
            try db.cachedStatement("SELECT \(Self.callbackColumns) FROM callback_settings ORDER BY application_key")
                .query([], Self.readCallbackRow)
        }
        var settings: [String: CallbackSettings] = [:]
        for row in rows { settings[row.applicationKey] = try Self.decodeCallbackRow(row) }
        return settings
    }

    /// Removes an application's callback settings.
    /// - Returns: whether it had any.
    /// - Throws: `.notFound` for an unknown application.
    @discardableResult
    public func clearCallbackSettings(applicationKey: String) throws(StoreError) -> Bool {
        try write(durable: true) {
            let known = try db.cachedStatement("SELECT 1 FROM applications WHERE key = ?1")
                .queryFirst([.text(applicationKey)]) { row throws(SQLiteError) in try row.int64(0) }
            guard known != nil else { throw StoreError(.notFound, "application \(applicationKey) not found") }
            try db.execute("DELETE FROM callback_settings WHERE application_key = ?1", [.text(applicationKey)])
            return db.changes > 0
        }
    }

    private static let callbackColumns = "application_key, url, ca_file, timeout_ms, events, app_calls"

    /// A `callback_settings` row as stored, before its values are checked.
    private struct CallbackRow {
        var applicationKey: String
        var url: String
        var caFile: String?
        var timeoutMilliseconds: Int64
        var events: String
        var appCalls: Int64
    }

    private static func readCallbackRow(_ row: SQLiteStatement) throws(SQLiteError) -> CallbackRow {
        CallbackRow(applicationKey: try row.string(0), url: try row.string(1), caFile: try row.optionalString(2),
                    timeoutMilliseconds: try row.int64(3), events: try row.string(4), appCalls: try row.int64(5))
    }

    /// The settings of a row, unless they break their rules (an event this build does not
    /// know, a URL edited by hand): then `corruptRecord`, rather than guessing where calls
    /// should go.
    private static func decodeCallbackRow(_ row: CallbackRow) throws(StoreError) -> CallbackSettings {
        let what = "callback settings of application \(row.applicationKey)"
        let events: Set<CallbackEvent>
        switch CallbackSettings.events(parsing: row.events) {
        case .success(let parsed): events = parsed
        case .failure(let problem): throw StoreError(.corruptRecord, "\(what): \(problem)")
        }
        let settings = CallbackSettings(
            url: row.url, caFile: row.caFile, timeoutMilliseconds: Int(clamping: row.timeoutMilliseconds), events: events,
            appCalls: row.appCalls != 0)
        if let problem = settings.problem { throw StoreError(.corruptRecord, "\(what): \(problem)") }
        return settings
    }
}
