#if canImport(PushKit)
public import Foundation
public import ParleySDKCore
public import PushKit

/// PushKit for a `ParleyClient`: registers for VoIP pushes, hands the token to the
/// client, and passes each incoming VoIP push to `onIncomingPush` (give it to
/// `ParleySystemCallService.reportIncomingPush(_:completion:)`, which reports the call to
/// CallKit before anything else, as iOS requires). Empty on Linux (no PushKit);
/// type-checked against a PushKit mirror by AppleCheck/ (docs/push-and-callkit.md).
public final class ParleyManagedPush: NSObject, PKPushRegistryDelegate, @unchecked Sendable {
    // @unchecked: set up once in init; PushKit calls back on `queue`.
    private let registry: PKPushRegistry
    private weak var client: ParleyClient?
    private let environment: ParleyPushEnvironment
    private let appId: String
    private let onIncomingPush: @Sendable ([AnyHashable: Any], @escaping @Sendable () -> Void) -> Void

    /// Starts PushKit for VoIP pushes.
    /// - Parameters:
    ///   - environment: this build's `aps-environment` (`.sandbox` for development builds).
    ///   - appId: the bundle id; default `Bundle.main.bundleIdentifier`.
    ///   - onIncomingPush: called with the push's `dictionaryPayload` and PushKit's
    ///     completion, which must run after the call was reported.
    public init(client: ParleyClient, environment: ParleyPushEnvironment, appId: String? = nil,
                queue: DispatchQueue = .main,
                onIncomingPush: @escaping @Sendable ([AnyHashable: Any], @escaping @Sendable () -> Void) -> Void) {
        registry = PKPushRegistry(queue: queue)
        self.client = client
        self.environment = environment
        self.appId = appId ?? Bundle.main.bundleIdentifier ?? ""
        self.onIncomingPush = onIncomingPush
        super.init()
        registry.delegate = self
        registry.desiredPushTypes = [.voIP]
    }

    public func pushRegistry(_ registry: PKPushRegistry, didUpdate pushCredentials: PKPushCredentials, for type: PKPushType) {
        guard type == .voIP else { return }
        try? client?.registerPushNotificationDeviceToken(pushCredentials.token, type: .apnsVoip, environment: environment, appId: appId)
    }

    public func pushRegistry(_ registry: PKPushRegistry, didInvalidatePushTokenFor type: PKPushType) {
        guard type == .voIP else { return }
        client?.unregisterPushNotificationDeviceToken()
    }

    public func pushRegistry(_ registry: PKPushRegistry, didReceiveIncomingPushWith payload: PKPushPayload,
                             for type: PKPushType, completion: @escaping @Sendable () -> Void) {
        // The completion is `@Sendable` as Apple's page declares it, so it goes to the app's
        // closure as it is.
        guard type == .voIP else { return completion() }
        onIncomingPush(payload.dictionaryPayload, completion)
    }
}
#endif
