import ParleySQLite
public import ParleyCallModel

extension SQLiteStore {
    // MARK: Push tokens (issue 5)

    /// Stores a device's push registration, replacing the one for the same device and
    /// push type (a token registered by another device moves to this one).
    /// - Throws: `.notFound` for an unknown application.
    public func registerPushToken(_ registration: PushRegistration) throws(StoreError) {
        try write(durable: true) {
            do {
                try db.execute(
                    "DELETE FROM push_tokens WHERE application_key = ?1 AND push_type = ?2 AND token = ?3 AND device_id <> ?4",
                    [.text(registration.applicationKey), .text(registration.pushType.rawValue), .text(registration.token),
                     .text(registration.deviceId)])
                try db.execute(
                    """
                    INSERT INTO push_tokens (application_key, user_id, device_id, push_type, token, environment, app_id, push_key, registered_at)
                    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
                    ON CONFLICT (application_key, device_id, push_type) DO UPDATE SET
                        user_id = excluded.user_id, token = excluded.token, environment = excluded.environment,
                        app_id = excluded.app_id, push_key = excluded.push_key, registered_at = excluded.registered_at
                    """,
                    [.text(registration.applicationKey), .text(registration.userId), .text(registration.deviceId),
                     .text(registration.pushType.rawValue), .text(registration.token), .text(registration.environment.rawValue),
                     .text(registration.appId), .blob(registration.pushKey), .integer(registration.registeredTime)])
            } catch let error as SQLiteError where error.kind == .constraint {
                throw StoreError(.notFound, "application \(registration.applicationKey) not found")
            }
        }
    }

    /// Removes a device's push tokens (all types, or the one with `token`).
    /// - Returns: how many were removed.
    @discardableResult
    public func unregisterPushTokens(applicationKey: String, deviceId: String, token: String?) throws(StoreError) -> Int {
        try write(durable: true) {
            if let token {
                try db.execute("DELETE FROM push_tokens WHERE application_key = ?1 AND device_id = ?2 AND token = ?3",
                               [.text(applicationKey), .text(deviceId), .text(token)])
            } else {
                try db.execute("DELETE FROM push_tokens WHERE application_key = ?1 AND device_id = ?2",
                               [.text(applicationKey), .text(deviceId)])
            }
            return db.changes
        }
    }

    /// Removes one token wherever it is registered (the provider said it is gone).
    @discardableResult
    public func removePushToken(applicationKey: String, pushType: PushType, token: String) throws(StoreError) -> Int {
        try write(durable: true) {
            try db.execute("DELETE FROM push_tokens WHERE application_key = ?1 AND push_type = ?2 AND token = ?3",
                           [.text(applicationKey), .text(pushType.rawValue), .text(token)])
            return db.changes
        }
    }

    /// A user's push registrations, by device id then type.
    public func pushRegistrations(applicationKey: String, userId: String) throws(StoreError) -> [PushRegistration] {
        try read {
            try db.cachedStatement("SELECT \(Self.pushColumns) FROM push_tokens WHERE application_key = ?1 AND user_id = ?2 ORDER BY device_id, push_type")
                .query([.text(applicationKey), .text(userId)], Self.readPushRow)
        }.map(Self.decode)
    }

    /// The registrations of one device.
    public func pushRegistrations(applicationKey: String, deviceId: String) throws(StoreError) -> [PushRegistration] {
        try read {
            try db.cachedStatement("SELECT \(Self.pushColumns) FROM push_tokens WHERE application_key = ?1 AND device_id = ?2 ORDER BY push_type")
                .query([.text(applicationKey), .text(deviceId)], Self.readPushRow)
        }.map(Self.decode)
    }

    /// Every device with a push token: (application key, user id, device id), sorted;
    /// parleyd seeds its presence with them at start.
    public func pushDevices() throws(StoreError) -> [(applicationKey: String, userId: String, deviceId: String)] {
        try read {
            try db.cachedStatement("SELECT DISTINCT application_key, user_id, device_id FROM push_tokens ORDER BY 1, 2, 3")
                .query([]) { row throws(SQLiteError) in (try row.string(0), try row.string(1), try row.string(2)) }
        }.map { (applicationKey: $0.0, userId: $0.1, deviceId: $0.2) }
    }

    // MARK: Push credentials

    /// Sets an application's credentials for one provider, replacing earlier ones.
    /// - Throws: `.notFound` for an unknown application.
    public func setPushCredentials(_ credentials: StoredPushCredentials) throws(StoreError) {
        try write(durable: true) {
            do {
                try db.execute(
                    """
                    INSERT INTO push_credentials (application_key, provider, settings, updated_at) VALUES (?1, ?2, ?3, ?4)
                    ON CONFLICT (application_key, provider) DO UPDATE SET settings = excluded.settings, updated_at = excluded.updated_at
                    """,
                    [.text(credentials.applicationKey), .text(credentials.provider.rawValue), .text(credentials.settings),
                     .integer(credentials.updatedTime)])
            } catch let error as SQLiteError where error.kind == .constraint {
                throw StoreError(.notFound, "application \(credentials.applicationKey) not found")
            }
        }
    }

    /// An application's push credentials, APNs first.
    public func pushCredentials(applicationKey: String) throws(StoreError) -> [StoredPushCredentials] {
        try read {
            try db.cachedStatement("SELECT provider, settings, updated_at FROM push_credentials WHERE application_key = ?1 ORDER BY provider")
                .query([.text(applicationKey)]) { row throws(SQLiteError) in (try row.string(0), try row.string(1), try row.int64(2)) }
        }.compactMap { row in
            // A provider this build does not know (written by a newer parleyd) is skipped.
            StoredPushCredentials.Provider(rawValue: row.0).map {
                StoredPushCredentials(applicationKey: applicationKey, provider: $0, settings: row.1, updatedTime: row.2)
            }
        }
    }

    private static let pushColumns = "application_key, user_id, device_id, push_type, token, environment, app_id, push_key, registered_at"

    private struct PushRow {
        var values: [String]
        var pushKey: [UInt8]
        var registeredTime: Int64
    }

    private static func readPushRow(_ row: SQLiteStatement) throws(SQLiteError) -> PushRow {
        PushRow(values: [try row.string(0), try row.string(1), try row.string(2), try row.string(3), try row.string(4),
                         try row.string(5), try row.string(6)],
                pushKey: try row.blob(7), registeredTime: try row.int64(8))
    }

    private static func decode(_ row: PushRow) throws(StoreError) -> PushRegistration {
        let v = row.values
        guard let pushType = PushType(rawValue: v[3]) else { throw StoreError(.database, "push_tokens.push_type \(v[3]) is unknown") }
        guard let environment = PushEnvironment(rawValue: v[5]) else {
            throw StoreError(.database, "push_tokens.environment \(v[5]) is unknown")
        }
        return PushRegistration(
            applicationKey: v[0], userId: v[1], deviceId: v[2], pushType: pushType, token: v[4], environment: environment,
            appId: v[6], pushKey: row.pushKey, registeredTime: row.registeredTime)
    }
}
