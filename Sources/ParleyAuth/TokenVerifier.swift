/// Verifies user tokens for `hello` (docs/protocol.md "Authentication", docs/auth.md).
///
/// Checks run in this order and the first failure is thrown, so a token with several
/// faults always gets the same error:
///
/// 1. form: ``JSONWebToken/parse(_:)`` then ``UserToken/init(_:)`` (`malformed`,
///    `unsupportedAlgorithm`, `unknownKey`, `badUserID`, or `wrongApplication` when `sub`
///    names another application than `iss`);
/// 2. `iss` names the application the device said (`wrongApplication`);
/// 3. the HS256 signature, with the key derived from the current secret, or the previous
///    one during a rotation's grace period (`badSignature`);
/// 4. the `kid` date is at most ``maxKeyDateDistance`` days from the UTC date of `iat`
///    (`keyDateMismatch`);
/// 5. `exp - iat` is at most ``maxLifetime`` (`lifetimeTooLong`);
/// 6. `iat` and `nbf` are at most ``clockSkew`` seconds ahead of `now` (`notYetValid`);
/// 7. `now` is before `exp + clockSkew` (`expired`);
/// 8. the nonce is new for this application (`replayedNonce`, or `replayCacheFull`), and
///    is then recorded until `exp + clockSkew`.
///
/// Nothing before step 3 is trusted, but reporting it leaks nothing the token's holder
/// does not know; step 8 runs last so only genuine, valid tokens enter the cache.
public struct TokenVerifier: Sendable, Hashable {
    /// Clock difference allowed between the backend that minted a token and this server,
    /// in seconds (default 60), applied to `iat`, `nbf` and `exp`.
    public var clockSkew: Int64
    /// Longest accepted token lifetime `exp - iat`, in seconds (default 24 h).
    public var maxLifetime: Int64
    /// Largest distance in days between the key date and the UTC date of `iat` (default
    /// 1, which allows a backend that derived its key just before midnight, or runs a
    /// little behind UTC).
    public var maxKeyDateDistance: Int64

    public init(clockSkew: Int64 = 60, maxLifetime: Int64 = 86_400, maxKeyDateDistance: Int64 = 1) {
        self.clockSkew = max(0, min(clockSkew, 86_400))
        self.maxLifetime = max(1, min(maxLifetime, 366 * 86_400))
        self.maxKeyDateDistance = max(0, min(maxKeyDateDistance, 366))
    }

    /// Verifies `token` for `application` at `now` (Unix seconds) and records its nonce in
    /// `nonces`. Returns the verified claims; ``UserToken/userID`` is the authenticated user.
    public func verify(
        _ token: String, for application: ApplicationCredentials, now: Int64, nonces: inout NonceReplayCache
    ) throws(AuthError) -> UserToken {
        let claims = try verifyIgnoringReplay(token, for: application, now: now)
        try nonces.record(nonce: claims.nonce, applicationKey: application.key,
                          expiresAt: claims.expiresAt + clockSkew, now: now)
        return claims
    }

    /// Steps 1-7 of the checks, without the nonce: for tests and tools. A server must use
    /// ``verify(_:for:now:nonces:)``.
    public func verifyIgnoringReplay(_ token: String, for application: ApplicationCredentials, now: Int64) throws(AuthError) -> UserToken {
        let jwt = try JSONWebToken.parse(token)
        let claims = try UserToken(jwt)
        guard claims.applicationKey.utf8.elementsEqual(application.key.utf8) else {
            throw AuthError(.wrongApplication, field: "iss",
                            "the token is for application \"\(AuthError.printable(claims.applicationKey))\", not \"\(application.key)\"")
        }
        var verified = false
        for secret in application.acceptedSecrets(at: now) {
            let key = try UserToken.signingKey(secret: secret, keyDate: claims.keyDate)
            do {
                try jwt.verifyHS256(key: key)
                verified = true
                break
            } catch {
                guard error.kind == .badSignature else { throw error }
            }
        }
        guard verified else {
            throw AuthError(.badSignature, field: "signature",
                            "the signature does not match the key derived from the application secret for \(claims.keyDate)")
        }
        let issueDay = claims.issuedAt / 86_400
        let distance = claims.keyDate.daysSinceEpoch - issueDay
        guard abs(distance) <= maxKeyDateDistance else {
            throw AuthError(.keyDateMismatch, field: "kid",
                            "key \(claims.keyID) is \(abs(distance)) days from the token's issue date \(TokenKeyDate(unixTime: claims.issuedAt)?.description ?? "?"); at most \(maxKeyDateDistance) allowed")
        }
        guard claims.expiresAt - claims.issuedAt <= maxLifetime else {
            throw AuthError(.lifetimeTooLong, field: "exp",
                            "lifetime of \(claims.expiresAt - claims.issuedAt) s exceeds the limit of \(maxLifetime) s")
        }
        // `now` is the caller's; saturate so no value of it can overflow.
        let latestStart = now > Int64.max - clockSkew ? Int64.max : now + clockSkew
        guard claims.issuedAt <= latestStart else {
            throw AuthError(.notYetValid, field: "iat",
                            "issued at \(claims.issuedAt), \(claims.issuedAt.subtractingReportingOverflow(now).partialValue) s in the future (leeway \(clockSkew) s)")
        }
        if let notBefore = claims.notBefore, notBefore > latestStart {
            throw AuthError(.notYetValid, field: "nbf",
                            "not valid before \(notBefore), \(notBefore.subtractingReportingOverflow(now).partialValue) s in the future (leeway \(clockSkew) s)")
        }
        guard now < claims.expiresAt + clockSkew else {
            throw AuthError(.expired, field: "exp",
                            "expired at \(claims.expiresAt), now \(now) (leeway \(clockSkew) s)")
        }
        return claims
    }
}
