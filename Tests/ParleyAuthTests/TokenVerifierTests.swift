import ParleyWireCore
import Foundation
import ParleyAuth
import Testing

@Suite struct TokenVerifierTests {
    static let key = "3f6c1f2e-8d3a-4b7e-9c1d-5a2b7e9f0c41"
    static let secret = "AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA="
    static let iat: Int64 = 1_764_421_200  // 2025-11-29T13:00:00Z

    static func application() throws(AuthError) -> ApplicationCredentials {
        try ApplicationCredentials(key: key, secret: ApplicationSecret(base64: secret))
    }

    static func mint(user: String = "alice", iat: Int64 = iat, lifetime: Int64 = 600, nonce: String = "n1",
                     secret: String = secret) throws -> String {
        try UserToken.mint(applicationKey: key, secret: secret, userID: user, issuedAt: iat, lifetime: lifetime, nonce: nonce)
    }

    static func refusal(_ token: String, now: Int64, verifier: TokenVerifier = TokenVerifier(),
                        application: ApplicationCredentials? = nil) throws -> AuthError? {
        let app = try application ?? Self.application()
        do {
            _ = try verifier.verifyIgnoringReplay(token, for: app, now: now)
            return nil
        } catch {
            return error
        }
    }

    @Test func acceptsAMintedTokenAndReturnsItsClaims() throws {
        var nonces = NonceReplayCache()
        let token = try TokenVerifier().verify(Self.mint(), for: Self.application(), now: Self.iat, nonces: &nonces)
        #expect(token.userID == "alice")
        #expect(token.applicationKey == Self.key)
        #expect(token.keyID == "hkdfv1-20251129")
        #expect(token.keyDate == TokenKeyDate(year: 2025, month: 11, day: 29))
        #expect(token.issuerForm == .parley)
        #expect(token.issuer == "//parley/applications/" + Self.key)
        #expect(token.subject == "//parley/applications/" + Self.key + "/users/alice")
        #expect(token.issuedAt == Self.iat)
        #expect(token.expiresAt == Self.iat + 600)
        #expect(token.notBefore == nil)
        #expect(token.nonce == "n1")
    }

    /// The clock-skew leeway is 60 s on both ends, boundaries included as documented.
    @Test func timeBoundaries() throws {
        let token = try Self.mint(lifetime: 600)
        #expect(try Self.refusal(token, now: Self.iat - 60) == nil)
        #expect(try Self.refusal(token, now: Self.iat - 61)?.kind == .notYetValid)
        #expect(try Self.refusal(token, now: Self.iat + 600 + 59) == nil)
        #expect(try Self.refusal(token, now: Self.iat + 600 + 60)?.kind == .expired)
        let strict = TokenVerifier(clockSkew: 0)
        #expect(try Self.refusal(token, now: Self.iat + 599, verifier: strict) == nil)
        #expect(try Self.refusal(token, now: Self.iat + 600, verifier: strict)?.kind == .expired)
        #expect(try Self.refusal(token, now: Self.iat - 1, verifier: strict)?.kind == .notYetValid)
    }

    @Test func extremeClockValuesDoNotTrap() throws {
        let token = try Self.mint()
        #expect(try Self.refusal(token, now: .max)?.kind == .expired)
        #expect(try Self.refusal(token, now: .min)?.kind == .notYetValid)
    }

    @Test func lifetimeLimit() throws {
        #expect(try Self.refusal(Self.mint(lifetime: 86_400), now: Self.iat) == nil)
        #expect(try Self.refusal(Self.mint(lifetime: 86_401), now: Self.iat)?.kind == .lifetimeTooLong)
        let short = TokenVerifier(maxLifetime: 3600)
        #expect(try Self.refusal(Self.mint(lifetime: 3601), now: Self.iat, verifier: short)?.kind == .lifetimeTooLong)
    }

