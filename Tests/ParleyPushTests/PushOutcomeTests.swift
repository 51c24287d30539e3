import Testing
import ParleyPush

private func answer(_ status: Int, _ body: String, headers: [String: String] = [:]) -> HTTPResponse {
    HTTPResponse(status: status, headers: headers, body: Array(body.utf8))
}

@Suite struct PushOutcomeTests {
    @Test func apnsAnswers() {
        #expect(PushOutcome(provider: .apns, response: answer(200, "")) == .delivered)
        #expect(PushOutcome(provider: .apns, response: answer(410, #"{"reason":"Unregistered","timestamp":1}"#)) == .tokenGone(reason: "Unregistered"))
        #expect(PushOutcome(provider: .apns, response: answer(400, #"{"reason":"BadDeviceToken"}"#)) == .tokenGone(reason: "BadDeviceToken"))
        #expect(PushOutcome(provider: .apns, response: answer(400, #"{"reason":"BadTopic"}"#)) == .rejected(reason: "BadTopic"))
        #expect(PushOutcome(provider: .apns, response: answer(403, #"{"reason":"ExpiredProviderToken"}"#)) == .authRefused(reason: "ExpiredProviderToken"))
        #expect(PushOutcome(provider: .apns, response: answer(429, #"{"reason":"TooManyRequests"}"#, headers: ["retry-after": "3"]))
            == .retryable(reason: "TooManyRequests", retryAfter: 3))
        #expect(PushOutcome(provider: .apns, response: answer(503, "not json")) == .retryable(reason: "status 503", retryAfter: nil))
    }

    @Test func fcmAnswers() {
        let unregistered = #"{"error":{"code":404,"message":"Requested entity was not found.","status":"NOT_FOUND","details":[{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"UNREGISTERED"}]}}"#
        #expect(PushOutcome(provider: .fcm, response: answer(200, #"{"name":"projects/p/messages/1"}"#)) == .delivered)
        #expect(PushOutcome(provider: .fcm, response: answer(404, unregistered)) == .tokenGone(reason: "UNREGISTERED"))
        #expect(PushOutcome(provider: .fcm, response: answer(401, #"{"error":{"code":401,"status":"UNAUTHENTICATED"}}"#)) == .authRefused(reason: "UNAUTHENTICATED"))
        #expect(PushOutcome(provider: .fcm, response: answer(503, #"{"error":{"code":503,"status":"UNAVAILABLE"}}"#)) == .retryable(reason: "UNAVAILABLE", retryAfter: nil))
        #expect(PushOutcome(provider: .fcm, response: answer(400, #"{"error":{"code":400,"status":"INVALID_ARGUMENT"}}"#)) == .rejected(reason: "INVALID_ARGUMENT"))
    }

    @Test func anAmbiguousBodyIsReadAsNoBody() {
        // Two readers could take either "reason"; a strict one takes neither, so such a
        // body cannot make parleyd delete a device's token.
        #expect(PushOutcome(provider: .apns, response: answer(400, #"{"reason":"BadTopic","reason":"BadDeviceToken"}"#))
            == .rejected(reason: "status 400"))
        let twice = #"{"error":{"status":"NOT_FOUND","details":[{"errorCode":"INVALID_ARGUMENT","errorCode":"UNREGISTERED"}]}}"#
        #expect(PushOutcome(provider: .fcm, response: answer(404, twice)) == .rejected(reason: "status 404"))
        #expect(PushOutcome(provider: .apns, response: answer(410, #"{"reason":"Unregistered",}"#)) == .tokenGone(reason: "status 410"))
    }
}
