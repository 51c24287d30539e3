#if canImport(AVFAudio) && !os(macOS)
public import AVFAudio
public import ParleySDKCore

// The Sinch guide's calls for an app that runs its own CXProvider (not the SDK's CallKit
// integration, which makes them itself): CallKit's didActivate/didDeactivate of the audio
// session go to the client, which starts or stops the call audio (libwebrtc's audio unit
// with the Apple media engine).

extension ParleyCallClient {
    /// CallKit activated the audio session (`provider(_:didActivate:)`): call audio may run.
    public func didActivate(audioSession: AVAudioSession) {
        setSystemAudioSessionActive(true)
    }

    /// CallKit deactivated the audio session (`provider(_:didDeactivate:)`): call audio stops.
    public func didDeactivate(audioSession: AVAudioSession) {
        setSystemAudioSessionActive(false)
    }
}

extension ParleyAudioController {
    /// Sets the audio session up for a call CallKit will activate: play and record, voice
    /// chat. Call it in `provider(_:perform:)` for a start or answer action, before
    /// fulfilling it. With the Apple media engine this configures libwebrtc's session;
    /// without libwebrtc it does nothing (the media engine configures its own).
    public func configureAudioSessionForCallKitCall() {
        #if canImport(WebRTC)
        AppleMediaEngine.configureAudioSessionForCall()
        #endif
    }
}
#endif