    /// Tokens minted just before and after midnight UTC use that day's key.
    @Test func keyDateFollowsTheIssueDate() throws {
        let midnight: Int64 = 1_764_460_800  // 2025-11-30T00:00:00Z
        let before = try UserToken.decodeUnverified(Self.mint(iat: midnight - 1))
        let after = try UserToken.decodeUnverified(Self.mint(iat: midnight))
        #expect(before.keyID == "hkdfv1-20251129")
        #expect(after.keyID == "hkdfv1-20251130")
        #expect(try Self.refusal(Self.mint(iat: midnight - 1), now: midnight) == nil)
    }

    @Test func wrongApplication() throws {
        let other = try ApplicationCredentials(key: "another-app", secret: ApplicationSecret(base64: Self.secret))
        let error = try #require(try Self.refusal(Self.mint(), now: Self.iat, application: other))
        #expect(error.kind == .wrongApplication)
        #expect(error.protocolCode == "token_wrong_application")
        #expect(error.field == "iss")
    }

    @Test func unknownApplicationError() {
        let error = AuthError.unknownApplication("nope")
        #expect(error.kind == .unknownApplication)
        #expect(error.protocolCode == "token_wrong_application")
        #expect(error.description == "token refused (unknownApplication) in appKey: no application with key \"nope\"")
    }

    @Test func rotationKeepsTheOldSecretDuringTheGracePeriod() throws {
        let oldToken = try Self.mint()
        let rotated = try Self.application().rotatingSecret(to: ApplicationSecret.generate(), now: Self.iat, gracePeriod: 300)
        #expect(rotated.acceptedSecrets(at: Self.iat + 299).count == 2)
        #expect(try Self.refusal(oldToken, now: Self.iat + 299, application: rotated) == nil)
        #expect(try Self.refusal(oldToken, now: Self.iat + 300, application: rotated)?.kind == .badSignature)
        let newToken = try Self.mint(secret: rotated.secret.base64)
        #expect(try Self.refusal(newToken, now: Self.iat + 10, application: rotated) == nil)
        let immediate = try Self.application().rotatingSecret(to: ApplicationSecret.generate(), now: Self.iat, gracePeriod: 0)
        #expect(immediate.previousSecret == nil)
        #expect(try Self.refusal(oldToken, now: Self.iat, application: immediate)?.kind == .badSignature)
    }

