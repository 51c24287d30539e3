import Dispatch
import Foundation
import ParleyCallCore
import ParleyCrypto
import ParleyPush
import ParleySignaling
import ParleyStore
import ParleyWireCore
import Synchronization

/// The server's push side (docs/push.md): push token registration, sending a call's
/// pushes, and checking relayed payloads. Store work runs on a queue of its own, pushes
/// on a `PushSender` thread; every answer hops back to the engine's loop through
/// `deliver`. Every attempt and answer is logged with `call=<id>` and recorded on the
/// call's timeline (`call_events`, shown by `GET /v1/calls/{id}`).
final class PushCoordinator: Sendable {
    private let store: StoreQueue
    private let log: ServerLog
    private let sender: PushSender
    private let queue = DispatchQueue(label: "parley.push")
    /// Runs a closure on the engine's loop.
    private let deliver: @Sendable (@escaping @Sendable () -> Void) -> Void
    /// Parsed credentials by their stored settings, so a .p8 or service account is read once.
    private let parsed = Mutex<[String: PushProviderCredentials]>([:])
    /// Called on the loop with a user whose push devices changed, and the new set.
    private let pushDevicesChanged: @Sendable (AppUser, Set<String>) -> Void
    /// Replaces every FCM service account's `token_uri` when set (ServerConfiguration).
    private let fcmTokenURL: String?

    /// - Parameter makeSender: builds the push sender (the composition root chose it:
    ///   `ServerComponents.pushSender`), given the function its events go to.
    init(configuration: ServerConfiguration, store: StoreQueue, log: ServerLog, makeSender: PushSenderFactory,
         deliver: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void,
         pushDevicesChanged: @escaping @Sendable (AppUser, Set<String>) -> Void) throws(PushError) {
        self.store = store
        self.log = log
        self.deliver = deliver
        self.pushDevicesChanged = pushDevicesChanged
        fcmTokenURL = configuration.pushFCMTokenURL
        let removal = TokenRemoval()
        sender = try makeSender { event in removal.handle(event) }
        removal.owner.withLock { $0.value = self }
    }

    func stop() { sender.stop() }

    /// Loads every device with a push token, for presence at start.
    func loadPushDevices(_ done: @escaping @Sendable ([AppUser: Set<String>]) -> Void) {
        let store = self.store
        queue.async { [deliver, log] in
            var devices: [AppUser: Set<String>] = [:]
            do {
                for row in try store.performAndWait({ (store) throws(StoreError) in try store.pushDevices() }) {
                    devices[AppUser(applicationKey: row.applicationKey, userID: row.userId), default: []].insert(row.deviceId)
                }
            } catch {
                log.error("push.load.failed", ["error": "\(error)"])
            }
            let loaded = devices
            deliver { done(loaded) }
        }
    }

    // MARK: Registration

    /// Stores a `push.register` with a fresh push key; `done` gets the key (base64url), or
    /// nil when it could not be stored (logged), on the loop.
    func register(_ request: SignalingMessage.PushRegister, device: Device, done: @escaping @Sendable (String?) -> Void) {
        let store = self.store
        queue.async { [self] in
            guard let key = try? SecureRandom.bytes(32) else {
                log.error("push.register.failed", ["device": device.description, "error": "no random bytes for the push key"])
                deliver { done(nil) }
                return
            }
            let result = Result { () throws(StoreError) -> (String, Set<String>) in
                let registration = PushRegistration(
                    applicationKey: device.user.applicationKey, userId: device.user.userID, deviceId: device.deviceID,
                    pushType: request.pushType, token: request.token,
                    environment: request.pushType == .fcm ? .production : request.environment, appId: request.appID,
                    pushKey: key, registeredTime: ServerClock.now().unixMilliseconds)
                let devices = try store.performAndWait { (store) throws(StoreError) -> Set<String> in
                    try store.registerPushToken(registration)
                    return Set(try store.pushRegistrations(applicationKey: device.user.applicationKey, userId: device.user.userID).map(\.deviceId))
                }
                return (Base64.encodeURL(key), devices)
            }
            if case .failure(let error) = result {
                log.error("push.register.failed", ["device": device.description, "error": error.description])
            } else {
                log.info("push.register", ["device": device.description, "type": request.pushType.rawValue, "env": request.environment.rawValue])
            }
            deliver { [pushDevicesChanged] in
                if case .success(let (_, devices)) = result { pushDevicesChanged(device.user, devices) }
                done(try? result.get().0)
            }
        }
    }

