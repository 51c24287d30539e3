#if canImport(WebRTC)
import Foundation
@_spi(ParleyEngines) public import ParleySDKCore
import WebRTC

/// The media engine on Apple platforms: each call's leg is a libwebrtc `RTCPeerConnection`
/// (Google's WebRTC framework, module `WebRTC`, e.g. the stasel/WebRTC package) from one
/// shared `RTCPeerConnectionFactory`, with the device's microphone and speaker.
///
/// Calls capture and play the device only: `ParleyAudioSource.device` or `.silence` (the
/// track disabled), `ParleyAudioSink.device` or `.discard`; tones and WAV files are the
/// Linux engine's. `AppleEngines.make(for:)` puts it together with the URLSession
/// transport and CryptoKit's HMAC.
public final class AppleMediaEngine: ParleyMediaEngine, @unchecked Sendable {
    // @unchecked: the factory is made once under `factoryLock` and libwebrtc's factory is
    // thread-safe; the audio engine is Sendable.
    private let factoryLock = Locked<RTCPeerConnectionFactory?>(nil)
    private let audioEngine: AppleAudioEngine

    /// An engine for an app that reports its calls to CallKit (`usesCallKitAudioSession`,
    /// the default): call audio then runs only between the system's activation and
    /// deactivation of the audio session, which reach the engine through the SDK's CallKit
    /// integration or `ParleyCallClient.didActivate(audioSession:)`. Without CallKit, pass
    /// false: libwebrtc starts its audio as soon as a call has some.
    public init(usesCallKitAudioSession: Bool = true) {
        audioEngine = AppleAudioEngine(usesCallKitAudioSession: usesCallKitAudioSession)
    }

    public var audio: any ParleyAudioEngine { audioEngine }

    /// Initialises libwebrtc's SSL and makes the factory (its threads), off the client's
    /// queues, so the first call does not wait for them.
    public func prepare() { _ = factory }

    public func makeCallMedia(callID: String, localHost: String?, source: ParleyAudioSource,
                              sink: ParleyAudioSink) -> any ParleyCallMedia {
        // `localHost` is not needed: libwebrtc gathers on every interface itself.
        AppleCallMedia(callID: callID, factory: factory, audio: audioEngine, source: source, sink: sink)
    }

    private var factory: RTCPeerConnectionFactory {
        factoryLock.withLock { factory in
            if let factory { return factory }
            _ = RTCInitializeSSL()  // false only if OpenSSL cannot start; the factory then fails its calls
            let made = RTCPeerConnectionFactory()
            factory = made
            return made
        }
    }

    /// libwebrtc's audio session set for a call (play and record, voice chat): what
    /// `ParleyAudioController.configureAudioSessionForCallKitCall()` does.
    public static func configureAudioSessionForCall() {
        AppleAudioEngine.configureAudioSession()
    }
}
#endif
