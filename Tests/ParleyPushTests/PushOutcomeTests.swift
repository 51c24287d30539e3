import Testing
import ParleyPush

private func answer(_ status: Int, _ body: String, headers: [String: String] = [:]) -> HTTPResponse {
    HTTPResponse(status: status, headers: headers, body: Array(body.utf8))
}

/// An arbitrary "now" for the classification (2027-01-15 08:00:00 UTC, in ms).
private let classifiedAt: Int64 = 1_800_000_000_000

private func classify(_ provider: PushOutcome.Provider, _ response: HTTPResponse, now: Int64 = classifiedAt) -> PushOutcome {
    PushOutcome(provider: provider, response: response, now: now)
}

@Suite struct PushOutcomeTests {
    @Test func apnsAnswers() {
        #expect(classify(.apns, answer(200, "")) == .delivered)
        #expect(classify(.apns, answer(410, #"{"reason":"Unregistered","timestamp":1}"#)) == .tokenGone(reason: "Unregistered"))
        #expect(classify(.apns, answer(410, #"{"reason":"ExpiredToken","timestamp":1}"#)) == .tokenGone(reason: "ExpiredToken"))
        // Also Apple's answer for a token of the other environment: not gone (yet).
        #expect(classify(.apns, answer(400, #"{"reason":"BadDeviceToken"}"#)) == .badDeviceToken(reason: "BadDeviceToken"))
        #expect(classify(.apns, answer(400, #"{"reason":"BadDeviceToken"}"#)).label == "bad_device_token")
        #expect(classify(.apns, answer(400, #"{"reason":"BadTopic"}"#)) == .rejected(reason: "BadTopic"))
        #expect(classify(.apns, answer(403, #"{"reason":"ExpiredProviderToken"}"#)) == .authRefused(reason: "ExpiredProviderToken"))
        #expect(classify(.apns, answer(429, #"{"reason":"TooManyRequests"}"#, headers: ["retry-after": "3"]))
            == .retryable(reason: "TooManyRequests", retryAfter: 3))
        #expect(classify(.apns, answer(503, "not json")) == .retryable(reason: "status 503", retryAfter: nil))
    }

    @Test func fcmAnswers() {
        let unregistered = #"{"error":{"code":404,"message":"Requested entity was not found.","status":"NOT_FOUND","details":[{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"UNREGISTERED"}]}}"#
        #expect(classify(.fcm, answer(200, #"{"name":"projects/p/messages/1"}"#)) == .delivered)
        #expect(classify(.fcm, answer(404, unregistered)) == .tokenGone(reason: "UNREGISTERED"))
        #expect(classify(.fcm, answer(401, #"{"error":{"code":401,"status":"UNAUTHENTICATED"}}"#)) == .authRefused(reason: "UNAUTHENTICATED"))
        #expect(classify(.fcm, answer(503, #"{"error":{"code":503,"status":"UNAVAILABLE"}}"#)) == .retryable(reason: "UNAVAILABLE", retryAfter: nil))
        #expect(classify(.fcm, answer(400, #"{"error":{"code":400,"status":"INVALID_ARGUMENT"}}"#)) == .rejected(reason: "INVALID_ARGUMENT"))
    }

    @Test func anAmbiguousBodyIsReadAsNoBody() {
        // Two readers could take either "reason"; a strict one takes neither, so such a
        // body cannot make parleyd delete a device's token.
        #expect(classify(.apns, answer(400, #"{"reason":"BadTopic","reason":"BadDeviceToken"}"#))
            == .rejected(reason: "status 400"))
        let twice = #"{"error":{"status":"NOT_FOUND","details":[{"errorCode":"INVALID_ARGUMENT","errorCode":"UNREGISTERED"}]}}"#
        #expect(classify(.fcm, answer(404, twice)) == .rejected(reason: "status 404"))
        #expect(classify(.apns, answer(410, #"{"reason":"Unregistered",}"#)) == .tokenGone(reason: "status 410"))
    }
}
