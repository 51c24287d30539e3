/// What a push's payload says, from `ParleyClient.queryPushNotificationPayload(_:)` or
/// `relayPushNotification(withUserInfo:)`.
public struct ParleyNotificationResult: Sendable, Hashable {
    /// The payload is a Parley push (it has a `parley` member holding a JWS).
    public let isCall: Bool
    /// The payload is signed with this device's current push key, names this application
    /// and device, and has not expired. A forged, foreign or stale payload is not valid.
    public let isValid: Bool
    /// The call the push announces: for valid payloads, and for expired ones whose
    /// signature is good (`isTimedOut` is then true, so the app can show a missed call).
    public let callResult: ParleyCallNotificationResult?

    /// A result; the SDK makes these, tests and adapters may too.
    public init(isCall: Bool, isValid: Bool, callResult: ParleyCallNotificationResult?) {
        self.isCall = isCall
        self.isValid = isValid
        self.callResult = callResult
    }
}

/// The call a push announces.
public struct ParleyCallNotificationResult: Sendable, Hashable {
    /// The call's id (a lower-case UUID), the same the incoming `ParleyCall` will have.
    public let callId: String
    /// The caller: a user id, or what `remoteKind` says (the conference id of a room that
    /// calls this user in).
    public let remoteUserId: String
    /// What the caller is: an app user, or a conference room calling this user in (a
    /// conference callout placed by the application's backend).
    public let remoteKind: ParleyCallRemoteKind
    /// Whether the caller offers video.
    public let isVideoOffered: Bool
    /// The push's ring time is over (`exp` has passed): the call has most likely ended.
    public let isTimedOut: Bool
    /// The caller's custom headers.
    public let headers: [String: String]
    /// The name the caller set with `setPushNotificationDisplayName(_:)`, if any: what the
    /// system call screen shows (the built-in CallKit integration uses it as
    /// `localizedCallerName`).
    public let displayName: String?

    /// A call result; the SDK makes these, tests and adapters may too.
    public init(
        callId: String, remoteUserId: String, isVideoOffered: Bool, isTimedOut: Bool, headers: [String: String],
        displayName: String? = nil, remoteKind: ParleyCallRemoteKind = .user
    ) {
        self.callId = callId
        self.remoteUserId = remoteUserId
        self.remoteKind = remoteKind
        self.isVideoOffered = isVideoOffered
        self.isTimedOut = isTimedOut
        self.headers = headers
        self.displayName = displayName
    }
}