    /// Removes a device's tokens (`push.unregister`).
    func unregister(device: Device, token: String?, done: @escaping @Sendable (Result<Int, StoreError>) -> Void) {
        let store = self.store
        queue.async { [self] in
            let result = Result { () throws(StoreError) -> (Int, Set<String>) in
                try store.performAndWait { (store) throws(StoreError) -> (Int, Set<String>) in
                    let removed = try store.unregisterPushTokens(applicationKey: device.user.applicationKey, deviceId: device.deviceID, token: token)
                    return (removed, Set(try store.pushRegistrations(applicationKey: device.user.applicationKey, userId: device.user.userID).map(\.deviceId)))
                }
            }
            log.info("push.unregister", ["device": device.description, "removed": String((try? result.get().0) ?? 0)])
            deliver { [pushDevicesChanged] in
                if case .success(let (_, devices)) = result { pushDevicesChanged(device.user, devices) }
                done(result.map(\.0))
            }
        }
    }

    // MARK: Sending

    /// Sends the pushes of `instruction`: one per registration of each device, its
    /// payload signed with that registration's key.
    func send(_ instruction: PushInstruction) {
        let store = self.store
        queue.async { [self] in
            let callID = instruction.callID
            guard let device = instruction.devices.first else { return }
            let appKey = device.user.applicationKey
            let loaded = Result { () throws(StoreError) -> ([PushRegistration], [StoredPushCredentials]) in
                try store.performAndWait { (store) throws(StoreError) in
                    (try store.pushRegistrations(applicationKey: appKey, userId: device.user.userID), try store.pushCredentials(applicationKey: appKey))
                }
            }
            guard case .success(let (registrations, stored)) = loaded else {
                log.error("push.failed", ["call": callID, "reason": "store read failed"])
                return
            }
            let wanted = Set(instruction.devices.map(\.deviceID))
            for registration in registrations where wanted.contains(registration.deviceId) {
                let provider: StoredPushCredentials.Provider = registration.pushType == .fcm ? .fcm : .apns
                guard let settings = stored.first(where: { $0.provider == provider }) else {
                    log.warning("push.skipped", ["call": callID, "device": registration.deviceId, "type": registration.pushType.rawValue,
                                                 "reason": "application has no \(provider.rawValue) credentials"])
                    continue
                }
                let credentials: PushProviderCredentials
                do { credentials = try parse(settings) } catch {
                    log.error("push.skipped", ["call": callID, "device": registration.deviceId, "reason": "\(error)"])
                    continue
                }
                let payload = PushPayload(
                    callID: callID, appKey: appKey, deviceID: registration.deviceId, from: instruction.from,
                    video: instruction.video, headers: instruction.headers, issuedAt: instruction.issuedTime, expiresAt: instruction.expiresTime,
                    callerDisplayName: instruction.callerDisplayName)
                let jws: String
                do { jws = try payload.signed(pushKey: registration.pushKey) } catch {
                    log.error("push.skipped", ["call": callID, "device": registration.deviceId, "reason": "\(error)"])
                    continue
                }
                let target = PushTarget(pushType: registration.pushType, token: registration.token, environment: registration.environment,
                                        appID: registration.appId, deviceID: registration.deviceId)
                let job = PushJob(callID: callID, target: target, credentials: credentials, payloadJWS: jws, deadline: instruction.expiresTime)
                log.info("push.queued", ["call": callID, "device": registration.deviceId, "type": registration.pushType.rawValue])
                if !sender.send(job) { log.error("push.dropped", ["call": callID, "device": registration.deviceId, "reason": "sender full or stopped"]) }
            }
        }
    }

