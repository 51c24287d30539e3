public import ParleyCallModel

/// An application: the unit that owns users and calls, identified by its key and
/// authenticated by its secret (a base64 string; the JWT signing key derives from its
/// decoded bytes).
///
/// Secret rotation keeps the previous secret valid until `previousSecretValidUntil`, so
/// backends can switch to the new secret without a window in which their freshly minted
/// user tokens or REST calls fail. `validSecrets(at:)` is what authentication checks.
///
/// What it may dial outside the app (phone numbers, SIP addresses) is `dialling`, kept
/// with it and read with it (`setDiallingSettings`), so a `hello`'s lookup of the
/// application brings its current settings along.
///
/// JSON (`Encodable`, for `parleyd app list --json`): `key`, `name`, `secret`,
/// `createdTime`, `dialling`, and when set `previousSecret`, `previousSecretValidUntil`,
/// `secretRotatedTime` (times in Unix ms).
public struct Application: Sendable, Hashable, Codable {
    /// 1-64 bytes of `A-Z a-z 0-9 - _`.
    public var key: String
    /// A human label, e.g. `development`.
    public var name: String
    /// The current secret.
    public var secret: String
    /// The secret before the last rotation, while its grace period lasts.
    public var previousSecret: String?
    /// The end of the previous secret's grace period (Unix ms, exclusive).
    public var previousSecretValidUntil: Int64?
    public var createdTime: Int64
    /// When the secret was last rotated.
    public var secretRotatedTime: Int64?
    /// What it may dial and how much (the defaults dial nothing).
    public var dialling: DiallingSettings

    public init(
        key: String, name: String, secret: String, previousSecret: String? = nil,
        previousSecretValidUntil: Int64? = nil, createdTime: Int64, secretRotatedTime: Int64? = nil,
        dialling: DiallingSettings = DiallingSettings()
    ) {
        self.key = key
        self.name = name
        self.secret = secret
        self.previousSecret = previousSecret
        self.previousSecretValidUntil = previousSecretValidUntil
        self.createdTime = createdTime
        self.secretRotatedTime = secretRotatedTime
        self.dialling = dialling
    }

    /// The secrets that authenticate this application at `now` (Unix ms): the current
    /// one first, then the previous one while its grace period lasts.
    public func validSecrets(at now: Int64) -> [String] {
        if let previousSecret, let until = previousSecretValidUntil, now < until {
            return [secret, previousSecret]
        }
        return [secret]
    }
}

/// A user an application has seen: it connected (authenticated) at least once. Calls to
/// users never seen fail with "destination user not found".
public struct KnownUser: Sendable, Hashable, Codable {
    public var applicationKey: String
    public var userId: String
    public var firstSeenTime: Int64
    public var lastSeenTime: Int64

    public init(applicationKey: String, userId: String, firstSeenTime: Int64, lastSeenTime: Int64) {
        self.applicationKey = applicationKey
        self.userId = userId
        self.firstSeenTime = firstSeenTime
        self.lastSeenTime = lastSeenTime
    }
}
