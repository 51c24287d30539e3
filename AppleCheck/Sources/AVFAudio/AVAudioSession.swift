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
