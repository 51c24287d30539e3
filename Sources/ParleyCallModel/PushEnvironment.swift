/// Which APNs environment issued a token (`push.register`'s `environment`; the protocol
/// spells it `SignalingMessage.PushEnvironment`).
public enum PushEnvironment: String, Sendable, Hashable, CaseIterable, Codable {
    /// Development builds (api.sandbox APNs host).
    case sandbox
    /// App Store, TestFlight and ad-hoc builds; also every FCM token.
    case production
}
