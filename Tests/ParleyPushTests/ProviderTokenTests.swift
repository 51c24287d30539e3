import Testing
import Foundation
import ParleyPush
import ParleyCrypto
import ParleyWireCore

private func parts(_ jwt: String) throws -> (header: [String: Any], claims: [String: Any], input: String, signature: [UInt8]) {
    let pieces = jwt.split(separator: ".")
    try #require(pieces.count == 3)
    let header = try JSONSerialization.jsonObject(with: Data(try Base64.decodeURL(pieces[0]))) as? [String: Any] ?? [:]
    let claims = try JSONSerialization.jsonObject(with: Data(try Base64.decodeURL(pieces[1]))) as? [String: Any] ?? [:]
    return (header, claims, "\(pieces[0]).\(pieces[1])", try Base64.decodeURL(pieces[2]))
}

@Suite struct ProviderTokenTests {
    @Test func apnsProviderTokenIsAValidES256JWTReusedUntil50Minutes() throws {
        let key = try ES256Key.generate()
        let credentials = try APNsCredentials(teamID: "TEAM123456", keyID: "KEY1234567", privateKeyPEM: try key.privateKeyPEM())
        var token = APNsProviderToken(credentials: credentials)
        let first = try token.token(now: 1_000_000)
        let jwt = try parts(first)
        #expect(jwt.header["alg"] as? String == "ES256")
        #expect(jwt.header["kid"] as? String == "KEY1234567")
        #expect(jwt.claims["iss"] as? String == "TEAM123456")
        #expect(jwt.claims["iat"] as? Int == 1_000_000)
        #expect(try ES256Key(publicKeyPEM: try key.publicKeyPEM()).verify(jwt.signature, message: Array(jwt.input.utf8)))
        #expect(try token.token(now: 1_000_000 + 49 * 60) == first)
        let renewed = try token.token(now: 1_000_000 + 50 * 60)
        #expect(renewed != first)
        #expect(try parts(renewed).claims["iat"] as? Int == 1_000_000 + 50 * 60)
        token.invalidate()
        #expect(try token.token(now: 1_000_000 + 50 * 60 + 1) != renewed)
    }

    @Test func badCredentialsAreRefused() throws {
        #expect(throws: PushError.self) { try APNsCredentials(teamID: "", keyID: "K", privateKeyPEM: try ES256Key.generate().privateKeyPEM()) }
        #expect(throws: PushError.self) { try APNsCredentials(teamID: "T", keyID: "K", privateKeyPEM: "nope") }
        #expect(throws: PushError.self) { try FCMCredentials(serviceAccountJSON: "{}") }
        #expect(throws: PushError.self) { try FCMCredentials(serviceAccountJSON: #"{"type":"service_account","project_id":"p","client_email":"a@b","private_key":"x"}"#) }
        #expect(throws: PushError.self) { try FCMCredentials(serviceAccountJSON: "not json") }
    }

    @Test func fcmAssertionAndTokenCache() throws {
        let key = try RS256Key.generate()
        let account: [String: Any] = [
            "type": "service_account", "project_id": "demo-1", "private_key_id": "kid1", "private_key": try key.privateKeyPEM(),
            "client_email": "svc@demo-1.iam.gserviceaccount.com", "token_uri": "https://oauth2.example/token",
        ]
        let credentials = try FCMCredentials(serviceAccountJSON: String(decoding: try JSONSerialization.data(withJSONObject: account), as: UTF8.self))
        var access = FCMAccessToken(credentials: credentials)
        #expect(access.cached(now: 100) == nil)
        let request = try access.exchangeRequest(now: 100)
        #expect(request.url == "https://oauth2.example/token")
        let body = String(decoding: request.body, as: UTF8.self)
        #expect(body.hasPrefix("grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion="))
        let jwt = try parts(String(body.split(separator: "=").last!))
        #expect(jwt.header["alg"] as? String == "RS256" && jwt.header["kid"] as? String == "kid1")
        #expect(jwt.claims["aud"] as? String == "https://oauth2.example/token")
        #expect(jwt.claims["scope"] as? String == FCMAccessToken.scope)
        #expect(jwt.claims["exp"] as? Int == 3700)
        #expect(try RS256Key(publicKeyPEM: try key.publicKeyPEM()).verify(jwt.signature, message: Array(jwt.input.utf8)))

        let good = HTTPResponse(status: 200, body: Array(#"{"access_token":"ya29.x","expires_in":3599,"token_type":"Bearer"}"#.utf8))
        #expect(try access.accept(good, now: 100) == "ya29.x")
        #expect(access.cached(now: 100 + 3599 - 301) == "ya29.x")
        #expect(access.cached(now: 100 + 3599 - 300) == nil)
        let refused = HTTPResponse(status: 400, body: Array(#"{"error":"invalid_grant"}"#.utf8))
        #expect(throws: PushError.self) { try access.accept(refused, now: 100) }
        #expect(throws: PushError.self) { try access.accept(HTTPResponse(status: 200, body: Array("{}".utf8)), now: 100) }
        // The answer is network input, read strictly: two tokens is no token.
        let twice = HTTPResponse(status: 200, body: Array(#"{"access_token":"ya29.a","access_token":"ya29.b","expires_in":3599}"#.utf8))
        #expect(throws: PushError.self) { try access.accept(twice, now: 100) }
        let fraction = HTTPResponse(status: 200, body: Array(#"{"access_token":"ya29.x","expires_in":35.5e2}"#.utf8))
        #expect(throws: PushError.self) { try access.accept(fraction, now: 100) }
    }

    @Test func requestsCarryTheDocumentedHeadersAndBodies() {
        let endpoints = PushEndpoints.providers
        let apns = PushRequest.apns(endpoints: endpoints, environment: .sandbox, deviceToken: "ab12", appID: "com.example.chat",
                                    providerToken: "JWT", payloadJWS: "a.b.c")
        #expect(apns.url == "https://api.sandbox.push.apple.com/3/device/ab12")
        #expect(apns.header("authorization") == "bearer JWT")
        #expect(apns.header("apns-push-type") == "voip")
        #expect(apns.header("apns-topic") == "com.example.chat.voip")
        #expect(apns.header("apns-priority") == "10")
        #expect(apns.header("apns-expiration") == "0")
        #expect(String(decoding: apns.body, as: UTF8.self) == #"{"parley":"a.b.c"}"#)
        let production = PushRequest.apns(endpoints: endpoints, environment: .production, deviceToken: "ab12", appID: "x",
                                          providerToken: "JWT", payloadJWS: "p")
        #expect(production.url.hasPrefix("https://api.push.apple.com/"))
        let fcm = PushRequest.fcm(endpoints: endpoints, projectID: "demo-1", registrationToken: "T", accessToken: "ya29", payloadJWS: "a.b.c")
        #expect(fcm.url == "https://fcm.googleapis.com/v1/projects/demo-1/messages:send")
        #expect(fcm.header("authorization") == "Bearer ya29")
        #expect(String(decoding: fcm.body, as: UTF8.self) == #"{"message":{"token":"T","android":{"priority":"HIGH","ttl":"0s"},"data":{"parley":"a.b.c"}}}"#)
    }
}
