/// A push service that wakes a device which has no connection, so an incoming call can
/// reach it (`push.register`'s `pushType`; the protocol spells it `SignalingMessage.PushType`).
public enum PushType: String, Sendable, Hashable, CaseIterable, Codable {
    /// Apple Push Notification service, VoIP pushes (PushKit).
    case apnsVoip
    /// Firebase Cloud Messaging, high-priority data messages.
    case fcm
}
