// MIRROR of Apple's AVFAudio, for type-checking Parley's Apple adapters on Linux
// (AppleCheck/README.md). Only what ParleySDKApple and the CallKit mirror use; written from
// Apple's documentation, not from the SDK's headers.
// Apple's framework modules export Foundation to their importers; so does the mirror.
@_exported import Foundation

// Follows https://developer.apple.com/documentation/avfaudio/avaudiosession
// (`class AVAudioSession : NSObject`; `class func sharedInstance() -> AVAudioSession`).
// Uncertain: whether the Swift 6 SDK marks it `Sendable`. The mirror does not, so an
// adapter that sends it across threads fails here, which is the stricter assumption.
/// The app's audio session. The mirror has no state: CallKit hands it to
/// `provider(_:didActivate:)`, and the adapters only take that as the signal.
open class AVAudioSession: NSObject {
    nonisolated(unsafe) private static let shared = AVAudioSession()

    /// The shared session.
    open class func sharedInstance() -> AVAudioSession { shared }
}

// Follows https://developer.apple.com/documentation/avfaudio/avaudiosession/category,
// .../mode, .../categoryoptions and .../portoverride: `Category` and `Mode` are
// string-backed structs (`RawRepresentable`, `Hashable`, `Sendable`), `CategoryOptions`
// an `OptionSet` of UInt, `PortOverride` an enum of UInt (`none`, `speaker`). Raw values
// are the mirror's; only the names are Apple's. Used by libwebrtc's audio session
// configuration (the WebRTC mirror) and the Apple media engine.
extension AVAudioSession {
    /// An audio session category.
    public struct Category: RawRepresentable, Hashable, Sendable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        /// Recording and playback at once, as a call needs.
        public static let playAndRecord = Category(rawValue: "AVAudioSessionCategoryPlayAndRecord")
        /// Playback only.
        public static let playback = Category(rawValue: "AVAudioSessionCategoryPlayback")
    }

    /// An audio session mode.
    public struct Mode: RawRepresentable, Hashable, Sendable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        /// Two-way voice, with the system's echo cancellation tuned for it.
        public static let voiceChat = Mode(rawValue: "AVAudioSessionModeVoiceChat")
        /// The default mode.
        public static let `default` = Mode(rawValue: "AVAudioSessionModeDefault")
    }

    /// Options of a category.
    public struct CategoryOptions: OptionSet, Sendable {
        public let rawValue: UInt
        public init(rawValue: UInt) { self.rawValue = rawValue }
        /// Bluetooth hands-free devices as inputs and outputs.
        public static let allowBluetooth = CategoryOptions(rawValue: 0x4)
        /// The loudspeaker rather than the receiver when no other route is chosen.
        public static let defaultToSpeaker = CategoryOptions(rawValue: 0x8)
    }

    /// An override of the output route.
    public enum PortOverride: UInt, Sendable {
        /// The category's route.
        case none = 0
        /// The built-in loudspeaker.
        case speaker = 0x73706B72
    }
}
