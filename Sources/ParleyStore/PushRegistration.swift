public import ParleyCallModel

/// A device's push token as stored: what `push.register` gave, plus the `pushKey` the
/// server made for this registration (the key of the payload's HS256 signature).
public struct PushRegistration: Sendable, Hashable {
    public var applicationKey: String
    public var userId: String
    public var deviceId: String
    public var pushType: PushType
    public var token: String
    public var environment: PushEnvironment
    /// The app's bundle id / package name.
    public var appId: String
    /// 32 random bytes, replaced on every registration.
    public var pushKey: [UInt8]
    public var registeredTime: Int64

    public init(
        applicationKey: String, userId: String, deviceId: String, pushType: PushType, token: String,
        environment: PushEnvironment, appId: String, pushKey: [UInt8], registeredTime: Int64
    ) {
        self.applicationKey = applicationKey
        self.userId = userId
        self.deviceId = deviceId
        self.pushType = pushType
        self.token = token
        self.environment = environment
        self.appId = appId
        self.pushKey = pushKey
        self.registeredTime = registeredTime
    }
}

/// An application's stored credentials for one push provider. `settings` is the
/// provider's JSON as `parleyd app push set-apns|set-fcm` stored it (APNs: team id, key
/// id and the .p8 PEM; FCM: the service-account file), read by ParleyPush.
public struct StoredPushCredentials: Sendable, Hashable {
    /// `apns` or `fcm`.
    public enum Provider: String, Sendable, Hashable, CaseIterable { case apns, fcm }

    public var applicationKey: String
    public var provider: Provider
    public var settings: String
    public var updatedTime: Int64

    public init(applicationKey: String, provider: Provider, settings: String, updatedTime: Int64) {
        self.applicationKey = applicationKey
        self.provider = provider
        self.settings = settings
        self.updatedTime = updatedTime
    }
}
