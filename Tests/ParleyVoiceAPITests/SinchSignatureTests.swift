import ParleyCrypto
import ParleyVoiceAPI
import ParleyWireCore
import Testing

/// The published example of Sinch's "Callback Request Signing" page (developers.sinch.com,
/// Voice API reference, Authentication, Callback signed request): an ACE body signed with
/// a documented key and secret.
enum SinchCallbackExample {
    static let applicationKey = "669E367E-6BBA-48AB-AF15-266871C28135"
    static let applicationSecret = "BeIukql3pTKJ8RGL5zo0DA=="
    static let body = #"{"event":"ace","callid":"822aa4b7-05b4-4d83-87c7-1f835ee0b6f6_257","timestamp":"2014-09-24T10:59:41Z","version":1}"#
    static let contentType = "application/json"
    static let timestamp = "2014-09-24T10:59:41Z"
    static let path = "/sinch/callback/ace"
    static let contentMD5 = "REWF+X220L4/Gw1spXOU7g=="
    static let signature = "Tg6fMyo8mj9pYfWQ9ssbx3Tc1BNC87IEygAfLbJqZb4="

    static var credentials: SinchApplicationCredentials {
        get throws { try SinchApplicationCredentials(applicationKey: applicationKey, applicationSecret: applicationSecret) }
    }

    static var headers: [(name: String, value: String)] {
        [("content-type", contentType), ("content-md5", contentMD5), ("x-timestamp", timestamp),
         ("authorization", "application \(applicationKey):\(signature)")]
    }
}

@Suite struct SinchRequestSignerTests {
    @Test func reproducesSinchsPublishedCallbackSignature() throws {
        let signer = SinchRequestSigner(credentials: try SinchCallbackExample.credentials)
        let signed = try signer.sign(method: "POST", path: SinchCallbackExample.path,
                                     contentType: SinchCallbackExample.contentType,
                                     body: Array(SinchCallbackExample.body.utf8),
                                     timestamp: try SinchTimestamp(parsing: SinchCallbackExample.timestamp))
        #expect(signed.contentMD5 == SinchCallbackExample.contentMD5)
        #expect(signed.stringToSign == "POST\nREWF+X220L4/Gw1spXOU7g==\napplication/json\nx-timestamp:2014-09-24T10:59:41Z\n/sinch/callback/ace")
        #expect(signed.authorization == "Application 669E367E-6BBA-48AB-AF15-266871C28135:Tg6fMyo8mj9pYfWQ9ssbx3Tc1BNC87IEygAfLbJqZb4=")
        #expect(signed.timestamp == SinchCallbackExample.timestamp)
        #expect(signed.headerFields.map(\.name) == ["Content-Type", "Content-MD5", "x-timestamp", "Authorization"])
    }

    @Test func theExampleBodyIsTheACEOfTheDocumentationAndDecodes() throws {
        let event = try CallbackEvent.decode(Array(SinchCallbackExample.body.utf8))
        guard case .answered(let ace) = event else { Issue.record("not an ACE: \(event)"); return }
        #expect(ace.header.callID == "822aa4b7-05b4-4d83-87c7-1f835ee0b6f6_257")
        #expect(ace.header.timestamp.text == "2014-09-24T10:59:41Z")
        // Parley writes the same ACE byte for byte, so its signature is the published one.
        #expect(String(decoding: event.body, as: UTF8.self) == SinchCallbackExample.body)
    }

    @Test func aRequestWithoutBodySignsEmptyLines() throws {
        let signer = SinchRequestSigner(credentials: try SinchCallbackExample.credentials)
        let signed = try signer.sign(method: "GET", path: "/calling/v1/calls/id/abc", contentType: "application/json",
                                     body: [], timestamp: try SinchTimestamp(unixSeconds: 1_700_000_000))
        #expect(signed.stringToSign == "GET\n\n\nx-timestamp:2023-11-14T22:13:20Z\n/calling/v1/calls/id/abc")
        #expect(signed.contentMD5 == nil && signed.contentType == nil)
        #expect(signed.headerFields.map(\.name) == ["x-timestamp", "Authorization"])
    }

