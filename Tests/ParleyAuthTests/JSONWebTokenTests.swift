import ParleyWireCore
import ParleyAuth
import ParleyTestSupport
import Testing

@Suite struct JSONWebTokenTests {
    /// RFC 7515 Appendix A.1: the HS256 example, its key (the JWK's "k") and its token.
    static let rfcKey = "AyM1SysPpbyDfgZld3umj1qzKObwVMkoqQ-EstJQLr_T-1qS0gZH75aKtMN3Yj0iPS4hcgUuTwjAzZr1Z9CAow"
    static let rfcHeader = "{\"typ\":\"JWT\",\r\n \"alg\":\"HS256\"}"
    static let rfcPayload = "{\"iss\":\"joe\",\r\n \"exp\":1300819380,\r\n \"http://example.com/is_root\":true}"
    static let rfcToken = "eyJ0eXAiOiJKV1QiLA0KICJhbGciOiJIUzI1NiJ9"
        + ".eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ"
        + ".dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"

    @Test func rfc7515AppendixA1Verifies() throws {
        let key = try Base64.decodeURL(Self.rfcKey)
        let token = try JSONWebToken.parse(Self.rfcToken)
        #expect(token.payload == Array(Self.rfcPayload.utf8))
        #expect(token.signature == [
            116, 24, 223, 180, 151, 153, 224, 37, 79, 250, 96, 125, 216, 173, 187, 186,
            22, 212, 37, 77, 105, 214, 191, 240, 91, 88, 5, 88, 83, 132, 141, 121,
        ])
        #expect(token.signingInput == Array(Self.rfcToken.split(separator: ".").prefix(2).joined(separator: ".").utf8))
        #expect(token.keyID == nil)
        try token.verifyHS256(key: key)
    }

    @Test func rfc7515AppendixA1SignsByteForByte() throws {
        let key = try Base64.decodeURL(Self.rfcKey)
        let token = try JSONWebToken.signHS256(headerJSON: Array(Self.rfcHeader.utf8), payloadJSON: Array(Self.rfcPayload.utf8), key: key)
        #expect(token == Self.rfcToken)
    }

    @Test func rfc7515AppendixA1WithAnotherKeyIsBadSignature() throws {
        var key = try Base64.decodeURL(Self.rfcKey)
        key[0] ^= 1
        let token = try JSONWebToken.parse(Self.rfcToken)
        #expect(throws: AuthError.self) { try token.verifyHS256(key: key) }
        do { try token.verifyHS256(key: key) } catch { #expect(error.kind == .badSignature) }
    }

    /// Every prefix of a valid token is refused with a typed error, never a trap.
    @Test func everyTruncationThrows() throws {
        var accepted: [String] = []
        let bytes = Array(Self.rfcToken.utf8)
        for length in 0..<bytes.count {
            let prefix = String(decoding: bytes[0..<length], as: UTF8.self)
            if (try? JSONWebToken.parse(prefix)) != nil { accepted.append(prefix) }
        }
        let verifier = TokenVerifier()
        for fixture in ReferenceTokens.all where fixture.expected == "accepted" {
            let application = try ApplicationCredentials(key: ReferenceTokens.applicationKey, secret: ApplicationSecret(base64: fixture.secret))
            let bytes = Array(fixture.token.utf8)
            for length in 0..<bytes.count {
                let prefix = String(decoding: bytes[0..<length], as: UTF8.self)
                if (try? verifier.verifyIgnoringReplay(prefix, for: application, now: ReferenceTokens.now)) != nil { accepted.append(prefix) }
            }
        }
        #expect(accepted.isEmpty, "accepted truncations: \(accepted.prefix(3))")
    }

    /// Random bytes, random base64url parts and single-byte mutations of a valid token:
    /// each either parses or throws AuthError (the typed throws guarantees the type); a
    /// mutated token never verifies.
    @Test func hostileInputNeverTraps() throws {
        var generator = SeededGenerator(seed: 7515)
        let key = try Base64.decodeURL(Self.rfcKey)
        var parsedRandom = 0
        for _ in 0..<1000 {
            let text = String(decoding: generator.bytes(generator.below(200)), as: UTF8.self)
            if (try? JSONWebToken.parse(text)) != nil { parsedRandom += 1 }
        }
        #expect(parsedRandom == 0)
        for _ in 0..<1000 {
            let parts = (0..<3).map { _ in Base64.encodeURL(generator.bytes(generator.below(60))) }
            _ = try? JSONWebToken.parse(parts.joined(separator: "."))
        }
        let original = Array(Self.rfcToken.utf8)
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.=+/ ".utf8)
        var verifiedMutations: [String] = []
        for _ in 0..<1000 {
            var mutated = original
            mutated[generator.below(mutated.count)] = alphabet[generator.below(alphabet.count)]
            guard mutated != original else { continue }
            let text = String(decoding: mutated, as: UTF8.self)
            // Strict base64url means no other text decodes to the same bytes, so any
            // mutation that verifies would be a bug.
            if let token = try? JSONWebToken.parse(text), (try? token.verifyHS256(key: key)) != nil {
                verifiedMutations.append(text)
            }
        }
        #expect(verifiedMutations.isEmpty)
    }

    @Test func oversizedTokenIsMalformed() {
        let big = String(repeating: "a", count: JSONWebToken.maxLength + 1)
        do {
            _ = try JSONWebToken.parse(big)
            Issue.record("parsed")
        } catch {
            #expect(error.kind == .malformed)
            #expect(error.field == "token")
            #expect(error.description.contains("8193 bytes"))
        }
    }

    @Test func deepNestingIsMalformedNotARecursionTrap() throws {
        let deep = "{\"alg\":\"HS256\",\"x\":" + String(repeating: "[", count: 2000) + String(repeating: "]", count: 2000) + "}"
        let token = Base64.encodeURL(Array(deep.utf8)) + ".e30." + Base64.encodeURL([UInt8](repeating: 0, count: 32))
        do {
            _ = try JSONWebToken.parse(token)
            Issue.record("parsed")
        } catch {
            #expect(error.kind == .malformed)
            #expect(error.field == "header")
            #expect(error.reason.contains("nesting"))
        }
    }

    @Test(arguments: [
        ("{\"alg\":\"HS256\"} ", true),
        ("\u{FEFF}{\"alg\":\"HS256\"}", false),
        ("{\"alg\":\"HS256\",}", false),
        ("{\"alg\":\"HS256\"}{}", false),
        ("{\"alg\":\"HS256\",\"x\":01}", false),
        ("{\"alg\":\"HS256\",\"x\":1.}", false),
        ("{\"alg\":\"HS256\",\"x\":\"\\ud800\"}", false),
        ("{\"alg\":\"HS256\",\"x\":\"\\udc00\\ud800\"}", false),
        ("{\"alg\":\"HS256\",\"x\":\"\\ud83d\\ude00\"}", true),
        ("{\"alg\":\"HS256\",\"x\":\"tab\there\"}", false),
        ("{\"alg\":\"HS256\",\"x\":\"\\q\"}", false),
        ("{\"alg\":\"HS256\",\"x\":tru}", false),
        ("{\"alg\":\"HS256\",\"x\":-}", false),
        ("{\"alg\":\"HS256\",\"x\":1e}", false),
        ("{\"alg\":\"HS256\",\"x\":-0.5e+7}", true),
        ("{\"alg\":\"HS256\",\"x\":99999999999999999999999}", true),
        ("{\"alg\":\"HS256\",\"x\":{\"a\":1,\"a\":2}}", false),
        ("{\"alg\":\"HS256\",\"\\u0061lg\":\"none\"}", false),
        ("{\"alg\":\"HS256\",\"x\":[1,2,]}", false),
        ("[\"alg\"]", false),
        ("{\"alg\":\"HS256\"", false),
    ])
    func strictHeaderJSON(_ header: String, _ accepted: Bool) {
        let token = Base64.encodeURL(Array(header.utf8)) + ".e30." + Base64.encodeURL([UInt8](repeating: 0, count: 32))
        let result = Result { () throws(AuthError) in try JSONWebToken.parse(token) }
        switch result {
        case .success: #expect(accepted, "accepted \(header)")
        case .failure(let error):
            #expect(!accepted, "refused \(header): \(error)")
            #expect(error.kind == .malformed)
        }
    }

    @Test func jsonErrorsNameThePartAndOffset() {
        let token = Base64.encodeURL(Array("{\"alg\":\"HS256\"}".utf8)) + "." + Base64.encodeURL(Array("{\"a\":1,\"a\":2}".utf8))
            + "." + Base64.encodeURL([UInt8](repeating: 0, count: 32))
        do {
            _ = try JSONWebToken.parse(token)
            Issue.record("parsed")
        } catch {
            #expect(error.field == "payload")
            #expect(error.offset == 7)
            #expect(error.description == "token refused (malformed) in payload at offset 7: invalid JSON: duplicate member \"a\"")
        }
    }
}
