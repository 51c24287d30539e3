import ParleyWireCore
import ParleyAuth
import ParleyTestSupport
import Testing

import Foundation

@Suite struct CredentialsTests {
    @Test func generatedCredentialsHaveTheDocumentedForm() throws {
        let credentials = try ApplicationCredentials.generate()
        let key = Array(credentials.key.utf8)
        #expect(key.count == 36)
        #expect(key[8] == UInt8(ascii: "-") && key[13] == UInt8(ascii: "-") && key[18] == UInt8(ascii: "-") && key[23] == UInt8(ascii: "-"))
        #expect(key[14] == UInt8(ascii: "4"))
        #expect([UInt8(ascii: "8"), UInt8(ascii: "9"), UInt8(ascii: "a"), UInt8(ascii: "b")].contains(key[19]))
        #expect(ApplicationCredentials.isValidKey(credentials.key))
        #expect(credentials.secret.bytes.count == 32)
        #expect(credentials.secret.base64.utf8.count == 44)
        #expect(try ApplicationCredentials.generate().key != credentials.key)
        #expect(try ApplicationSecret.generate() != credentials.secret)
    }

    @Test func secretsAreStrictAndRedacted() throws {
        #expect(throws: AuthError.self) { try ApplicationSecret(base64: "ZGVmZ2hpamtsbW5vcHFy") }  // unpadded
        #expect(throws: AuthError.self) { try ApplicationSecret(base64: "AAAAAAAAAAAAAAAAAAAA") }  // 15 bytes
        let secret = try ApplicationSecret(base64: "ZGVmZ2hpamtsbW5vcHFycw==")
        #expect(secret.bytes.count == 16)
        #expect(!"\(secret)".contains("ZGVm"))
        #expect(!"\(BasicCredentials(applicationKey: "k", secret: "hunter2"))".contains("hunter2"))
    }

