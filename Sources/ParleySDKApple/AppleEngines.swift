#if canImport(WebRTC) && canImport(CryptoKit)
import Foundation
public import ParleySDKCore

/// The SDK's engines on Apple platforms: the `URLSessionWebSocketTask` signaling transport,
/// the libwebrtc media engine and CryptoKit's HMAC.
public enum AppleEngines {
    /// Engines for `endpoint`. TLS for `https://` is the system's (its trust store, ATS).
    /// - Parameter usesCallKitAudioSession: see `AppleMediaEngine.init(usesCallKitAudioSession:)`.
    public static func make(for endpoint: ParleyServerEndpoint, usesCallKitAudioSession: Bool = true) -> ParleyEngines {
        ParleyEngines(transport: URLSessionSignalingTransportFactory(),
                      media: AppleMediaEngine(usesCallKitAudioSession: usesCallKitAudioSession),
                      hmacSHA256: AppleHMAC.sha256)
    }
}
#endif