    @Test func refusesValuesThatWouldBreakTheHeaderOrTheStringToSign() throws {
        let signer = SinchRequestSigner(credentials: try SinchCallbackExample.credentials)
        let now = try SinchTimestamp(unixSeconds: 1_700_000_000)
        for (method, path, type) in [("post", "/a", "application/json"), ("POST", "a", "application/json"),
                                     ("POST", "/a\nx", "application/json"), ("POST", "/a", "text/plain\r\nX: y"),
                                     ("POST", "/a", "")] {
            #expect(throws: VoiceAPIError.self) {
                _ = try signer.sign(method: method, path: path, contentType: type, body: [1], timestamp: now)
            }
        }
    }

    @Test func credentialsRefuseBadKeysAndSecrets() {
        for (key, secret) in [("", "AAAA"), ("a b", "AAAA"), ("a:b", "AAAA"), ("key", "not base64"), ("key", "")] {
            #expect(throws: VoiceAPIError.self) { _ = try SinchApplicationCredentials(applicationKey: key, applicationSecret: secret) }
        }
    }
}

@Suite struct SinchRequestVerifierTests {
    static let body = Array(SinchCallbackExample.body.utf8)
    static var verifier: SinchRequestVerifier {
        get throws { SinchRequestVerifier(applications: [try SinchCallbackExample.credentials]) }
    }
    static var exampleTime: SinchTimestamp {
        get throws { try SinchTimestamp(parsing: SinchCallbackExample.timestamp) }
    }

    func kind(of body: [UInt8] = body, method: String = "POST", path: String = SinchCallbackExample.path,
              headers: [(name: String, value: String)] = SinchCallbackExample.headers,
              now: SinchTimestamp? = nil) throws -> VoiceAPIError.Kind? {
        do {
            _ = try Self.verifier.verify(method: method, path: path, headers: headers, body: body, now: try now ?? Self.exampleTime)
            return nil
        } catch let error as VoiceAPIError {
            return error.kind
        }
    }

    func replacing(_ name: String, with value: String?) -> [(name: String, value: String)] {
        var headers = SinchCallbackExample.headers.filter { $0.name != name }
        if let value { headers.append((name, value)) }
        return headers
    }

    @Test func acceptsThePublishedExampleAndNamesItsApplication() throws {
        let key = try Self.verifier.verify(method: "POST", path: SinchCallbackExample.path,
                                           headers: SinchCallbackExample.headers, body: Self.body, now: try Self.exampleTime)
        #expect(key == SinchCallbackExample.applicationKey)
        #expect(try kind(headers: SinchCallbackExample.headers.map { ($0.name.uppercased(), $0.value) }) == nil)
    }

    @Test func acceptsAMissingContentMD5BecauseTheBodyIsSignedAnyway() throws {
        #expect(try kind(headers: replacing("content-md5", with: nil)) == nil)
    }

    @Test func refusesABodyChangedAfterSigning() throws {
        var changed = Self.body
        changed[changed.count - 2] = UInt8(ascii: "2")
        #expect(try kind(of: changed) == .bodyDigestMismatch)
        #expect(try kind(of: changed, headers: replacing("content-md5", with: nil)) == .badSignature)
    }

    @Test func refusesAnotherPathMethodOrContentType() throws {
        #expect(try kind(path: "/sinch/callback/ice") == .badSignature)
        #expect(try kind(method: "PUT") == .badSignature)
        #expect(try kind(headers: replacing("content-type", with: "application/json; charset=utf-8")) == .badSignature)
    }

