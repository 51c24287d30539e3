// MIRROR of Apple's PushKit, for type-checking Parley's Apple adapters on Linux
// (AppleCheck/README.md). Only what ParleySDKApple uses; each declaration written from the
// page cited above it. Objective-C optional protocol requirements cannot be declared on
// Linux (no Objective-C runtime): they are requirements here with empty default
// implementations in an extension, which an adopter may leave out as on Apple platforms.
// Apple's framework modules export Foundation to their importers; so does the mirror.
@_exported import Foundation

// Follows https://developer.apple.com/documentation/pushkit/pkpushtype
// (`struct PKPushType`, a string-backed `RawRepresentable`; `static let voIP`).
/// A kind of push.
public struct PKPushType: RawRepresentable, Hashable, Sendable {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// VoIP pushes (calls).
    public static let voIP = PKPushType(rawValue: "PKPushTypeVoIP")
}

// Follows https://developer.apple.com/documentation/pushkit/pkpushcredentials
// (`class PKPushCredentials : NSObject`; `var token: Data { get }`, `var type: PKPushType { get }`).
/// The token PushKit registered for a push type.
open class PKPushCredentials: NSObject {
    /// The device token for the push provider.
    open private(set) var token: Data
    /// The push type the token is for.
    open private(set) var type: PKPushType

    /// MIRROR-ONLY: PushKit makes these itself; tests make them to drive the delegate.
    public init(mirrorToken token: Data, type: PKPushType) {
        self.token = token
        self.type = type
    }
}

// Follows https://developer.apple.com/documentation/pushkit/pkpushpayload
// (`class PKPushPayload : NSObject`; `var dictionaryPayload: [AnyHashable : Any] { get }`).
/// An incoming push.
open class PKPushPayload: NSObject {
    /// The push's data.
    open private(set) var dictionaryPayload: [AnyHashable: Any]
    /// The push type.
    open private(set) var type: PKPushType

    /// MIRROR-ONLY: PushKit makes these itself.
    public init(mirrorDictionaryPayload payload: [AnyHashable: Any], type: PKPushType) {
        self.dictionaryPayload = payload
        self.type = type
    }
}

// Follows https://developer.apple.com/documentation/pushkit/pkpushregistry
// (`class PKPushRegistry : NSObject`; `init(queue: DispatchQueue?)`;
// `weak var delegate: (any PKPushRegistryDelegate)? { get set }`;
// `var desiredPushTypes: Set<PKPushType>? { get set }`).
/// Registers for pushes and delivers them to its delegate on its queue.
open class PKPushRegistry: NSObject {
    private let queue: DispatchQueue?
    /// The object that receives tokens and pushes.
    open weak var delegate: (any PKPushRegistryDelegate)?
    /// The push types to register for.
    open var desiredPushTypes: Set<PKPushType>?

    /// A registry calling its delegate on `queue` (the main queue when nil).
    public init(queue: DispatchQueue?) {
        self.queue = queue
        super.init()
    }
}

// Follows https://developer.apple.com/documentation/pushkit/pkpushregistrydelegate
// (`protocol PKPushRegistryDelegate : NSObjectProtocol`): `pushRegistry(_:didUpdate:for:)`
// required; `pushRegistry(_:didReceiveIncomingPushWith:for:completion:)` (completion
// `@escaping @Sendable () -> Void`, iOS 11+) and `pushRegistry(_:didInvalidatePushTokenFor:)`
// optional. The deprecated three-argument `didReceiveIncomingPushWith` is left out.
/// Hears PushKit's tokens and pushes.
public protocol PKPushRegistryDelegate: NSObjectProtocol {
    /// A new token.
    func pushRegistry(_ registry: PKPushRegistry, didUpdate pushCredentials: PKPushCredentials, for type: PKPushType)
    /// An incoming push; `completion` must run once it is handled (for VoIP: once reported to CallKit).
    func pushRegistry(_ registry: PKPushRegistry, didReceiveIncomingPushWith payload: PKPushPayload,
                      for type: PKPushType, completion: @escaping @Sendable () -> Void)
    /// The token is no longer valid.
    func pushRegistry(_ registry: PKPushRegistry, didInvalidatePushTokenFor type: PKPushType)
}

extension PKPushRegistryDelegate {
    // Optional in Objective-C: what PushKit does when the delegate lacks them (nothing
    // for an invalidation; the completion is the caller's to run).
    public func pushRegistry(_ registry: PKPushRegistry, didReceiveIncomingPushWith payload: PKPushPayload,
                             for type: PKPushType, completion: @escaping @Sendable () -> Void) { completion() }
    public func pushRegistry(_ registry: PKPushRegistry, didInvalidatePushTokenFor type: PKPushType) {}
}
