import ParleySQLite

/// The store's schema as an ordered list of migrations. A database records each applied
/// migration in `schema_version`; opening applies the missing ones, in one transaction,
/// so a database is always at exactly one version of this list.
///
/// Never edit a migration that has shipped: append a new one.
enum Schema {
    struct Migration {
        let version: Int64
        let name: String
        let sql: String
    }

    static let migrations: [Migration] = [
        Migration(
            version: 1, name: "applications, users, calls, call legs",
            sql: """
                CREATE TABLE applications (
                    key TEXT PRIMARY KEY NOT NULL,
                    name TEXT NOT NULL,
                    secret TEXT NOT NULL,
                    previous_secret TEXT,
                    previous_secret_valid_until INTEGER,
                    created_at INTEGER NOT NULL,
                    secret_rotated_at INTEGER
                ) STRICT;

                CREATE TABLE users (
                    application_key TEXT NOT NULL REFERENCES applications (key) ON DELETE CASCADE,
                    user_id TEXT NOT NULL,
                    first_seen_at INTEGER NOT NULL,
                    last_seen_at INTEGER NOT NULL,
                    PRIMARY KEY (application_key, user_id)
                ) STRICT, WITHOUT ROWID;

                CREATE TABLE calls (
                    seq INTEGER PRIMARY KEY,
                    id TEXT NOT NULL UNIQUE,
                    application_key TEXT NOT NULL REFERENCES applications (key) ON DELETE CASCADE,
                    caller TEXT NOT NULL,
                    callee TEXT NOT NULL,
                    direction TEXT NOT NULL,
                    state TEXT NOT NULL,
                    started_at INTEGER NOT NULL,
                    progressed_at INTEGER,
                    rung_at INTEGER,
                    answered_at INTEGER,
                    established_at INTEGER,
                    ended_at INTEGER,
                    end_cause TEXT,
                    error_code TEXT,
                    error_message TEXT,
                    duration_ms INTEGER,
                    CHECK ((state = 'ended') = (ended_at IS NOT NULL AND end_cause IS NOT NULL)),
                    CHECK ((end_cause = 'error') = (error_code IS NOT NULL))
                ) STRICT;
                CREATE INDEX calls_by_start ON calls (application_key, started_at, seq);
                CREATE INDEX calls_by_caller ON calls (application_key, caller, started_at, seq);
                CREATE INDEX calls_by_callee ON calls (application_key, callee, started_at, seq);
                CREATE INDEX calls_in_progress ON calls (state) WHERE state <> 'ended';

                CREATE TABLE call_legs (
                    call_seq INTEGER NOT NULL REFERENCES calls (seq) ON DELETE CASCADE,
                    role TEXT NOT NULL,
                    user_id TEXT NOT NULL,
                    device_id TEXT,
                    updated_at INTEGER NOT NULL,
                    packets_sent INTEGER NOT NULL,
                    octets_sent INTEGER NOT NULL,
                    packets_received INTEGER NOT NULL,
                    octets_received INTEGER NOT NULL,
                    inbound_fraction_lost REAL NOT NULL,
                    inbound_cumulative_lost INTEGER NOT NULL,
                    inbound_jitter_ms REAL NOT NULL,
                    outbound_fraction_lost REAL,
                    outbound_cumulative_lost INTEGER,
                    outbound_jitter_ms REAL,
                    round_trip_time_ms REAL,
                    PRIMARY KEY (call_seq, role)
                ) STRICT, WITHOUT ROWID;
                """),
        Migration(
            version: 2, name: "push tokens per device, push credentials per application",
            sql: """
                CREATE TABLE push_tokens (
                    application_key TEXT NOT NULL REFERENCES applications (key) ON DELETE CASCADE,
                    user_id TEXT NOT NULL,
                    device_id TEXT NOT NULL,
                    push_type TEXT NOT NULL,
                    token TEXT NOT NULL,
                    environment TEXT NOT NULL,
                    app_id TEXT NOT NULL,
                    push_key BLOB NOT NULL,
                    registered_at INTEGER NOT NULL,
                    PRIMARY KEY (application_key, device_id, push_type)
                ) STRICT, WITHOUT ROWID;
                CREATE INDEX push_tokens_by_user ON push_tokens (application_key, user_id);

                CREATE TABLE push_credentials (
                    application_key TEXT NOT NULL REFERENCES applications (key) ON DELETE CASCADE,
                    provider TEXT NOT NULL,
                    settings TEXT NOT NULL,
                    updated_at INTEGER NOT NULL,
                    PRIMARY KEY (application_key, provider)
                ) STRICT, WITHOUT ROWID;
                """),
        Migration(
            version: 3, name: "call timeline events",
            // Keyed by call id, not the calls row: an event may be written before the
            // call's record commits (push answers arrive on another queue).
            sql: """
                CREATE TABLE call_events (
                    seq INTEGER PRIMARY KEY,
                    call_id TEXT NOT NULL,
                    application_key TEXT NOT NULL REFERENCES applications (key) ON DELETE CASCADE,
                    time INTEGER NOT NULL,
                    kind TEXT NOT NULL,
                    detail TEXT NOT NULL
                ) STRICT;
                CREATE INDEX call_events_by_call ON call_events (call_id, seq);
                """),
        Migration(
            version: 4, name: "devices' playout counters per call leg",
            // Apart from call_legs: a device reports after its leg closed, before or after
            // the server's final figures of the leg are written.
            sql: """
                CREATE TABLE call_leg_playout (
                    call_seq INTEGER NOT NULL REFERENCES calls (seq) ON DELETE CASCADE,
                    role TEXT NOT NULL,
                    reported_at INTEGER NOT NULL,
                    frames_played INTEGER NOT NULL,
                    frames_concealed INTEGER NOT NULL,
                    frames_fec_recovered INTEGER NOT NULL,
                    frames_comfort_noise INTEGER NOT NULL,
                    frames_silent INTEGER NOT NULL,
                    frames_stretched INTEGER NOT NULL,
                    frames_shrunk INTEGER NOT NULL,
                    packets_late INTEGER NOT NULL,
                    target_delay_ms INTEGER NOT NULL,
                    PRIMARY KEY (call_seq, role)
                ) STRICT, WITHOUT ROWID;
                """),
        Migration(
            version: 5, name: "applications' dialling settings",
            // Existing applications get the settings that dial nothing (DiallingSettings()):
            // no prefix allowed, SIP off. The prefixes are one comma-separated text
            // ("+46,+4731"), each `+` and digits, so no separator can hide in one.
            sql: """
                ALTER TABLE applications ADD COLUMN default_cli TEXT;
                ALTER TABLE applications ADD COLUMN allowed_number_prefixes TEXT NOT NULL DEFAULT '';
                ALTER TABLE applications ADD COLUMN max_concurrent_phone_calls INTEGER NOT NULL DEFAULT 10;
                ALTER TABLE applications ADD COLUMN max_phone_calls_per_minute INTEGER NOT NULL DEFAULT 30;
                ALTER TABLE applications ADD COLUMN max_call_duration_s INTEGER NOT NULL DEFAULT 7200;
                ALTER TABLE applications ADD COLUMN sip_addresses_allowed INTEGER NOT NULL DEFAULT 0
                    CHECK (sip_addresses_allowed IN (0, 1));
                """),
        Migration(
            version: 6, name: "calls' SIP Call-ID and final SIP status",
            // Calls to phone numbers and SIP addresses: the gateway's INVITE Call-ID and the
            // status of its final response (200 when answered).
            sql: """
                ALTER TABLE calls ADD COLUMN sip_call_id TEXT;
                ALTER TABLE calls ADD COLUMN sip_status INTEGER CHECK (sip_status IS NULL OR sip_status BETWEEN 100 AND 699);
                """),
        Migration(
            version: 7, name: "applications' callback settings",
            // A row of its own per application, absent when the application has no backend
            // to call back (its numbers then follow the static --sip-number rules). The
            // events are one comma-separated text ("ice,ace,dice"), names without commas.
            sql: """
                CREATE TABLE callback_settings (
                    application_key TEXT PRIMARY KEY NOT NULL REFERENCES applications (key) ON DELETE CASCADE,
                    url TEXT NOT NULL,
                    ca_file TEXT,
                    timeout_ms INTEGER NOT NULL,
                    events TEXT NOT NULL,
                    app_calls INTEGER NOT NULL CHECK (app_calls IN (0, 1)),
                    updated_at INTEGER NOT NULL
                ) STRICT;
                """),
    ]

    /// The version a fully migrated database has.
    static var latestVersion: Int64 { migrations.last?.version ?? 0 }

    /// Brings `db` to `latestVersion`. Safe to run on every open and from several
    /// processes at once: the version check and the migrations share one write transaction.
    /// - Returns: the versions applied now (empty when the database was up to date).
    static func migrate(_ db: SQLiteDatabase) throws -> [Int64] {
        try db.transaction(.immediate) { () throws -> [Int64] in
            try db.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, name TEXT NOT NULL) STRICT")
            let current = try db.prepare("SELECT max(version) FROM schema_version").queryFirst { row throws(SQLiteError) in
                try row.optionalInt64(0)
            } ?? nil
            let version = current ?? 0
            if version > latestVersion {
                throw StoreError(
                    .schemaTooNew,
                    "database schema version \(version) is newer than this build's \(latestVersion); upgrade parleyd")
            }
            var applied: [Int64] = []
            for migration in migrations where migration.version > version {
                try db.execute(migration.sql)
                try db.execute("INSERT INTO schema_version (version, name) VALUES (?1, ?2)", [.integer(migration.version), .text(migration.name)])
                applied.append(migration.version)
            }
            return applied
        }
    }
}
