public import Foundation

extension ParleyClient {
    /// Hands the push service's device token to the server, so calls reach this device
    /// when it is not connected. Sent once the client is started (queued until then);
    /// an unchanged token already registered is not sent again (re-registering would
    /// replace the push key under pushes already on their way). The outcome reaches
    /// `pushDelegate`.
    /// - Parameters:
    ///   - token: the PushKit token (sent as lower-case hex) or an FCM token's UTF-8 bytes.
    ///   - type: `.apnsVoip` or `.fcm`.
    ///   - environment: the APNs environment of this build; FCM is always `.production`.
    ///   - appId: the bundle id or package name (1-255 of `A-Z a-z 0-9 - _ .`).
    /// - Throws: `ParleyClientError` `invalid_argument` for an empty or oversized token or a bad app id.
    public func registerPushNotificationDeviceToken(_ token: Data, type: ParleyPushType,
                                                    environment: ParleyPushEnvironment = .production,
                                                    appId: String) throws(ParleyClientError) {
        let text = type == .apnsVoip ? token.map { String(format: "%02x", $0) }.joined() : String(decoding: token, as: UTF8.self)
        try registerPushNotificationDeviceToken(text, type: type, environment: environment, appId: appId)
    }

    /// Like `registerPushNotificationDeviceToken(_:type:environment:appId:)` with the token
    /// as text (APNs: hex; FCM: the registration token).
    public func registerPushNotificationDeviceToken(_ token: String, type: ParleyPushType,
                                                    environment: ParleyPushEnvironment = .production,
                                                    appId: String) throws(ParleyClientError) {
        let bytes = Array(token.utf8)
        guard !bytes.isEmpty, bytes.count <= 1024, bytes.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw ParleyClientError(code: "invalid_argument", message: "push token must be 1-1024 bytes of printable ASCII")
        }
        let appBytes = Array(appId.utf8)
        guard !appBytes.isEmpty, appBytes.count <= 255, appBytes.allSatisfy({
            (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) || [0x2D, 0x5F, 0x2E].contains($0)
        }) else {
            throw ParleyClientError(code: "invalid_argument", message: "app id must be 1-255 of A-Z a-z 0-9 - _ .")
        }
        let device = PushDevice(pushType: type, token: token, environment: type == .fcm ? .production : environment, appID: appId)
        input { core, now in core.registerPush(device, now: now) }
    }

    /// Lets the SDK manage this client's push registration: the VoIP token the app's
    /// `ParleyManagedPush` gets from PushKit (before or after this client exists) is
    /// registered with the server as `registerPushNotificationDeviceToken` would, again
    /// whenever the system changes it, and an invalidated token is unregistered. Calling
    /// it twice has no further effect. Without a managed push (Linux, tools) nothing
    /// arrives to register; `registerPushNotificationDeviceToken` still works by hand.
    public func enableManagedPushNotifications() {
        enableManagedPushNotifications(from: .shared)
    }

    /// `enableManagedPushNotifications()` over another hub (tests).
    func enableManagedPushNotifications(from hub: ManagedPushTokens) {
        let first = managedPushObservation.withLock { observation -> Bool in
            guard observation == nil else { return false }
            observation = (hub, -1)
            return true
        }
        guard first else { return }
        let id = hub.observe { [weak self] token in
            guard let self else { return }
            if let token {
                try? registerPushNotificationDeviceToken(token.token, type: token.type, environment: token.environment, appId: token.appId)
            } else {
                unregisterPushNotificationDeviceToken()
            }
        }
        managedPushObservation.withLock { $0 = (hub, id) }
    }

    /// Stops the server waking this device (on logout): forgets the token and push key
    /// here at once and sends `push.unregister` once a session is open (within 30 s).
    /// `pushDelegate` hears the outcome. The client needs to be started (or starting):
    /// otherwise the request fails at once with `not_started`. The request is carried out
    /// even if the app drops the client right after this call, and a
    /// `terminateGracefully()` that follows waits for its answer before closing.
    public func unregisterPushNotificationDeviceToken() {
        input { core, now in core.unregisterPush(now: now) }
    }

    /// Logs out: unregisters the push token, then hangs up every call and closes, once
    /// the server has answered the unregister (or it failed, which `pushDelegate` hears).
    /// Safe to drop the client right after: it stays alive until then.
    public func logOut() {
        input { core, now in core.unregisterPush(now: now) + core.terminate(now: now) }
    }

    /// Reads a push's data (PushKit's `dictionaryPayload`, FCM's `data`) and verifies it
    /// with the stored push key: signature, application, device, expiry. Needs no
    /// connection; safe on any thread.
    public func queryPushNotificationPayload(_ payload: [AnyHashable: Any]) -> ParleyNotificationResult {
        pushVerifier.verify(payload, registration: pushRegistrationStore.load(), nowMilliseconds: Self.now().unixMilliseconds).result
    }

    /// `queryPushNotificationPayload(_:)` before any client exists (a PushKit delegate in
    /// an app launched by the push): the device the push names is looked up in
    /// `store(deviceId)` (default: the file store a client with that device id uses) and
    /// the push verified with that registration's key, with the platform's HMAC. Without
    /// a registration for that device the push is a call but not valid, and nothing from
    /// its unverified claims is returned. Platforms wrap this with their HMAC
    /// (`ParleyManagedPush.queryPushNotificationPayload(_:)` on Apple platforms,
    /// `ParleyClient.queryPushNotificationPayload(_:)` on Linux).
    @_spi(ParleyEngines)
    public static func queryPushNotificationPayload(
        _ payload: [AnyHashable: Any],
        hmacSHA256: @escaping @Sendable (_ key: [UInt8], _ message: [UInt8]) -> [UInt8]?,
        store: (String) -> any ParleyPushRegistrationStore = { FilePushRegistrationStore.defaultStore(deviceId: $0) }
    ) -> ParleyNotificationResult {
        queryPushNotificationPayload(payload, hmacSHA256: hmacSHA256, store: store, nowMilliseconds: now().unixMilliseconds)
    }

    /// The same at a given time (tests).
    static func queryPushNotificationPayload(
        _ payload: [AnyHashable: Any], hmacSHA256: @escaping @Sendable ([UInt8], [UInt8]) -> [UInt8]?,
        store: (String) -> any ParleyPushRegistrationStore, nowMilliseconds: Int64
    ) -> ParleyNotificationResult {
        let notACall = ParleyNotificationResult(isCall: false, isValid: false, callResult: nil)
        guard let token = PushPayloadVerifier.token(in: payload) else { return notACall }
        guard let addressed = PushPayloadVerifier.addressee(of: token) else {
            return ParleyNotificationResult(isCall: true, isValid: false, callResult: nil)
        }
        let registration = store(addressed.deviceID).load()
        let verifier = PushPayloadVerifier(applicationKey: addressed.applicationKey, userID: registration?.userId ?? "",
                                           deviceID: addressed.deviceID, hmacSHA256: hmacSHA256)
        return verifier.verify(token: token, registration: registration, nowMilliseconds: nowMilliseconds).result
    }

    /// Verifies a call push and hands it to the server (`push.relay`, sent once the
    /// client is connected; call `start()` if it is not). The call then arrives through
    /// `client(_:didReceiveIncomingCall:)`; if it is already over (canceled while the
    /// push was out) it arrives and ends at once with the server's cause, and a relay the
    /// server refuses ends it with `.error` (`push_payload_invalid`).
    /// - Returns: the payload's result, or `ParleyClientError` `push_payload_invalid`
    ///   (not a Parley push, forged, foreign or expired).
    public func relayPushNotification(withUserInfo userInfo: [AnyHashable: Any]) -> Result<ParleyNotificationResult, any Error> {
        let verdict = pushVerifier.verify(userInfo, registration: pushRegistrationStore.load(), nowMilliseconds: Self.now().unixMilliseconds)
        guard verdict.result.isValid, let call = verdict.result.callResult, let token = verdict.token else {
            return .failure(ParleyClientError(code: "push_payload_invalid", message: verdict.problem ?? "not a valid Parley call push"))
        }
        input { core, now in core.relayPush(call, payload: token, now: now) }
        return .success(verdict.result)
    }

    /// Declines the call a push announced, for when the system refused to show it (Do Not
    /// Disturb, a blocked caller, another call in progress): verifies the push, relays it
    /// (`push.relay`, once connected; call `start()` if the client is not) and declines
    /// the call (`call.decline`) the moment the server hands it over, so the caller's call
    /// ends `denied` at once instead of ringing until the ring timeout. The call is not
    /// delivered to `client(_:didReceiveIncomingCall:)`; one already delivered is hung up
    /// (declined) and ends as usual. The protocol's decline ends the call on every device
    /// of this user.
    /// - Returns: the payload's result, or `ParleyClientError` `push_payload_invalid`
    ///   (not a Parley push, forged, foreign or expired: nothing to decline).
    public func declinePushNotification(withUserInfo userInfo: [AnyHashable: Any]) -> Result<ParleyNotificationResult, any Error> {
        let verdict = pushVerifier.verify(userInfo, registration: pushRegistrationStore.load(), nowMilliseconds: Self.now().unixMilliseconds)
        guard verdict.result.isValid, let call = verdict.result.callResult, let token = verdict.token else {
            return .failure(ParleyClientError(code: "push_payload_invalid", message: verdict.problem ?? "not a valid Parley call push"))
        }
        input { core, now in core.declinePush(call, payload: token, now: now) }
        return .success(verdict.result)
    }
}
