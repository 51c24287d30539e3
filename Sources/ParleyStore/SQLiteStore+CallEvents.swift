import ParleySQLite

extension SQLiteStore {
    // MARK: Call timeline (issue 5)

    /// Appends an event to a call's timeline. The call record need not exist yet.
    /// - Returns: false when the call already has `CallEvent.maximumPerCall` events (the
    ///   event is dropped).
    /// - Throws: `.notFound` for an unknown application; `.invalidArgument` for an empty
    ///   call id or kind.
    @discardableResult
    public func recordCallEvent(callId: String, applicationKey: String, _ event: CallEvent) throws(StoreError) -> Bool {
        guard !callId.isEmpty, !event.kind.isEmpty else { throw StoreError(.invalidArgument, "a call event needs a call id and a kind") }
        return try write(durable: false) {
            let count = try db.cachedStatement("SELECT count(*) FROM call_events WHERE call_id = ?1")
                .queryFirst([.text(callId)]) { row throws(SQLiteError) in try row.int64(0) } ?? 0
            guard count < CallEvent.maximumPerCall else { return false }
            do {
                try db.execute(
                    "INSERT INTO call_events (call_id, application_key, time, kind, detail) VALUES (?1, ?2, ?3, ?4, ?5)",
                    [.text(callId), .text(applicationKey), .integer(event.time), .text(event.kind), .text(event.detailJSON)])
            } catch let error as SQLiteError where error.kind == .constraint {
                throw StoreError(.notFound, "application \(applicationKey) not found")
            }
            return true
        }
    }

    /// A call's timeline in the order the events were recorded; empty for a call of
    /// another application when `applicationKey` is given.
    public func callEvents(callId: String, applicationKey: String?) throws(StoreError) -> [CallEvent] {
        try read {
            let rows = try db.cachedStatement(
                "SELECT application_key, time, kind, detail FROM call_events WHERE call_id = ?1 ORDER BY seq")
                .query([.text(callId)]) { row throws(SQLiteError) in
                    (try row.string(0), try row.int64(1), try row.string(2), try row.string(3))
                }
            return rows.filter { applicationKey == nil || $0.0 == applicationKey }
                .map { CallEvent(time: $0.1, kind: $0.2, detail: CallEvent.detail(fromJSON: $0.3)) }
        }
    }
}