    @Test func replayIsPerApplicationAndEndsWithTheToken() throws {
        var nonces = NonceReplayCache()
        let verifier = TokenVerifier()
        _ = try verifier.verify(Self.mint(nonce: "same"), for: Self.application(), now: Self.iat, nonces: &nonces)
        // Another token with the same nonce: replayed.
        #expect(throws: AuthError.self) {
            _ = try verifier.verify(Self.mint(user: "bob", nonce: "same"), for: Self.application(), now: Self.iat + 1, nonces: &nonces)
        }
        // Another application may use the same nonce.
        let otherSecret = try ApplicationSecret.generate()
        let other = try ApplicationCredentials(key: "app-2", secret: otherSecret)
        let otherToken = try UserToken.mint(applicationKey: "app-2", secret: otherSecret.base64, userID: "alice",
                                            issuedAt: Self.iat, lifetime: 600, nonce: "same")
        _ = try verifier.verify(otherToken, for: other, now: Self.iat, nonces: &nonces)
        #expect(nonces.count == 2)
        nonces.removeExpired(now: Self.iat + 660)
        #expect(nonces.count == 0)
    }

    @Test func errorDescriptionsAreOneLine() throws {
        let expired = try #require(try Self.refusal(Self.mint(), now: Self.iat + 10_000))
        #expect(expired.description == "token refused (expired) in exp: expired at 1764421800, now 1764431200 (leeway 60 s)")
        #expect(expired.protocolCode == "token_expired")
        let hostile = "\u{1}\u{2}" + String(repeating: "x", count: 100)
        let error = AuthError.unknownApplication(hostile)
        #expect(!error.description.contains("\u{1}"))
        #expect(error.description.count < 160)
    }

    /// Prefixes are compared byte by byte: a combining mark after a '/' does not vanish
    /// into a grapheme cluster, and non-ASCII look-alikes are not application keys.
    @Test func unicodeTricksInIssuerAndSubject() throws {
        func forged(iss: String, sub: String) -> String {
            let payload = "{\"iss\":\"\(iss)\",\"sub\":\"\(sub)\",\"iat\":1764421200,\"exp\":1764421800,\"nonce\":\"n\"}"
            return Base64.encodeURL(Array(#"{"alg":"HS256","kid":"hkdfv1-20251129"}"#.utf8)) + "." + Base64.encodeURL(Array(payload.utf8))
                + "." + Base64.encodeURL([UInt8](repeating: 1, count: 32))
        }
        let iss = "//parley/applications/" + Self.key
        #expect(try Self.refusal(forged(iss: iss, sub: iss + "/users/\u{301}alice"), now: Self.iat)?.kind == .badUserID)
        #expect(try Self.refusal(forged(iss: iss, sub: iss + "/users\u{301}/alice"), now: Self.iat)?.kind == .badUserID)
        #expect(try Self.refusal(forged(iss: "//parley/applications/\u{301}" + Self.key, sub: iss + "/users/alice"), now: Self.iat)?.kind == .malformed)
        #expect(try Self.refusal(forged(iss: "//parley/applications/caf\u{e9}", sub: "//parley/applications/caf\u{e9}/users/a"), now: Self.iat)?.kind == .malformed)
        #expect(try Self.refusal(forged(iss: "//parley/applications/cafe\u{301}", sub: "//parley/applications/cafe\u{301}/users/a"), now: Self.iat)?.kind == .malformed)
    }

    @Test func protocolCodes() {
        let codes: [(AuthError.Kind, String)] = [
            (.malformed, "token_malformed"), (.unsupportedAlgorithm, "token_malformed"), (.unknownKey, "token_malformed"),
            (.badUserID, "token_malformed"), (.lifetimeTooLong, "token_malformed"),
            (.wrongApplication, "token_wrong_application"), (.unknownApplication, "token_wrong_application"),
            (.badSignature, "token_bad_signature"), (.keyDateMismatch, "token_bad_signature"),
            (.notYetValid, "token_not_yet_valid"), (.expired, "token_expired"), (.replayedNonce, "token_replayed"),
            (.replayCacheFull, "rate_limited"), (.malformedCredentials, "unauthorized"), (.badCredentials, "unauthorized"),
            (.invalidValue, "bad_request"), (.cryptoFailure, "internal_error"),
        ]
        #expect(Set(codes.map(\.0.description)).count == codes.count)
        for (kind, code) in codes where kind != .cryptoFailure {
            let error = AuthErrorProbe.make(kind)
            #expect(error.kind == kind)
            #expect(error.protocolCode == code, "\(kind)")
        }
    }

    @Test func mintRefusesBadArguments() {
        func kind(_ body: () throws -> String) -> AuthError.Kind? {
            do { _ = try body(); return nil } catch { return (error as? AuthError)?.kind }
        }
        #expect(kind { try UserToken.mint(applicationKey: "bad key", secret: Self.secret, userID: "a", issuedAt: Self.iat, lifetime: 1, nonce: "n") } == .invalidValue)
        #expect(kind { try UserToken.mint(applicationKey: Self.key, secret: "not base64", userID: "a", issuedAt: Self.iat, lifetime: 1, nonce: "n") } == .invalidValue)
        #expect(kind { try UserToken.mint(applicationKey: Self.key, secret: "AAAA", userID: "a", issuedAt: Self.iat, lifetime: 1, nonce: "n") } == .invalidValue)
        #expect(kind { try UserToken.mint(applicationKey: Self.key, secret: Self.secret, userID: "a b", issuedAt: Self.iat, lifetime: 1, nonce: "n") } == .invalidValue)
        #expect(kind { try UserToken.mint(applicationKey: Self.key, secret: Self.secret, userID: "a", issuedAt: Self.iat, lifetime: 0, nonce: "n") } == .invalidValue)
        #expect(kind { try UserToken.mint(applicationKey: Self.key, secret: Self.secret, userID: "a", issuedAt: -1, lifetime: 1, nonce: "n") } == .invalidValue)
        #expect(kind { try UserToken.mint(applicationKey: Self.key, secret: Self.secret, userID: "a", issuedAt: Self.iat, lifetime: .max, nonce: "n") } == .invalidValue)
        #expect(kind { try UserToken.mint(applicationKey: Self.key, secret: Self.secret, userID: "a", issuedAt: Self.iat, lifetime: 1, nonce: "") } == .invalidValue)
    }

    @Test func randomNoncesAreDistinctAndValid() throws {
        let a = try UserToken.randomNonce()
        let b = try UserToken.randomNonce()
        #expect(a != b)
        #expect(a.utf8.count == 22)
        #expect(UserToken.isValidNonce(a))
    }

    /// The token in docs/protocol.md's `hello` examples is the worked example's token.
    @Test func protocolDocumentExampleDecodes() throws {
        let token = try UserToken.decodeUnverified(
            "eyJhbGciOiJIUzI1NiIsImtpZCI6ImhrZGZ2MS0yMDI1MTEyOSIsInR5cCI6IkpXVCJ9.eyJpc3MiOiIvL3BhcmxleS9hcHBsaWNhdGlvbnMvM2Y2YzFmMmUtOGQzYS00YjdlLTljMWQtNWEyYjdlOWYwYzQxIiwic3ViIjoiLy9wYXJsZXkvYXBwbGljYXRpb25zLzNmNmMxZjJlLThkM2EtNGI3ZS05YzFkLTVhMmI3ZTlmMGM0MS91c2Vycy9hbGljZSIsImlhdCI6MTc2NDQyMTIwMCwiZXhwIjoxNzY0NTA3NjAwLCJub25jZSI6InEzWnQ4eVcxIn0.vEF3qUKaJUGL7vMNLpnP_Bk9c-QoTU_QD_768n7vktg"
        )
        #expect(token.userID == "alice")
        #expect(token.applicationKey == Self.key)
        #expect(token.expiresAt - token.issuedAt == 86_400)
        let document = try String(contentsOfFile: #filePath.replacingOccurrences(of: "Tests/ParleyAuthTests/TokenVerifierTests.swift", with: "docs/protocol.md"), encoding: .utf8)
        #expect(document.contains("\"token\":\"\(ProtocolDocumentExampleTests.token)\""))
    }
}

/// Builds an error of each kind through the public API, to check the code mapping.
enum AuthErrorProbe {
    static func make(_ kind: AuthError.Kind) -> AuthError {
        func caught(_ body: () throws(AuthError) -> Void) -> AuthError {
            do { try body() } catch { return error }
            fatalError("no error for \(kind)")
        }
        let app = try! ApplicationCredentials(key: TokenVerifierTests.key, secret: ApplicationSecret(base64: TokenVerifierTests.secret))
        let iat = TokenVerifierTests.iat
        func verify(_ token: String, now: Int64 = TokenVerifierTests.iat) -> AuthError {
            caught { () throws(AuthError) in _ = try TokenVerifier().verifyIgnoringReplay(token, for: app, now: now) }
        }
        func mint(_ user: String = "alice", lifetime: Int64 = 600) -> String {
            try! UserToken.mint(applicationKey: TokenVerifierTests.key, secret: TokenVerifierTests.secret, userID: user,
                                issuedAt: iat, lifetime: lifetime, nonce: "n")
        }
        func forge(header: String, payload: String = #"{"iss":"//parley/applications/3f6c1f2e-8d3a-4b7e-9c1d-5a2b7e9f0c41","sub":"//parley/applications/3f6c1f2e-8d3a-4b7e-9c1d-5a2b7e9f0c41/users/a","iat":1764421200,"exp":1764421800,"nonce":"n"}"#) -> String {
            Base64.encodeURL(Array(header.utf8)) + "." + Base64.encodeURL(Array(payload.utf8)) + "." + Base64.encodeURL([UInt8](repeating: 1, count: 32))
        }
        switch kind {
        case .malformed: return verify("x")
        case .unsupportedAlgorithm: return verify(forge(header: #"{"alg":"none"}"#))
        case .unknownKey: return verify(forge(header: #"{"alg":"HS256"}"#))
        case .badUserID: return verify(forge(header: #"{"alg":"HS256","kid":"hkdfv1-20251129"}"#, payload: #"{"iss":"//parley/applications/3f6c1f2e-8d3a-4b7e-9c1d-5a2b7e9f0c41","sub":"x","iat":1764421200,"exp":1764421800,"nonce":"n"}"#))
        case .lifetimeTooLong: return verify(mint(lifetime: 100_000))
        case .wrongApplication: return verify(forge(header: #"{"alg":"HS256","kid":"hkdfv1-20251129"}"#, payload: #"{"iss":"//parley/applications/x","sub":"//parley/applications/x/users/a","iat":1764421200,"exp":1764421800,"nonce":"n"}"#))
        case .unknownApplication: return AuthError.unknownApplication("x")
        case .badSignature: return verify(forge(header: #"{"alg":"HS256","kid":"hkdfv1-20251129"}"#))
        case .keyDateMismatch:
            let key = try! UserToken.signingKey(secret: app.secret, keyDate: TokenKeyDate(year: 2025, month: 1, day: 1)!)
            let payload = #"{"iss":"//parley/applications/3f6c1f2e-8d3a-4b7e-9c1d-5a2b7e9f0c41","sub":"//parley/applications/3f6c1f2e-8d3a-4b7e-9c1d-5a2b7e9f0c41/users/a","iat":1764421200,"exp":1764421800,"nonce":"n"}"#
            return verify(try! JSONWebToken.signHS256(headerJSON: Array(#"{"alg":"HS256","kid":"hkdfv1-20250101"}"#.utf8), payloadJSON: Array(payload.utf8), key: key))
        case .notYetValid: return verify(mint(), now: iat - 1000)
        case .expired: return verify(mint(), now: iat + 1000)
        case .replayedNonce, .replayCacheFull:
            var nonces = NonceReplayCache(capacityPerApplication: 1)
            try! nonces.record(nonce: "a", applicationKey: "k", expiresAt: 10, now: 0)
            return caught { () throws(AuthError) in try nonces.record(nonce: kind == .replayedNonce ? "a" : "b", applicationKey: "k", expiresAt: 10, now: 0) }
        case .malformedCredentials: return caught { () throws(AuthError) in _ = try BasicCredentials.parse(authorization: "Bearer x") }
        case .badCredentials: return caught { () throws(AuthError) in try app.authenticate(BasicCredentials(applicationKey: "x", secret: "y"), now: 0) }
        case .invalidValue: return caught { () throws(AuthError) in _ = try ApplicationSecret(base64: "!") }
        default:
            // cryptoFailure cannot be provoked through the API; its mapping is in AuthError.
            return AuthError.unknownApplication("unreachable")
        }
    }
}

/// The worked example in docs/protocol.md "Authentication".
@Suite struct ProtocolDocumentExampleTests {
    static let token = "eyJhbGciOiJIUzI1NiIsImtpZCI6ImhrZGZ2MS0yMDI1MTEyOSIsInR5cCI6IkpXVCJ9.eyJpc3MiOiIvL3BhcmxleS9hcHBsaWNhdGlvbnMvM2Y2YzFmMmUtOGQzYS00YjdlLTljMWQtNWEyYjdlOWYwYzQxIiwic3ViIjoiLy9wYXJsZXkvYXBwbGljYXRpb25zLzNmNmMxZjJlLThkM2EtNGI3ZS05YzFkLTVhMmI3ZTlmMGM0MS91c2Vycy9hbGljZSIsImlhdCI6MTc2NDQyMTIwMCwiZXhwIjoxNzY0NTA3NjAwLCJub25jZSI6InEzWnQ4eVcxIn0.vEF3qUKaJUGL7vMNLpnP_Bk9c-QoTU_QD_768n7vktg"

    @Test func signingKeyAndTokenMatchTheDocument() throws {
        let application = try TokenVerifierTests.application()
        let key = try UserToken.signingKey(secret: application.secret, keyDate: #require(TokenKeyDate(digits: "20251129")))
        #expect(key == Array(try Base64.decode("s6rwlHCsdphOACo1tZA6cgNG/F25rOJC8BJKLknFYWA=")))
        let minted = try UserToken.mint(applicationKey: TokenVerifierTests.key, secret: TokenVerifierTests.secret, userID: "alice",
                                        issuedAt: 1_764_421_200, lifetime: 86_400, nonce: "q3Zt8yW1")
        #expect(minted == Self.token)
        var nonces = NonceReplayCache()
        let claims = try TokenVerifier().verify(Self.token, for: application, now: 1_764_421_200, nonces: &nonces)
        #expect(claims.userID == "alice")
    }
}

/// Tokens printed by the Python and Node.js snippets in docs/auth.md (run once, with the
/// test application's key and secret), so the documented recipes stay correct.
@Suite struct DocumentedRecipeTests {
    @Test(arguments: [
        ("python", "eyJhbGciOiAiSFMyNTYiLCAia2lkIjogImhrZGZ2MS0yMDI2MTEyOSIsICJ0eXAiOiAiSldUIn0.eyJpc3MiOiAiLy9wYXJsZXkvYXBwbGljYXRpb25zLzNmNmMxZjJlLThkM2EtNGI3ZS05YzFkLTVhMmI3ZTlmMGM0MSIsICJzdWIiOiAiLy9wYXJsZXkvYXBwbGljYXRpb25zLzNmNmMxZjJlLThkM2EtNGI3ZS05YzFkLTVhMmI3ZTlmMGM0MS91c2Vycy9hbGljZSIsICJpYXQiOiAxNzk1OTcyMDE1LCAiZXhwIjogMTc5NTk3MjYxNSwgIm5vbmNlIjogImVmY1lteVAyV2YyU3dVLUF3QUdHTUEifQ.26X9wLqPIu7X1A1Ay3f-YdyYt634GMgLm_SCuscZLYE", Int64(1_795_972_015)),
        ("node", "eyJhbGciOiJIUzI1NiIsImtpZCI6ImhrZGZ2MS0yMDI2MTEyOSIsInR5cCI6IkpXVCJ9.eyJpc3MiOiIvL3BhcmxleS9hcHBsaWNhdGlvbnMvM2Y2YzFmMmUtOGQzYS00YjdlLTljMWQtNWEyYjdlOWYwYzQxIiwic3ViIjoiLy9wYXJsZXkvYXBwbGljYXRpb25zLzNmNmMxZjJlLThkM2EtNGI3ZS05YzFkLTVhMmI3ZTlmMGM0MS91c2Vycy9hbGljZSIsImlhdCI6MTc5NTk3MjAxNiwiZXhwIjoxNzk1OTcyNjE2LCJub25jZSI6IlN1UDlFckJyOUEwbG5XNmZDZkxibVEifQ.nwZ4Qk6GHv1moeAbg9Y1EPS4Z5bgkzdBYqFiT2N27JA", Int64(1_795_972_016)),
    ])
    func recipeTokenVerifies(_ language: String, _ token: String, _ issuedAt: Int64) throws {
        var nonces = NonceReplayCache()
        let claims = try TokenVerifier().verify(token, for: TokenVerifierTests.application(), now: issuedAt + 5, nonces: &nonces)
        #expect(claims.userID == "alice", "\(language)")
        #expect(claims.expiresAt - claims.issuedAt == 600)
    }
}
