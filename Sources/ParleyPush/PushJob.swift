public import ParleySignaling

/// One device's push token, as a device registered it.
public struct PushTarget: Sendable, Hashable {
    /// The push service.
    public var pushType: SignalingMessage.PushType
    /// The token (APNs: hex; FCM: the registration token).
    public var token: String
    /// The APNs environment (FCM tokens are `production`).
    public var environment: SignalingMessage.PushEnvironment
    /// The app's bundle id (APNs topic `{appID}.voip`) or Android package.
    public var appID: String
    /// The device the token belongs to.
    public var deviceID: String

    public init(pushType: SignalingMessage.PushType, token: String, environment: SignalingMessage.PushEnvironment, appID: String, deviceID: String) {
        self.pushType = pushType
        self.token = token
        self.environment = environment
        self.appID = appID
        self.deviceID = deviceID
    }
}

/// An application's credentials for one provider.
public enum PushProviderCredentials: Sendable {
    case apns(APNsCredentials)
    case fcm(FCMCredentials)
}

/// One push to send: to one token, for one call, with its signed payload.
public struct PushJob: Sendable {
    /// The call it announces (every log line carries it).
    public var callID: String
    /// Where it goes.
    public var target: PushTarget
    /// The application's credentials for `target.pushType`.
    public var credentials: PushProviderCredentials
    /// The signed payload (``PushPayload/signed(pushKey:)``).
    public var payloadJWS: String
    /// No attempt starts at or after this time (ms since the epoch): the call's ring deadline.
    public var deadline: Int64

    public init(callID: String, target: PushTarget, credentials: PushProviderCredentials, payloadJWS: String, deadline: Int64) {
        self.callID = callID
        self.target = target
        self.credentials = credentials
        self.payloadJWS = payloadJWS
        self.deadline = deadline
    }
}

/// What happened to a push, reported by ``PushSender`` as it happens.
public enum PushEvent: Sendable {
    /// Attempt number `attempt` (1-based) is about to leave.
    case attempt(PushJob, attempt: Int)
    /// The provider answered attempt `attempt` (`status` nil: no HTTP answer at all).
    case answer(PushJob, attempt: Int, status: Int?, outcome: PushOutcome)
    /// APNs answered `BadDeviceToken` in the environment the token was registered for
    /// (`from`); the next attempt goes to the other one, `job.target.environment`. If that
    /// works, the token was registered with the wrong environment.
    case environmentSwitched(PushJob, from: SignalingMessage.PushEnvironment)
    /// The push is done; `outcome` is the last answer's (``PushOutcome/tokenGone(reason:)``
    /// means the token should be removed).
    case finished(PushJob, outcome: PushOutcome, attempts: Int)
}
