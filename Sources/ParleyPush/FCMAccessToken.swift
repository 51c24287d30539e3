internal import ParleyWireCore
internal import Foundation

/// The OAuth 2.0 access token FCM HTTP v1 wants, got by exchanging a service-account JWT
/// (RS256, RFC 7523) at the token URI and cached until shortly before it expires.
///
/// Sans-I/O: ``exchangeRequest(now:)`` makes the HTTP request, ``accept(_:now:)`` reads
/// the endpoint's answer; the caller does the I/O in between.
public struct FCMAccessToken: Sendable {
    /// The OAuth scope for sending FCM messages.
    public static let scope = "https://www.googleapis.com/auth/firebase.messaging"
    /// A token is renewed this many seconds before the endpoint said it expires.
    public static let renewalMargin: Int64 = 300

    /// The service account.
    public let credentials: FCMCredentials
    private var current: (token: String, expiresAt: Int64)?

    public init(credentials: FCMCredentials) { self.credentials = credentials }

    /// The cached access token if it is still good at `now` (seconds since the epoch).
    public func cached(now: Int64) -> String? {
        guard let current, now < current.expiresAt - Self.renewalMargin else { return nil }
        return current.token
    }

    /// Forgets the cached token (after FCM answered 401).
    public mutating func invalidate() { current = nil }

    /// The token request: `POST token_uri` with the JWT bearer grant, form-encoded.
    public func exchangeRequest(now: Int64) throws(PushError) -> PushRequest {
        let assertion = try assertion(issuedAt: now)
        let body = "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=" + assertion
        return PushRequest(
            url: credentials.tokenURI, headers: [("content-type", "application/x-www-form-urlencoded")], body: Array(body.utf8))
    }

    /// Reads a token endpoint answer (`{"access_token":...,"expires_in":...}`) and caches
    /// the token; returns it. A non-200 answer or a body without a token throws.
    public mutating func accept(_ response: HTTPResponse, now: Int64) throws(PushError) -> String {
        // The token endpoint's body is input from the network: read strictly.
        let object = try? StrictJSONParser.parse(response.body, maxDepth: 16)
        guard response.status == 200 else {
            let reason = object?["error"]?.stringValue ?? "status \(response.status)"
            throw PushError(.credentialsInvalid, "the token endpoint refused the service account: \(reason)")
        }
        guard let token = object?["access_token"]?.stringValue, !token.isEmpty,
              let expiresIn = object?["expires_in"]?.integerValue, expiresIn > 0
        else { throw PushError(.badResponse, "the token endpoint's answer has no access_token or expires_in") }
        current = (token, now + expiresIn)
        return token
    }

    /// The signed assertion: header `{"alg":"RS256","typ":"JWT","kid":...}`, claims
    /// `iss`, `scope`, `aud` (the token URI), `iat`, `exp` (one hour, Google's maximum).
    func assertion(issuedAt: Int64) throws(PushError) -> String {
        var header = JSONObject()
        header.append("alg", "RS256")
        header.append("typ", "JWT")
        header.append("kid", ifPresent: credentials.privateKeyID)
        var claims = JSONObject()
        claims.append("iss", credentials.clientEmail)
        claims.append("scope", Self.scope)
        claims.append("aud", credentials.tokenURI)
        claims.append("iat", issuedAt)
        claims.append("exp", issuedAt + 3600)
        let input = Base64.encodeURL(JSONWriter.serialize(.object(header))) + "." + Base64.encodeURL(JSONWriter.serialize(.object(claims)))
        do {
            return input + "." + Base64.encodeURL(try credentials.key.sign(Array(input.utf8)))
        } catch {
            throw PushError(.crypto, "signing the FCM assertion: \(error)")
        }
    }
}
