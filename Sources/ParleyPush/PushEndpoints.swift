/// The providers' base URLs, configurable so tests and benchmarks talk to the local
/// emulators (`scripts/push-emulator/`). No trailing slash.
///
/// `https://` URLs negotiate HTTP/2 through TLS ALPN; `http://` URLs speak HTTP/2 in the
/// clear with prior knowledge (h2c), which is how the emulators listen.
public struct PushEndpoints: Sendable, Hashable {
    /// APNs for App Store, TestFlight and ad-hoc builds.
    public var apnsProduction: String
    /// APNs for development builds.
    public var apnsDevelopment: String
    /// FCM HTTP v1.
    public var fcm: String

    public init(apnsProduction: String, apnsDevelopment: String, fcm: String) {
        self.apnsProduction = apnsProduction
        self.apnsDevelopment = apnsDevelopment
        self.fcm = fcm
    }

    /// The real providers.
    public static let providers = PushEndpoints(
        apnsProduction: "https://api.push.apple.com", apnsDevelopment: "https://api.sandbox.push.apple.com",
        fcm: "https://fcm.googleapis.com")

    /// Every provider at one base URL (an emulator that serves both protocols).
    public static func emulator(_ base: String) -> PushEndpoints {
        PushEndpoints(apnsProduction: base, apnsDevelopment: base, fcm: base)
    }
}
