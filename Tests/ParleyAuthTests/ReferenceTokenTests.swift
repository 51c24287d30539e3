import ParleyAuth
import ParleyWireCore
import Testing

/// Tokens minted by an independent implementation (make_reference_tokens.py, Python's
/// hmac/hashlib/base64/json), one accepted form or refusal reason each.
@Suite struct ReferenceTokenTests {
    static func application(_ fixture: ReferenceTokens.Fixture) throws(AuthError) -> ApplicationCredentials {
        try ApplicationCredentials(key: ReferenceTokens.applicationKey, secret: ApplicationSecret(base64: fixture.secret))
    }

    @Test(arguments: ReferenceTokens.all)
    func referenceToken(_ fixture: ReferenceTokens.Fixture) throws {
        let verifier = TokenVerifier()
        var nonces = NonceReplayCache()
        do {
            let token = try verifier.verify(fixture.token, for: Self.application(fixture), now: ReferenceTokens.now, nonces: &nonces)
            #expect(fixture.expected == "accepted", "accepted, expected \(fixture.expected)")
            #expect(token.applicationKey == ReferenceTokens.applicationKey)
            #expect(UserToken.isValidUserID(token.userID))
            #expect(nonces.count == 1)
            // The same token again is a replay.
            do {
                _ = try verifier.verify(fixture.token, for: Self.application(fixture), now: ReferenceTokens.now + 1, nonces: &nonces)
                Issue.record("replay accepted")
            } catch {
                #expect(error.kind == .replayedNonce)
                #expect(error.protocolCode == "token_replayed")
            }
        } catch {
            #expect(error.kind.description == fixture.expected, "\(error)")
            #expect(nonces.count == 0, "a refused token must not use up its nonce")
            #expect(error.protocolCode.hasPrefix("token_"))
        }
    }

    /// Our minting gives exactly the bytes the reference implementation gives.
    @Test func mintMatchesTheReferenceImplementation() throws {
        let parley = try UserToken.mint(applicationKey: ReferenceTokens.applicationKey, secret: ReferenceTokens.secret,
                                        userID: "alice", issuedAt: 1_764_421_200, lifetime: 600, nonce: "q3Zt8yW1")
        #expect(parley == ReferenceTokens.all.first { $0.name == "parley issuer" }?.token)
        let sinch = try UserToken.mint(applicationKey: ReferenceTokens.applicationKey, secret: ReferenceTokens.secret,
                                       userID: "alice", issuedAt: 1_764_421_200, lifetime: 600, nonce: "q3Zt8yW1", issuerForm: .sinch)
        #expect(sinch == ReferenceTokens.all.first { $0.name == "sinch issuer" }?.token)
    }

    /// The header and claims are written by the package's one JSON writer: compact, in the
    /// documented order, with a quote and a backslash in the nonce escaped.
    @Test func mintedPartsAreCompactJSONWithEscapedNonce() throws {
        let token = try UserToken.mint(applicationKey: ReferenceTokens.applicationKey, secret: ReferenceTokens.secret,
                                       userID: "alice", issuedAt: 1_764_421_200, lifetime: 600, nonce: #"q"3\Z"#)
        let parts = token.split(separator: ".")
        #expect(parts.count == 3)
        let header = String(decoding: try Base64.decodeURL(parts[0]), as: UTF8.self)
        let claims = String(decoding: try Base64.decodeURL(parts[1]), as: UTF8.self)
        #expect(header == #"{"alg":"HS256","kid":"hkdfv1-20251129","typ":"JWT"}"#)
        let issuer = "//parley/applications/" + ReferenceTokens.applicationKey
        #expect(claims == #"{"iss":""# + issuer + #"","sub":""# + issuer + #"/users/alice","iat":1764421200,"exp":1764421800,"nonce":"q\"3\\Z"}"#)
    }

    @Test func fixturesCoverEveryTokenErrorKind() {
        let kinds = Set(ReferenceTokens.all.map(\.expected))
        for kind in ["accepted", "malformed", "unsupportedAlgorithm", "unknownKey", "badSignature", "keyDateMismatch",
                     "wrongApplication", "badUserID", "expired", "notYetValid", "lifetimeTooLong"] {
            #expect(kinds.contains(kind), "no fixture for \(kind)")
        }
    }
}