    private func parse(_ stored: StoredPushCredentials) throws(PushError) -> PushProviderCredentials {
        let cacheKey = stored.provider.rawValue + ":" + stored.applicationKey + ":" + stored.settings
        if let cached = parsed.withLock({ $0[cacheKey] }) { return cached }
        let credentials: PushProviderCredentials
        switch stored.provider {
        case .apns: credentials = .apns(try APNsCredentials(settingsJSON: stored.settings))
        case .fcm: credentials = .fcm(try FCMCredentials(serviceAccountJSON: stored.settings, tokenURIOverride: fcmTokenURL))
        }
        parsed.withLock { cache in
            if cache.count > 256 { cache.removeAll() }
            cache[cacheKey] = credentials
        }
        return credentials
    }

    /// Logs a sender event; a token the provider says is gone is removed from the store.
    fileprivate func handle(_ event: PushEvent) {
        switch event {
        case .attempt(let job, let attempt):
            recordOnTimeline(job, attempt == 1 ? "push.sent" : "push.retry",
                             ["device": job.target.deviceID, "type": job.target.pushType.rawValue, "attempt": String(attempt)])
            log.info("push.attempt", ["call": job.callID, "device": job.target.deviceID, "type": job.target.pushType.rawValue,
                                      "attempt": String(attempt)])
        case .answer(let job, let attempt, let status, let outcome):
            recordOnTimeline(job, "push.answer", ["device": job.target.deviceID, "attempt": String(attempt),
                                                  "status": status.map(String.init) ?? "none", "outcome": outcome.label,
                                                  "reason": Self.reason(outcome)])
            log.info("push.answer", ["call": job.callID, "device": job.target.deviceID, "attempt": String(attempt),
                                     "status": status.map(String.init) ?? "none", "outcome": outcome.label, "reason": Self.reason(outcome)])
        case .environmentSwitched(let job, let registered):
            // APNs refused the token in the environment the app registered it with. The
            // token stays; if the other environment takes it, the app registers tokens with
            // the wrong environment (e.g. a development build that says production).
            let detail = ["device": job.target.deviceID, "registered": registered.rawValue, "trying": job.target.environment.rawValue]
            recordOnTimeline(job, "push.environment_switched", detail)
            log.warning("push.environment", ["call": job.callID, "device": job.target.deviceID, "registered": registered.rawValue,
                                             "trying": job.target.environment.rawValue, "reason": "BadDeviceToken"])
        case .finished(let job, let outcome, let attempts):
            log.info("push.done", ["call": job.callID, "device": job.target.deviceID, "outcome": outcome.label, "attempts": String(attempts)])
            if case .tokenGone = outcome { removeToken(job) }
        }
    }

    /// Appends to the call's timeline, on the coordinator's queue so events keep the order
    /// the sender reported them in.
    private func recordOnTimeline(_ job: PushJob, _ kind: String, _ detail: [String: String]) {
        let event = CallEvent(time: ServerClock.now().unixMilliseconds, kind: kind, detail: detail)
        queue.async { [self] in
            // The job's payload names the application, as in removeToken.
            guard let appKey = try? PushPayload.unverifiedClaims(job.payloadJWS).appKey else { return }
            recordEvent(callID: job.callID, applicationKey: appKey, event)
        }
    }

    /// Writes one timeline event; runs on `queue`. A failure is logged, never fatal.
    private func recordEvent(callID: String, applicationKey: String, _ event: CallEvent) {
        do {
            try store.performAndWait { (store) throws(StoreError) in
                _ = try store.recordCallEvent(callId: callID, applicationKey: applicationKey, event)
            }
        } catch {
            log.warning("timeline.failed", ["call": callID, "kind": event.kind, "error": error.description])
        }
    }