    @Test func refusesAWrongKeyOrSecret() throws {
        #expect(try kind(headers: replacing("authorization", with: "Application 00000000-6BBA-48AB-AF15-266871C28135:\(SinchCallbackExample.signature)")) == .unknownApplication)
        let other = SinchRequestVerifier(applications: [
            try SinchApplicationCredentials(applicationKey: SinchCallbackExample.applicationKey, applicationSecret: "AAAAAAAAAAAAAAAAAAAAAA=="),
        ])
        #expect(throws: VoiceAPIError.self) {
            _ = try other.verify(method: "POST", path: SinchCallbackExample.path, headers: SinchCallbackExample.headers,
                                 body: Self.body, now: try Self.exampleTime)
        }
        var flipped = Array(SinchCallbackExample.signature.utf8)
        flipped[0] = UInt8(ascii: "U")
        let forged = "Application \(SinchCallbackExample.applicationKey):\(String(decoding: flipped, as: UTF8.self))"
        #expect(try kind(headers: replacing("authorization", with: forged)) == .badSignature)
    }

    @Test func refusesMalformedAuthorizationHeaders() throws {
        let key = SinchCallbackExample.applicationKey
        let signature = SinchCallbackExample.signature
        for value in ["", "Application", "Basic \(key):\(signature)", "Application \(key)", "Application :\(signature)",
                      "Application \(key):", "Application \(key):not-base64!", "Application \(key):AAAA",
                      "Application \(key):\(signature)x", "Application \(key) x:\(signature)",
                      "Application " + String(repeating: "k", count: 2000) + ":\(signature)"] {
            #expect(try kind(headers: replacing("authorization", with: value)) == .malformedAuthorization, "\(value)")
        }
        #expect(try kind(headers: replacing("authorization", with: nil)) == .malformedAuthorization)
        #expect(try kind(headers: SinchCallbackExample.headers + [("Authorization", "x")]) == .malformedAuthorization)
    }

    @Test func enforcesTheReplayWindowEitherWay() throws {
        let signedAt = try Self.exampleTime.unixSeconds
        let window = SinchRequestVerifier.defaultReplayWindowSeconds
        #expect(window == 900)
        #expect(try kind(now: try SinchTimestamp(unixSeconds: signedAt + window)) == nil)
        #expect(try kind(now: try SinchTimestamp(unixSeconds: signedAt - window)) == nil)
        #expect(try kind(now: try SinchTimestamp(unixSeconds: signedAt + window + 1)) == .staleTimestamp)
        #expect(try kind(now: try SinchTimestamp(unixSeconds: signedAt - window - 1)) == .staleTimestamp)
    }

    @Test func refusesAMissingOrUnreadableTimestamp() throws {
        #expect(try kind(headers: replacing("x-timestamp", with: nil)) == .missingTimestamp)
        #expect(try kind(headers: replacing("x-timestamp", with: "yesterday")) == .invalidTimestamp)
        // The timestamp is signed as sent: the same instant written otherwise breaks the signature.
        #expect(try kind(headers: replacing("x-timestamp", with: "2014-09-24T10:59:41+00:00")) == .badSignature)
    }

    @Test func verifiesWhatTheSignerSignsForAnyBody() throws {
        var random = SeededGeneratorForTests(seed: 12)
        let signer = SinchRequestSigner(credentials: try SinchCallbackExample.credentials)
        for round in 0..<50 {
            let body = random.bytes(random.below(300))
            let now = try SinchTimestamp(unixMilliseconds: 1_700_000_000_000 + Int64(round) * 1_234)
            let signed = try signer.sign(method: "PATCH", path: "/calling/v1/calls/id/\(round)",
                                         contentType: "application/json", body: body, timestamp: now)
            let key = try Self.verifier.verify(method: "PATCH", path: "/calling/v1/calls/id/\(round)",
                                               headers: signed.headerFields, body: body, now: now)
            #expect(key == SinchCallbackExample.applicationKey)
        }
    }

    @Test func acceptsTheEmptyBodysMD5InPlaceOfAnEmptyLine() throws {
        let now = try SinchTimestamp(unixSeconds: 1_700_000_000)
        let emptyMD5 = Base64.encode(try Digest.hash(.md5, [UInt8]()))
        let line = "GET\n\(emptyMD5)\n\nx-timestamp:\(now.text)\n/x"
        let secret = try Base64.decode(SinchCallbackExample.applicationSecret)
        let signature = Base64.encode(try Digest.hmac(.sha256, key: secret, Array(line.utf8)))
        let headers = [("Content-MD5", emptyMD5), ("x-timestamp", now.text),
                       ("Authorization", "Application \(SinchCallbackExample.applicationKey):\(signature)")]
        let key = try Self.verifier.verify(method: "GET", path: "/x", headers: headers, body: [], now: now)
        #expect(key == SinchCallbackExample.applicationKey)
    }
}
