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

// Follows https://developer.apple.com/documentation/avfaudio/avaudiosession/port,
// .../routechangereason, .../avaudiosessionroutedescription (`inputs`, `outputs`) and
// .../avaudiosessionportdescription (`portType`): `Port` is a string-backed struct,
// `RouteChangeReason` an enum of UInt, the descriptions NSObject classes with read-only
// properties. Raw values are the mirror's. The mirror lets a test build a route
// (`mirrorOutputs:`), which the real classes do not allow.
extension AVAudioSession {
    /// A kind of audio port.
    public struct Port: RawRepresentable, Hashable, Sendable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        /// The loudspeaker.
        public static let builtInSpeaker = Port(rawValue: "Speaker")
        /// The receiver at the ear.
        public static let builtInReceiver = Port(rawValue: "Receiver")
        /// Wired headphones.
        public static let headphones = Port(rawValue: "Headphones")
        /// A Bluetooth hands-free device.
        public static let bluetoothHFP = Port(rawValue: "BluetoothHFP")
    }

    /// Why the route changed.
    public enum RouteChangeReason: UInt, Sendable {
        case unknown = 0
        case newDeviceAvailable = 1
        case oldDeviceUnavailable = 2
        case categoryChange = 3
        case override = 4
        case wakeFromSleep = 6
        case noSuitableRouteForCategory = 7
        case routeConfigurationChange = 8
    }
}

/// One port of a route.
open class AVAudioSessionPortDescription: NSObject {
    /// Its kind.
    open private(set) var portType: AVAudioSession.Port
    /// MIRROR-ONLY: a port of this kind (the system makes them on a device).
    public init(mirrorPortType portType: AVAudioSession.Port) { self.portType = portType }
}

/// The ports audio goes in and out through.
open class AVAudioSessionRouteDescription: NSObject {
    /// The input ports.
    open private(set) var inputs: [AVAudioSessionPortDescription]
    /// The output ports.
    open private(set) var outputs: [AVAudioSessionPortDescription]
    /// MIRROR-ONLY: a route with these outputs (the system makes them on a device).
    public init(mirrorOutputs outputs: [AVAudioSession.Port]) {
        inputs = []
        self.outputs = outputs.map { AVAudioSessionPortDescription(mirrorPortType: $0) }
    }
}