    private func removeToken(_ job: PushJob) {
        let store = self.store
        let device = job.target.deviceID
        queue.async { [self] in
            // The job's payload names the application; the store keys tokens by it.
            guard let appKey = try? PushPayload.unverifiedClaims(job.payloadJWS).appKey else { return }
            let result = Result { () throws(StoreError) -> (String, Set<String>)? in
                try store.performAndWait { (store) throws(StoreError) -> (String, Set<String>)? in
                    let owner = try store.pushRegistrations(applicationKey: appKey, deviceId: device).first { $0.token == job.target.token }
                    try store.removePushToken(applicationKey: appKey, pushType: job.target.pushType, token: job.target.token)
                    guard let owner else { return nil }
                    return (owner.userId, Set(try store.pushRegistrations(applicationKey: appKey, userId: owner.userId).map(\.deviceId)))
                }
            }
            let removed = (try? result.get()) != nil
            log.info("push.token.removed", ["call": job.callID, "device": device, "type": job.target.pushType.rawValue,
                                            "ok": String(removed)])
            recordEvent(callID: job.callID, applicationKey: appKey, CallEvent(
                time: ServerClock.now().unixMilliseconds, kind: "push.token_removed",
                detail: ["device": device, "type": job.target.pushType.rawValue, "ok": String(removed)]))
            if case .success(let found?) = result {
                deliver { [pushDevicesChanged] in pushDevicesChanged(AppUser(applicationKey: appKey, userID: found.0), found.1) }
            }
        }
    }

    private static func reason(_ outcome: PushOutcome) -> String {
        switch outcome {
        case .delivered: "-"
        case .tokenGone(let reason), .badDeviceToken(let reason), .authRefused(let reason), .rejected(let reason): reason
        case .retryable(let reason, _): reason
        }
    }

    // MARK: Relay

    /// Checks a relayed payload: this device's app and id, a signature by one of this
    /// device's push keys, not expired. `done` gets the call id, or nil for
    /// `push_payload_invalid` (with the reason logged).
    func verifyRelay(_ payload: String, device: Device, done: @escaping @Sendable (String?) -> Void) {
        let store = self.store
        queue.async { [self] in
            let verdict: Result<String, PushError> = {
                let claims: PushPayload
                do throws(PushError) { claims = try PushPayload.unverifiedClaims(payload) } catch { return .failure(error) }
                guard claims.appKey == device.user.applicationKey, claims.deviceID == device.deviceID else {
                    return .failure(PushError(.payloadInvalid, "payload is for another app or device"))
                }
                guard let registrations = try? store.performAndWait({ (store) throws(StoreError) in
                    try store.pushRegistrations(applicationKey: device.user.applicationKey, deviceId: device.deviceID)
                }) else { return .failure(PushError(.payloadInvalid, "store read failed")) }
                var lastError = PushError(.payloadInvalid, "no push key registered for this device")
                for registration in registrations {
                    do throws(PushError) {
                        return .success(try PushPayload.verified(payload, pushKey: registration.pushKey, now: ServerClock.now().unixMilliseconds).callID)
                    } catch { lastError = error }
                }
                return .failure(lastError)
            }()
            switch verdict {
            case .success(let callID):
                log.info("push.relay", ["call": callID, "device": device.description, "valid": "true"])
                recordEvent(callID: callID, applicationKey: device.user.applicationKey,
                            CallEvent(time: ServerClock.now().unixMilliseconds, kind: "push.relayed", detail: ["device": device.deviceID]))
                deliver { done(callID) }
            case .failure(let error):
                log.info("push.relay", ["device": device.description, "valid": "false", "reason": error.detail])
                deliver { done(nil) }
            }
        }
    }
}

/// Forwards sender events to the coordinator, which exists only after the sender does.
private final class TokenRemoval: Sendable {
    struct Weak { weak var value: PushCoordinator? }
    let owner = Mutex(Weak())

    func handle(_ event: PushEvent) {
        owner.withLock { $0.value }?.handle(event)
    }
}
