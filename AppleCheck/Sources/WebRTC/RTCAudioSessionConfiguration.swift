public import AVFAudio
import MirrorSupport

// Follows sdk/objc/components/audio/RTCAudioSessionConfiguration.h: read-write
// `category` and `mode` (NSString), `categoryOptions` (AVAudioSessionCategoryOptions),
// `+webRTCConfiguration` (Swift: `webRTC()`) and `+setWebRTCConfiguration:`
// (`setWebRTC(_:)`). The mirror carries category, mode and options only.
/// Values an audio session is configured with.
open class RTCAudioSessionConfiguration: NSObject {
    /// The category's raw value.
    open var category: String = AVAudioSession.Category.playAndRecord.rawValue
    /// The category options.
    open var categoryOptions: AVAudioSession.CategoryOptions = [.allowBluetooth]
    /// The mode's raw value.
    open var mode: String = AVAudioSession.Mode.voiceChat.rawValue

    /// libwebrtc's defaults: play and record, voice chat, Bluetooth allowed.
    public override init() { super.init() }

    private static let webRTCDefault = MirrorLocked(RTCAudioSessionConfiguration())

    /// The configuration libwebrtc applies (its defaults unless replaced). The header
    /// does not say whether this is a copy; the mirror returns the stored object, and the
    /// engine hands its changes back with `setWebRTC(_:)` either way.
    open class func webRTC() -> RTCAudioSessionConfiguration { webRTCDefault.current }

    /// Replaces the configuration libwebrtc applies.
    open class func setWebRTC(_ configuration: RTCAudioSessionConfiguration) {
        webRTCDefault.withLock { $0 = configuration }
    }
}