    @Test func codableRoundTripAndValidation() throws {
        let credentials = try ApplicationCredentials.generate()
            .rotatingSecret(to: ApplicationSecret.generate(), now: 1000, gracePeriod: 60)
        let json = try JSONEncoder().encode(credentials)
        #expect(try JSONDecoder().decode(ApplicationCredentials.self, from: json) == credentials)
        let text = String(decoding: json, as: UTF8.self)
        #expect(text.contains("\"previousSecretExpiresAt\":1060"))
        let bad = Data(#"{"key":"bad key","secret":"ZGVmZ2hpamtsbW5vcHFycw=="}"#.utf8)
        #expect(throws: (any Error).self) { try JSONDecoder().decode(ApplicationCredentials.self, from: bad) }
    }

    /// The JSON form `parley inspect` prints for a token (docs/auth.md).
    @Test func userTokenJSONForm() throws {
        let token = try UserToken.decodeUnverified(ProtocolDocumentExampleTests.token)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let json = String(decoding: try encoder.encode(token), as: UTF8.self)
        #expect(json == #"{"applicationKey":"3f6c1f2e-8d3a-4b7e-9c1d-5a2b7e9f0c41","expiresAt":1764507600,"issuedAt":1764421200,"issuer":"//parley/applications/3f6c1f2e-8d3a-4b7e-9c1d-5a2b7e9f0c41","issuerForm":"parley","keyDate":"20251129","keyId":"hkdfv1-20251129","nonce":"q3Zt8yW1","subject":"//parley/applications/3f6c1f2e-8d3a-4b7e-9c1d-5a2b7e9f0c41/users/alice","userId":"alice"}"#)
    }

    @Test func basicCredentialsRoundTrip() throws {
        let credentials = BasicCredentials(applicationKey: "3f6c1f2e-8d3a-4b7e-9c1d-5a2b7e9f0c41", secret: "ZGVmZ2hpamtsbW5vcHFycw==")
        #expect(credentials.authorizationValue == "Basic M2Y2YzFmMmUtOGQzYS00YjdlLTljMWQtNWEyYjdlOWYwYzQxOlpHVm1aMmhwYW10c2JXNXZjSEZ5Y3c9PQ==")
        #expect(try BasicCredentials.parse(authorization: credentials.authorizationValue) == credentials)
        #expect(try BasicCredentials.parse(authorization: "  bAsIc   " + credentials.authorizationValue.dropFirst(6) + "\t") == credentials)
    }

    /// RFC 7617 §2: the example "Aladdin:open sesame" splits at the first colon.
    @Test func rfc7617Section2Example() throws {
        let parsed = try BasicCredentials.parse(authorization: "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==")
        #expect(parsed.applicationKey == "Aladdin")
        #expect(parsed.secret == "open sesame")
        let colon = try BasicCredentials.parse(authorization: "Basic " + Base64.encode(Array("key:se:cret".utf8)))
        #expect(colon.secret == "se:cret")
    }

    @Test(arguments: [
        ("", "malformedCredentials"), ("Basic", "malformedCredentials"), ("Basic ", "malformedCredentials"),
        ("Bearer abc", "malformedCredentials"), ("BasicQWxhZGRpbjpvcGVuIHNlc2FtZQ==", "malformedCredentials"),
        ("Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ", "malformedCredentials"), ("Basic QWxh ZGRp", "malformedCredentials"),
        ("Basic bm9jb2xvbg==", "malformedCredentials"), ("Basic /w==", "malformedCredentials"),
        ("Basic YmFkIGtleTpzZWNyZXQ=", "badCredentials"), ("Basic OnNlY3JldA==", "badCredentials"),
    ])
    func basicParseRefuses(_ header: String, _ kind: String) {
        do {
            _ = try BasicCredentials.parse(authorization: header)
            Issue.record("accepted \(header)")
        } catch {
            #expect(error.kind.description == kind, "\(header): \(error)")
            #expect(error.protocolCode == "unauthorized")
        }
    }

    @Test func basicParseRefusesHugeHeaders() {
        #expect(throws: AuthError.self) { try BasicCredentials.parse(authorization: "Basic " + String(repeating: "A", count: 2000)) }
    }

    @Test func authenticateChecksKeyAndSecretsInTheGracePeriod() throws {
        let original = try ApplicationCredentials.generate()
        let rotated = original.rotatingSecret(to: try ApplicationSecret.generate(), now: 100, gracePeriod: 50)
        try rotated.authenticate(BasicCredentials(applicationKey: original.key, secret: rotated.secret.base64), now: 120)
        try rotated.authenticate(BasicCredentials(applicationKey: original.key, secret: original.secret.base64), now: 149)
        func refusal(_ credentials: BasicCredentials, now: Int64) -> AuthError.Kind? {
            do { try rotated.authenticate(credentials, now: now); return nil } catch { return error.kind }
        }
        #expect(refusal(BasicCredentials(applicationKey: original.key, secret: original.secret.base64), now: 150) == .badCredentials)
        #expect(refusal(BasicCredentials(applicationKey: "other", secret: rotated.secret.base64), now: 120) == .badCredentials)
        #expect(refusal(BasicCredentials(applicationKey: original.key, secret: String(rotated.secret.base64.dropLast())), now: 120) == .badCredentials)
        #expect(refusal(BasicCredentials(applicationKey: original.key, secret: ""), now: 120) == .badCredentials)
        // A second rotation drops the secret that was in its grace period.
        let twice = rotated.rotatingSecret(to: try ApplicationSecret.generate(), now: 120, gracePeriod: 50)
        #expect(twice.previousSecret == rotated.secret)
        #expect(twice.acceptedSecrets(at: 121).count == 2)
        #expect(!twice.acceptedSecrets(at: 121).contains(original.secret))
    }

    @Test func credentialsValidateTheirParts() throws {
        let secret = try ApplicationSecret.generate()
        #expect(throws: AuthError.self) { try ApplicationCredentials(key: "", secret: secret) }
        #expect(throws: AuthError.self) { try ApplicationCredentials(key: String(repeating: "k", count: 65), secret: secret) }
        #expect(throws: AuthError.self) { try ApplicationCredentials(key: "k", secret: secret, previousSecret: secret) }
        #expect(throws: AuthError.self) { try ApplicationCredentials(key: "k", secret: secret, previousSecretExpiresAt: 5) }
        #expect(try ApplicationCredentials(key: String(repeating: "k", count: 64), secret: secret).key.count == 64)
    }

    @Test func basicParseSurvivesRandomInput() {
        var generator = SeededGenerator(seed: 7617)
        for _ in 0..<2000 {
            let header = "Basic " + String(decoding: generator.bytes(generator.below(40)), as: UTF8.self)
            _ = try? BasicCredentials.parse(authorization: header)
            let encoded = "Basic " + Base64.encode(generator.bytes(generator.below(40)))
            _ = try? BasicCredentials.parse(authorization: encoded)
        }
    }
}
