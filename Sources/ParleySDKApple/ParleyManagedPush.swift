#if canImport(PushKit)
public import Foundation
@_spi(ParleyEngines) public import ParleySDKCore
public import PushKit

/// Hears the VoIP pushes a `ParleyManagedPush` receives, on its queue.
public protocol ParleyManagedPushDelegate: AnyObject {
    /// A VoIP push arrived. Report it to CallKit before returning (iOS ends an app that
    /// does not, and stops delivering its VoIP pushes): with the built-in integration,
    /// `ParleySystemCallService.reportIncomingPush(_:completion:)` reports first, then
    /// relays; `ParleyManagedPush.queryPushNotificationPayload(_:)` reads the push when
    /// no client exists yet. PushKit's completion runs when this method returns.
    func managedPush(_ managedPush: ParleyManagedPush, didReceiveIncomingPushWithPayload payload: [AnyHashable: Any],
                     for type: String)
}

/// PushKit, managed: create it early in the app's life (before any client), from the
/// build's APS environment alone. It asks PushKit for the desired push type, hands each
/// token the system gives to every client that called `enableManagedPushNotifications()`
/// (now or later; an invalidated token unregisters them), and passes each VoIP push to
/// its `delegate`. Empty on Linux (no PushKit); type-checked against a PushKit mirror by
/// AppleCheck/ (docs/push-and-callkit.md).
public final class ParleyManagedPush: NSObject, PKPushRegistryDelegate, @unchecked Sendable {
    // @unchecked: set up once in init; PushKit calls back on `queue`; `delegate` is behind
    // its lock.

    /// The push type for VoIP pushes (PushKit's `PKPushType.voIP`), for `setDesiredPushType`.
    public static let typeVoIP: String = PKPushType.voIP.rawValue

    private let registry: PKPushRegistry
    private let environment: ParleyPushEnvironment
    private let appId: String
    private let tokens: ManagedPushTokens
    private let delegateSlot = Locked(WeakReference())

    /// Hears incoming pushes.
    public weak var delegate: (any ParleyManagedPushDelegate)? {
        get { delegateSlot.current.object as? any ParleyManagedPushDelegate }
        set { delegateSlot.withLock { $0.object = newValue } }
    }

    /// Starts PushKit on `queue`; nothing is requested until `setDesiredPushType(_:)`.
    /// - Parameters:
    ///   - apsEnvironment: this build's `aps-environment` entitlement (`.sandbox` for
    ///     development builds, `.production` for TestFlight and the App Store).
    ///   - appId: the bundle id the server's APNs topic is made from; default
    ///     `Bundle.main.bundleIdentifier`.
    public convenience init(apsEnvironment: ParleyPushEnvironment, appId: String? = nil, queue: DispatchQueue = .main) {
        self.init(apsEnvironment: apsEnvironment, appId: appId, queue: queue, tokens: .shared)
    }

    init(apsEnvironment: ParleyPushEnvironment, appId: String?, queue: DispatchQueue, tokens: ManagedPushTokens) {
        registry = PKPushRegistry(queue: queue)
        environment = apsEnvironment
        self.appId = appId ?? Bundle.main.bundleIdentifier ?? ""
        self.tokens = tokens
        super.init()
        registry.delegate = self
    }

    /// Asks PushKit for pushes of `type`: `ParleyManagedPush.typeVoIP` (the only type a
    /// Parley server sends to Apple devices).
    public func setDesiredPushType(_ type: String) {
        registry.desiredPushTypes = [PKPushType(rawValue: type)]
    }

    /// Reads and verifies a push's payload before any client exists (from the delegate
    /// of an app PushKit just launched): the device it names, its stored registration,
    /// CryptoKit's HMAC. `isCall` without `isValid` means the push cannot be verified
    /// here (no registration for that device, forged, expired): report it to CallKit all
    /// the same, then end it.
    #if canImport(CryptoKit)
    public static func queryPushNotificationPayload(_ payload: [AnyHashable: Any]) -> ParleyNotificationResult {
        ParleyClient.queryPushNotificationPayload(payload, hmacSHA256: AppleHMAC.sha256)
    }
    #endif

    public func pushRegistry(_ registry: PKPushRegistry, didUpdate pushCredentials: PKPushCredentials, for type: PKPushType) {
        guard type == .voIP else { return }
        let hex = pushCredentials.token.map { String(format: "%02x", $0) }.joined()
        tokens.update(.init(type: .apnsVoip, token: hex, environment: environment, appId: appId))
    }

    public func pushRegistry(_ registry: PKPushRegistry, didInvalidatePushTokenFor type: PKPushType) {
        guard type == .voIP else { return }
        tokens.update(nil)
    }

    public func pushRegistry(_ registry: PKPushRegistry, didReceiveIncomingPushWith payload: PKPushPayload,
                             for type: PKPushType, completion: @escaping @Sendable () -> Void) {
        // The delegate reports to CallKit before it returns; PushKit's completion after.
        defer { completion() }
        delegate?.managedPush(self, didReceiveIncomingPushWithPayload: payload.dictionaryPayload, for: type.rawValue)
    }
}
#endif
