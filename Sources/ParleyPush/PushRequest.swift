public import ParleySignaling
internal import ParleyWireCore

/// One HTTP/2 `POST` to a push provider or a token endpoint, as values: the engine builds
/// it, ``HTTP2Client`` sends it.
public struct PushRequest: Sendable {
    /// The absolute URL.
    public var url: String
    /// Header fields, names in lowercase (HTTP/2), in order.
    public var headers: [(name: String, value: String)]
    /// The body.
    public var body: [UInt8]

    public init(url: String, headers: [(name: String, value: String)], body: [UInt8]) {
        self.url = url
        self.headers = headers
        self.body = body
    }

    /// The value of the first header named `name` (lowercase).
    public func header(_ name: String) -> String? { headers.first { $0.name == name }?.value }

    /// An APNs VoIP push: `POST /3/device/{token}` on the environment's host, with the
    /// provider token, `apns-push-type: voip`, topic `{appId}.voip`, priority 10 and
    /// expiration 0 (deliver now or never), body `{"parley":"<JWS>"}`.
    public static func apns(
        endpoints: PushEndpoints, environment: SignalingMessage.PushEnvironment, deviceToken: String, appID: String,
        providerToken: String, payloadJWS: String
    ) -> PushRequest {
        let base = environment == .sandbox ? endpoints.apnsDevelopment : endpoints.apnsProduction
        var body = JSONObject()
        body.append("parley", payloadJWS)
        return PushRequest(
            url: base + "/3/device/" + deviceToken,
            headers: [
                ("authorization", "bearer " + providerToken),
                ("apns-push-type", "voip"),
                ("apns-topic", appID + ".voip"),
                ("apns-priority", "10"),
                ("apns-expiration", "0"),
                ("content-type", "application/json"),
            ],
            body: JSONWriter.serialize(.object(body)))
    }

    /// An FCM HTTP v1 high-priority data message with time-to-live 0:
    /// `POST /v1/projects/{project}/messages:send`.
    public static func fcm(
        endpoints: PushEndpoints, projectID: String, registrationToken: String, accessToken: String, payloadJWS: String
    ) -> PushRequest {
        var android = JSONObject()
        android.append("priority", "HIGH")
        android.append("ttl", "0s")
        var data = JSONObject()
        data.append("parley", payloadJWS)
        var message = JSONObject()
        message.append("token", registrationToken)
        message.append("android", .object(android))
        message.append("data", .object(data))
        var body = JSONObject()
        body.append("message", .object(message))
        return PushRequest(
            url: endpoints.fcm + "/v1/projects/" + projectID + "/messages:send",
            headers: [("authorization", "Bearer " + accessToken), ("content-type", "application/json; UTF-8")],
            body: JSONWriter.serialize(.object(body)))
    }
}

/// A provider's answer.
public struct HTTPResponse: Sendable, Hashable {
    /// The HTTP status.
    public var status: Int
    /// Header fields, names in lowercase.
    public var headers: [String: String]
    /// The body.
    public var body: [UInt8]
    /// The HTTP version libcurl used (`2` for HTTP/2).
    public var httpVersion: Int

    public init(status: Int, headers: [String: String] = [:], body: [UInt8] = [], httpVersion: Int = 2) {
        self.status = status
        self.headers = headers
        self.body = body
        self.httpVersion = httpVersion
    }
}
