/// The push service a device is woken through.
public enum ParleyPushType: String, Sendable, Hashable, CaseIterable, Codable {
    /// APNs VoIP pushes through PushKit (iOS). The token is the PushKit token, sent in hex.
    case apnsVoip
    /// Firebase Cloud Messaging data messages (Android, or any FCM client).
    case fcm
}

/// The APNs environment a token belongs to; FCM tokens are always `.production`.
public enum ParleyPushEnvironment: String, Sendable, Hashable, CaseIterable, Codable {
    /// Development builds (the app's `aps-environment` entitlement is `development`).
    case sandbox
    /// App Store, TestFlight and ad-hoc builds.
    case production
}
