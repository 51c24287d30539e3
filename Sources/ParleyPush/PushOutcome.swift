internal import Foundation
internal import ParleyWireCore

/// What a provider's answer means for one push, read from its status and documented
/// JSON error body (APNs `{"reason":...}`; FCM `{"error":{"status":..., "details":[{"errorCode":...}]}}`).
public enum PushOutcome: Sendable, Hashable {
    /// The provider accepted the push.
    case delivered
    /// The token is no longer valid (APNs 410 `Unregistered` or `ExpiredToken`, FCM
    /// `UNREGISTERED`; or APNs `BadDeviceToken` from both environments): remove it.
    case tokenGone(reason: String)
    /// APNs 400 `BadDeviceToken`: the token is malformed, or belongs to the other APNs
    /// environment (Apple gives this answer for a development build's token sent to
    /// production and the reverse). Not a reason to delete it yet: ``PushSender`` tries the
    /// other environment once, and only a token that both refuse is gone.
    case badDeviceToken(reason: String)
    /// Worth trying again (429, 5xx, or no answer at all), not before `retryAfter` seconds
    /// if the provider's `retry-after` said so (a date already turned into seconds).
    case retryable(reason: String, retryAfter: Int?)
    /// The provider's auth token was refused (APNs 403 `ExpiredProviderToken` /
    /// `InvalidProviderToken`, FCM 401): make a new one and try again once.
    case authRefused(reason: String)
    /// Refused for good (bad request, bad topic, wrong credentials).
    case rejected(reason: String)

    /// Which provider answered.
    public enum Provider: String, Sendable { case apns, fcm }

    /// Classifies an answer that arrived at `now` (milliseconds since the epoch; a
    /// `retry-after` date is counted from it).
    public init(provider: Provider, response: HTTPResponse, now: Int64) {
        // The provider's body is input from the network: read strictly, like every other.
        let object = try? StrictJSONParser.parse(response.body, maxDepth: 16)
        let retryAfter = response.headers["retry-after"].flatMap { RetryAfter.seconds($0, nowMilliseconds: now) }
        switch provider {
        case .apns:
            let reason = object?["reason"]?.stringValue ?? "status \(response.status)"
            switch response.status {
            case 200: self = .delivered
            // Every 410 means the token is gone: `Unregistered`, `ExpiredToken`, or a reason
            // Apple adds later.
            case 410: self = .tokenGone(reason: reason)
            case 400 where reason == "BadDeviceToken": self = .badDeviceToken(reason: reason)
            case 403 where reason == "ExpiredProviderToken" || reason == "InvalidProviderToken": self = .authRefused(reason: reason)
            case 429, 500...599: self = .retryable(reason: reason, retryAfter: retryAfter)
            default: self = .rejected(reason: reason)
            }
        case .fcm:
            let error = object?["error"]
            var details: [JSONValue] = []
            if case .array(let list)? = error?["details"] { details = list }
            let errorCode = details.compactMap { $0["errorCode"]?.stringValue }.first
            let reason = errorCode ?? error?["status"]?.stringValue ?? "status \(response.status)"
            switch response.status {
            case 200: self = .delivered
            case _ where errorCode == "UNREGISTERED": self = .tokenGone(reason: reason)
            case 401: self = .authRefused(reason: reason)
            case 429, 500...599: self = .retryable(reason: reason, retryAfter: retryAfter)
            default: self = .rejected(reason: reason)
            }
        }
    }

    /// A short word for logs: `delivered`, `token_gone`, `bad_device_token`, `retryable`,
    /// `auth_refused`, `rejected`.
    public var label: String {
        switch self {
        case .delivered: "delivered"
        case .tokenGone: "token_gone"
        case .badDeviceToken: "bad_device_token"
        case .retryable: "retryable"
        case .authRefused: "auth_refused"
        case .rejected: "rejected"
        }
    }
}
