import Testing
import ParleyPush
import ParleySignaling
import ParleyWireCore
import ParleyCrypto

private let key = [UInt8](repeating: 7, count: 32)

private func payload(exp: Int64 = 2_000) -> PushPayload {
    PushPayload(
        callID: "6f1c2a9e-3b7d-4c55-9a41-0e8f5d2b7c13", appKey: "app-1", deviceID: "ios-1", from: .user("alice"),
        video: false, headers: ["z": "last", "a": "fi\"rst"], issuedAt: 1_000, expiresAt: exp)
}

@Suite struct PushPayloadTests {
    @Test func claimsAreCompactInTheDocumentedOrder() {
        #expect(payload().claimsJSON == #"{"v":1,"callId":"6f1c2a9e-3b7d-4c55-9a41-0e8f5d2b7c13","appKey":"app-1","deviceId":"ios-1","from":{"kind":"user","address":"alice"},"video":false,"headers":{"a":"fi\"rst","z":"last"},"iat":1000,"exp":2000}"#)
    }

    /// The caller's display name is the last claim, `name`, present only when set.
    @Test func theCallersDisplayNameIsSignedAsClaimName() throws {
        var named = payload()
        named.callerDisplayName = "Alice \"A\" Ödman"
        #expect(named.claimsJSON.hasSuffix(#","iat":1000,"exp":2000,"name":"Alice \"A\" Ödman"}"#))
        let verified = try PushPayload.verified(try named.signed(pushKey: key), pushKey: key, now: 1_500)
        #expect(verified.callerDisplayName == "Alice \"A\" Ödman" && verified == named)
        #expect(!payload().claimsJSON.contains("name"))
    }

    @Test func signedPayloadVerifiesAndIsAnHS256CompactJWS() throws {
        let jws = try payload().signed(pushKey: key)
        let parts = jws.split(separator: ".")
        #expect(parts.count == 3)
        #expect(String(decoding: try Base64.decodeURL(parts[0]), as: UTF8.self) == #"{"alg":"HS256","typ":"parley-push"}"#)
        // Independent check of the signature: HMAC-SHA256 over the ASCII signing input.
        let mac = try Digest.hmac(.sha256, key: key, Array("\(parts[0]).\(parts[1])".utf8))
        #expect(try Base64.decodeURL(parts[2]) == mac)
        #expect(try PushPayload.verified(jws, pushKey: key, now: 1_500) == payload())
        #expect(try PushPayload.unverifiedClaims(jws).deviceID == "ios-1")
    }

    @Test func forgedExpiredOrMalformedPayloadsAreInvalid() throws {
        let jws = try payload().signed(pushKey: key)
        func invalid(_ text: String, key: [UInt8] = key, now: Int64 = 1_500) -> Bool {
            do { _ = try PushPayload.verified(text, pushKey: key, now: now); return false } catch { return error.kind == .payloadInvalid }
        }
        #expect(invalid(jws, key: [UInt8](repeating: 8, count: 32)))
        #expect(invalid(jws, now: 2_000))
        #expect(invalid(jws + "x"))
        #expect(invalid(""))
        #expect(invalid("a.b"))
        #expect(invalid("..."))
        #expect(invalid(String(repeating: "a", count: 5000)))
        // A claims part swapped for another (validly encoded) one fails the signature.
        var other = payload(); other.callID = "other"
        let forged = try other.signed(pushKey: [UInt8](repeating: 9, count: 32))
        let parts = jws.split(separator: "."), forgedParts = forged.split(separator: ".")
        #expect(invalid("\(parts[0]).\(forgedParts[1]).\(parts[2])"))
        // A correctly signed token with another header is refused too.
        let header = Base64.encodeURL(Array(#"{"alg":"none"}"#.utf8))
        let input = header + "." + parts[1]
        let mac = Base64.encodeURL(try Digest.hmac(.sha256, key: key, Array(input.utf8)))
        #expect(invalid(input + "." + mac))
        // Signed garbage claims are a clean error, not a crash.
        let garbage = Base64.encodeURL(Array(#"{"alg":"HS256","typ":"parley-push"}"#.utf8)) + "." + Base64.encodeURL(Array("[1,2]".utf8))
        #expect(invalid(garbage + "." + Base64.encodeURL(try Digest.hmac(.sha256, key: key, Array(garbage.utf8)))))
    }

    @Test func signedClaimsAreReadStrictly() throws {
        func signed(_ claims: String) throws -> String {
            let input = Base64.encodeURL(Array(#"{"alg":"HS256","typ":"parley-push"}"#.utf8)) + "." + Base64.encodeURL(Array(claims.utf8))
            return input + "." + Base64.encodeURL(try Digest.hmac(.sha256, key: key, Array(input.utf8)))
        }
        func accepted(_ claims: String) throws -> Bool {
            do { _ = try PushPayload.verified(try signed(claims), pushKey: key, now: 1_500); return true } catch { return false }
        }
        let good = payload().claimsJSON
        #expect(try accepted(good))
        // A second callId would be read as the first by Foundation on Linux and as the last by a browser.
        #expect(!(try accepted(good.replacing(#""appKey""#, with: #""callId":"other","appKey""#))))
        #expect(!(try accepted(good.replacing(#""video":false"#, with: #""video":0"#))))
        #expect(!(try accepted(good.replacing(#""iat":1000"#, with: #""iat":1000.5"#))))
        #expect(!(try accepted(good.replacing(#""z":"last""#, with: #""z":7"#))))
        #expect(!(try accepted(good.replacing("alice", with: #"al\ud800ice"#))))
    }
}
