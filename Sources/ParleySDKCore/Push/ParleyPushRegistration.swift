/// A push token the server accepted for this device, with the key it signs pushes with.
///
/// Kept by a `ParleyPushRegistrationStore` across launches: an app woken by a VoIP push
/// has no connection yet, and verifies the push with `pushKey` alone.
public struct ParleyPushRegistration: Sendable, Hashable, Codable {
    /// The push service.
    public var pushType: ParleyPushType
    /// The token as sent to the server (APNs: lower-case hex).
    public var token: String
    /// The APNs environment (`.production` for FCM).
    public var environment: ParleyPushEnvironment
    /// The bundle id or package name (the APNs topic is `{appId}.voip`).
    public var appId: String
    /// The server's key for this registration: base64url of 32 bytes, replaced on every
    /// registration. Secret: it is what makes a push's signature mean something.
    public var pushKey: String
    /// The user and device it was registered for; another user's pushes are not ours.
    public var userId: String
    /// The device id the client signs in with.
    public var deviceId: String

    /// A registration.
    public init(pushType: ParleyPushType, token: String, environment: ParleyPushEnvironment, appId: String,
                pushKey: String, userId: String, deviceId: String) {
        self.pushType = pushType
        self.token = token
        self.environment = environment
        self.appId = appId
        self.pushKey = pushKey
        self.userId = userId
        self.deviceId = deviceId
    }
}
