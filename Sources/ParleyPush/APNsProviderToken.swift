internal import ParleyWireCore

/// The APNs provider authentication token (an ES256 JWT), made from an application's key
/// and reused until it is ``refreshInterval`` old.
///
/// APNs refuses a token older than one hour (`ExpiredProviderToken`) and one refreshed more
/// often than every 20 minutes (`TooManyProviderTokenUpdates`), so the default refresh is
/// at 50 minutes. Sans-I/O: the caller passes the time.
public struct APNsProviderToken: Sendable {
    /// How old a token may get before the next request makes a new one.
    public static let refreshInterval: Int64 = 50 * 60

    /// The credentials the token is made from.
    public let credentials: APNsCredentials
    private var current: (jwt: String, issuedAt: Int64)?

    public init(credentials: APNsCredentials) { self.credentials = credentials }

    /// The token to send at `now` (seconds since the epoch), a new one when none exists
    /// yet, when the cached one reached ``refreshInterval`` or when the clock went back.
    public mutating func token(now: Int64) throws(PushError) -> String {
        if let current, now >= current.issuedAt, now - current.issuedAt < Self.refreshInterval { return current.jwt }
        let jwt = try Self.make(credentials, issuedAt: now)
        current = (jwt, now)
        return jwt
    }

    /// Forgets the cached token, after APNs answered 403 `ExpiredProviderToken` or
    /// `InvalidProviderToken`.
    public mutating func invalidate() { current = nil }

    /// The issue time of the cached token, if any.
    public var issuedAt: Int64? { current?.issuedAt }

    static func make(_ credentials: APNsCredentials, issuedAt: Int64) throws(PushError) -> String {
        var header = JSONObject()
        header.append("alg", "ES256")
        header.append("kid", credentials.keyID)
        var claims = JSONObject()
        claims.append("iss", credentials.teamID)
        claims.append("iat", issuedAt)
        let input = Base64.encodeURL(JSONWriter.serialize(.object(header))) + "." + Base64.encodeURL(JSONWriter.serialize(.object(claims)))
        do {
            return input + "." + Base64.encodeURL(try credentials.key.sign(Array(input.utf8)))
        } catch {
            throw PushError(.crypto, "signing the APNs provider token: \(error)")
        }
    }
}
