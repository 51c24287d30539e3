public import Foundation
import ParleySignaling
import ParleyWireCore

/// The SDK's entry point: one user's connection to a Parley server, its calls and audio.
///
/// ```swift
/// let client = try ParleyClient(applicationKey: key, environmentHost: "http://127.0.0.1:8080", userId: "alice")
/// client.delegate = self                 // supplies tokens, hears start and failure
/// client.callClient.delegate = self      // hears incoming calls
/// client.start()
/// ```
///
/// Internally synchronised: call it from any thread. Its protocol logic is
/// `ClientSessionCore` (sans-I/O) on one serial queue; delegates are called on
/// `callbackQueue` (use a serial queue), in the protocol's event order. It is portable:
/// the connection, the media and HMAC come from the platform's `ParleyEngines`
/// (`ParleySDK` picks this platform's; `init(...engines:)` takes others).
public final class ParleyClient: @unchecked Sendable {
    // @unchecked: `core`, `transport`, `calls` and `media` are touched only on
    // `workQueue`; everything read from other threads is `Locked`.

    /// Hears of token requests, start and failure.
    public weak var delegate: (any ParleyClientDelegate)? {
        get { delegateSlot.current.object as? any ParleyClientDelegate }
        set { delegateSlot.withLock { $0.object = newValue } }
    }
    /// Places calls and hears of incoming ones.
    public let callClient: ParleyCallClient
    /// Mute, sound files, and what calls send and play.
    public let audioController: ParleyAudioController
    /// The user this client signs in as.
    public let userId: String
    /// The caller id (an E.164 number with a leading `+`) for calls to phone numbers, as
    /// given at creation: sent with every `callPhoneNumber` call (`call.start`'s `cli`);
    /// nil leaves it to the application's default.
    public let cli: String?
    /// The display name sent with each call placed from now on
    /// (`setPushNotificationDisplayName(_:)`).
    public var pushNotificationDisplayName: String? { displayName.current }
    /// Whether the client is authenticated (also while it reconnects after a drop).
    public var isStarted: Bool { started.current }
    /// Hears whether push registrations succeed.
    public weak var pushDelegate: (any ParleyPushDelegate)? {
        get { pushDelegateSlot.current.object as? any ParleyPushDelegate }
        set { pushDelegateSlot.withLock { $0.object = newValue } }
    }
    /// The device id this client signs in with (and pushes are addressed to).
    public let deviceId: String
    /// Where the push registration (token and push key) is kept between launches.
    public let pushRegistrationStore: any ParleyPushRegistrationStore

    let callbackQueue: DispatchQueue
    let endpoint: ParleyServerEndpoint
    /// The platform's transport, media and HMAC.
    let engines: ParleyEngines
    private let delegateSlot = Locked(WeakReference())
    private let pushDelegateSlot = Locked(WeakReference())
    let pushVerifier: PushPayloadVerifier
    /// The managed push hub this client follows (`enableManagedPushNotifications`), and
    /// its observation there.
    let managedPushObservation = Locked<(hub: ManagedPushTokens, id: Int)?>(nil)
    private let started = Locked(false)
    private let displayName = Locked<String?>(nil)
    private let workQueue = DispatchQueue(label: "parley.sdk.client")
    private var core: ClientSessionCore
    private var transport: (connection: Int, transport: any ParleySignalingTransport, localHost: String?)?
    private var calls: [String: ParleyCall] = [:]
    /// `setHeld` completions waiting for the server's answer, oldest first, by call id (workQueue).
    private var holdCompletions: [String: [(@Sendable ((any Error)?) -> Void)?]] = [:]
    private var media: [String: CallMediaSession] = [:]
    private let timer: any DispatchSourceTimer
    /// Every delegate call passes through here, in order: an item waits for the items
    /// before it, and a call's end also waits (bounded) for its media to close, so
    /// `callDidEnd` finds the recording written and the final statistics in place.
    private let deliveries = DispatchQueue(label: "parley.sdk.deliveries")
    /// Calls whose media is closing, with the group that is left once it closed (workQueue only).
    private var mediaClosing: [String: DispatchGroup] = [:]
    /// Connections being closed; each group is left when its reader thread has finished
    /// (the close frame is out). Pruned as they finish (workQueue only).
    private var closingTransports: [DispatchGroup] = []
    /// `terminateGracefully(completion:)` callers waiting for the client to stop (workQueue only).
    private var stopCompletions: [@Sendable () -> Void] = []
    /// The client itself while it has work it must finish (a `push.unregister` not yet
    /// answered): an app that drops its last reference right after `logOut()` must not
    /// lose the logout. Cleared as soon as the work is done or has failed (workQueue only).
    private var keepAlive: ParleyClient?
    /// The longest `callDidEnd` waits for the call's media to close and its recording to be written.
    static let mediaCloseWait: Duration = .seconds(10)

    /// A stable random device id for this process, used when none is given.
    static let processDeviceID = "parley-swift-" + UUID().uuidString.lowercased()

    /// Creates a client over the given engines; nothing connects until `start()`. Apps
    /// use `init(applicationKey:environmentHost:userId:...)` from `ParleySDK`, which
    /// passes this platform's engines.
    /// - Parameters:
    ///   - applicationKey: the application's key (1-64 of `A-Z a-z 0-9 - _`).
    ///   - environmentHost: the server, `http://host:port` (signaling over `ws://`) or
    ///     `https://host:port` (`wss://`, the server's certificate verified against the
    ///     host name or IP address in the URL).
    ///   - userId: the user (1-255 of `A-Z a-z 0-9 - _ =`); the tokens must be for this user.
    ///   - cli: the caller id shown when this user calls a phone number: E.164, a `+` and
    ///     2-15 digits, the first not 0 (the documented SDK's `cli`); nil for the
    ///     application's default.
    ///   - deviceId: a stable id of this installation; default: random, stable per process.
    ///   - callbackQueue: where delegates are called (a serial queue).
    ///   - pushRegistrationStore: where the push token and key are kept; default: a file
    ///     in Application Support named after the device id. Give a stable `deviceId`
    ///     when using push: a push is verified against the device it was sent to.
    ///   - engines: the signaling transport, media engine and HMAC to use.
    /// - Throws: `ParleyClientError` `invalid_argument` for a bad key, user id, caller
    ///   id, device id or URL.
    public init(applicationKey: String, environmentHost: String, userId: String, cli: String? = nil, deviceId: String? = nil,
                callbackQueue: DispatchQueue = .main,
                pushRegistrationStore: (any ParleyPushRegistrationStore)? = nil,
                engines: ParleyEngines) throws(ParleyClientError) {
        guard Self.isValid(applicationKey, maxBytes: 64, extra: "-_") else {
            throw ParleyClientError(code: "invalid_argument", message: "application key must be 1-64 of A-Z a-z 0-9 - _")
        }
        guard Self.isValid(userId, maxBytes: 255, extra: "-_=") else {
            throw ParleyClientError(code: "invalid_argument", message: "user id must be 1-255 of A-Z a-z 0-9 - _ =")
        }
        if let cli, SignalingMessage.Address.phone(cli).formatProblem != nil {
            throw ParleyClientError(code: "invalid_argument", message: "cli must be an E.164 number: + and 2-15 digits, the first not 0")
        }
        let device = deviceId ?? Self.processDeviceID
        guard Self.isValid(device, maxBytes: 128, extra: "._:-") else {
            throw ParleyClientError(code: "invalid_argument", message: "device id must be 1-128 of A-Z a-z 0-9 . _ : -")
        }
        let endpoint = try ParleyServerEndpoint(parsing: environmentHost)
        self.endpoint = endpoint
        self.engines = engines
        self.userId = userId
        self.cli = cli
        self.deviceId = device
        let store = pushRegistrationStore ?? FilePushRegistrationStore.defaultStore(deviceId: device)
        self.pushRegistrationStore = store
        pushVerifier = PushPayloadVerifier(applicationKey: applicationKey, userID: userId, deviceID: device,
                                           hmacSHA256: engines.hmacSHA256)
        self.callbackQueue = callbackQueue
        callClient = ParleyCallClient()
        // The controller's delegate calls go through `deliver` once the client exists
        // (weakly: the client owns the controller).
        let client = Locked(WeakReference())
        audioController = ParleyAudioController(engine: engines.media.audio) { body in
            (client.current.object as? ParleyClient)?.deliver(body)
        }
        // The system's cryptographic generator on every platform (getrandom on Linux).
        var generator = SystemRandomNumberGenerator()
        let seed = generator.next()
        core = ClientSessionCore(configuration: .init(applicationKey: applicationKey, userID: userId, deviceID: device, randomSeed: seed))
        if let stored = store.load(), stored.userId == userId, stored.deviceId == device {
            core.restorePushRegistration(PushDevice(pushType: stored.pushType, token: stored.token, environment: stored.environment, appID: stored.appId))
        }
        timer = DispatchSource.makeTimerSource(queue: workQueue)
        callClient.client = self
        client.withLock { $0.object = self }
        timer.setEventHandler { [weak self] in self?.input { core, now in core.tick(now: now) } }
        timer.schedule(deadline: .distantFuture)
        timer.resume()
    }

    deinit {
        if let (hub, id) = managedPushObservation.current { hub.stopObserving(id) }
        timer.cancel()
        transport?.transport.close(code: 1000)
    }

    /// Connects and signs in: asks the delegate for a token, then `clientDidStart` or
    /// `clientDidFail`. Dropped connections are retried with backoff and resume the session.
    public func start() {
        // The media libraries' one-time set-up, now and off the work queue, so that it is
        // not paid in the middle of the first call's DTLS handshake.
        let media = engines.media
        DispatchQueue.global(qos: .userInitiated).async { media.prepare() }
        input { core, now in core.start(now: now) }
    }

    /// Hangs up every call, closes the connection with 1000 and stops. No delegate call
    /// follows, except each call's `callDidEnd` (and a pending unregister's outcome).
    public func terminateGracefully() {
        input { core, now in core.terminate(now: now) }
    }

    /// Like `terminateGracefully()`, then runs `completion` on `callbackQueue` once the
    /// client has stopped: every call's `callDidEnd` delivered (their media closed and
    /// `.wavFile` recordings written), the close frame sent, and a `push.unregister`
    /// queued before it (by `logOut()`) answered or failed. A process that exits in
    /// `completion` loses none of it.
    public func terminateGracefully(completion: @escaping @Sendable () -> Void) {
        workQueue.async { [self] in
            stopCompletions.append(completion)
            perform(core.terminate(now: Self.now()))
        }
    }

    // MARK: Calls (from ParleyCall / ParleyCallClient)

    /// Places a call to `destination` (checked by the caller for phone and SIP rules);
    /// the protocol's own rules are checked here, before anything is sent.
    func placeCall(to destination: SignalingMessage.Address, headers: [String: String]) -> Result<ParleyCall, any Error> {
        let cli = destination.kind == .phone ? cli : nil
        let probe = SignalingMessage.callStart(.init(requestID: "1", callID: "00000000-0000-4000-8000-000000000000",
                                                     to: destination, headers: headers, sdp: "v=0\r\n", cli: cli))
        do { try SignalingCodec.validate(probe) } catch {
            return .failure(ParleyClientError(code: "invalid_argument", message: error.description))
        }
        return workQueue.sync {
            guard core.isStarted else {
                return .failure(ParleyClientError(code: "not_started", message: "start the client and wait for clientDidStart before calling"))
            }
            let callID = UUID().uuidString.lowercased()
            let (record, outputs) = core.placeCall(to: destination, headers: headers, displayName: displayName.current, cli: cli,
                                                   callID: callID, now: Self.now())
            let call = ParleyCall(record: record, client: self)
            calls[callID] = call
            perform(outputs)
            return .success(call)
        }
    }

    /// Sets the name the callee's devices show for this user on calls placed from now on:
    /// it travels in `call.start`, the callee's VoIP push (so the system call screen
    /// shows it before the app has a connection) and `call.incoming`
    /// (`ParleyCall.remoteDisplayName`). Control characters become spaces and the name is
    /// cut to at most 255 bytes of UTF-8 at a character boundary; an empty name (after
    /// trimming spaces) clears it, and the callee then shows the user id.
    public func setPushNotificationDisplayName(_ displayName: String) {
        self.displayName.withLock { $0 = Self.sanitizedDisplayName(displayName) }
    }

    static func sanitizedDisplayName(_ name: String) -> String? {
        var result = ""
        var bytes = 0
        for character in name {
            let shown: Character = character.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F } ? " " : character
            let length = String(shown).utf8.count
            guard bytes + length <= 255 else { break }
            result.append(shown)
            bytes += length
        }
        let trimmed = result.trimmingCharacters(in: .whitespaces)
        return trimmed.isEmpty ? nil : trimmed
    }

    func answer(_ callID: String) { input { core, now in core.answer(callID, now: now) } }
    func hangup(_ callID: String) { input { core, now in core.hangup(callID, now: now) } }

    /// Hands `tones` to the call's media; false if the call has no media session
    /// (ended, or never had one).
    func sendDTMF(_ callID: String, tones: String) -> Bool {
        workQueue.sync {
            guard let session = media[callID], !session.isClosed else { return false }
            session.sendDTMF(tones)
            return true
        }
    }

    /// Asks the server to hold or resume call `callID`; `completion` (on `callbackQueue`)
    /// hears the outcome.
    func setHeld(_ callID: String, held: Bool, completion: (@Sendable ((any Error)?) -> Void)?) {
        workQueue.async { [self] in
            holdCompletions[callID, default: []].append(completion)
            perform(core.hold(callID, held: held, now: Self.now()))
        }
    }

    // MARK: Driving the core

    func input(_ step: @escaping @Sendable (inout ClientSessionCore, ClientSessionCore.Time) -> [ClientSessionOutput]) {
        // Strong: work asked for (a logout, a hangup) runs even if the app dropped the
        // client right after asking; the block holds it until then.
        workQueue.async { [self] in
            perform(step(&core, Self.now()))
        }
    }

    /// Hands `body` to `callbackQueue` in order with every other delegate call, after
    /// `gates` have been left (each waited for at most `mediaCloseWait` in all).
    func deliver(after gates: [DispatchGroup] = [], _ body: @escaping @Sendable () -> Void) {
        let callbackQueue = callbackQueue
        deliveries.async {
            let deadline = DispatchTime.now() + .nanoseconds(Int(clamping: Self.mediaCloseWait.wholeNanoseconds))
            for gate in gates { _ = gate.wait(timeout: deadline) }
            callbackQueue.async(execute: body)
        }
    }

    /// On `workQueue`: carries out the core's outputs in order, then re-arms the timer.
    private func perform(_ outputs: [ClientSessionOutput]) {
        for output in outputs {
            switch output {
            case .connect(let connection):
                let transport = engines.transport.makeTransport(endpoint: endpoint) { [weak self] event in
                    guard let self else { return }
                    workQueue.async { self.transportEvent(event, connection: connection) }
                }
                self.transport = (connection, transport, nil)
                transport.open()
            case .close(let connection, let code):
                if let current = transport, current.connection == connection {
                    current.transport.close(code: code)
                    closingTransports.removeAll { $0.wait(timeout: .now()) == .success }
                    closingTransports.append(current.transport.finished)
                    transport = nil
                }
            case .send(let message):
                transport?.transport.send(SignalingCodec.encodeToString(message))
            case .requestToken(let connection):
                requestToken(connection: connection)
            case .clientStarted:
                started.withLock { $0 = true }
                deliver { [self] in delegate?.clientDidStart(self) }
            case .clientFailed(let error):
                started.withLock { $0 = false }
                deliver { [self] in delegate?.clientDidFail(self, error: error) }
            case .call(let kind, let record):
                deliver(kind, record)
            case .media(let instruction):
                performMedia(instruction)
            case .holdCompleted(let callID, _, let error):
                // Answers come in the order the requests went: the oldest completion is this one's.
                guard var waiting = holdCompletions[callID], !waiting.isEmpty else { break }
                let completion = waiting.removeFirst()
                holdCompletions[callID] = waiting.isEmpty ? nil : waiting
                if let completion { deliver { completion(error) } }
            case .dtmfReceived(let callID, let digits):
                guard let call = calls[callID] else { break }
                deliver { for delegate in call.allDelegates { delegate.call(call, didReceiveDTMF: digits) } }
            case .talkersChanged(let callID, let talkers):
                guard let call = calls[callID] else { break }
                deliver {
                    call.update(talkers: talkers)
                    for delegate in call.allDelegates { delegate.call(call, didChangeTalkers: talkers) }
                }
            case .pushRegistered(let device, let pushKey):
                let registration = ParleyPushRegistration(pushType: device.pushType, token: device.token, environment: device.environment,
                                                          appId: device.appID, pushKey: pushKey, userId: userId, deviceId: deviceId)
                pushRegistrationStore.save(registration)
                deliver { [self] in pushDelegate?.clientDidRegisterPushNotificationDeviceToken(self) }
            case .pushRegistrationFailed(let error):
                deliver { [self] in pushDelegate?.client(self, didFailToRegisterPushNotificationDeviceTokenWithError: error) }
            case .pushUnregistered:
                pushRegistrationStore.save(nil)
            case .pushUnregisterSucceeded:
                deliver { [self] in pushDelegate?.clientDidUnregisterPushNotificationDeviceToken(self) }
            case .pushUnregisterFailed(let error):
                deliver { [self] in pushDelegate?.client(self, didFailToUnregisterPushNotificationDeviceTokenWithError: error) }
            }
        }
        started.withLock { $0 = core.isStarted }
        keepAlive = core.hasWorkToFinish ? self : nil
        if !stopCompletions.isEmpty, core.phase == .stopped || core.phase == .idle {
            let completions = stopCompletions
            stopCompletions = []
            closingTransports.removeAll { $0.wait(timeout: .now()) == .success }
            deliver(after: closingTransports) { for completion in completions { completion() } }
        }
        if let deadline = core.nextDeadline {
            let delay = max(ContinuousClock.now.duration(to: deadline), .zero)
            timer.schedule(deadline: .now() + .nanoseconds(Int(clamping: delay.wholeNanoseconds)))
        } else {
            timer.schedule(deadline: .distantFuture)
        }
    }

    private func transportEvent(_ event: ParleySignalingTransportEvent, connection: Int) {
        let now = Self.now()
        switch event {
        case .opened(let localHost):
            if transport?.connection == connection { transport?.localHost = localHost }
            perform(core.connectionOpened(connection, now: now))
        case .failed(let message):
            perform(core.connectionFailed(connection, message: message, now: now))
        case .message(let bytes):
            perform(core.frameReceived(bytes, connection: connection, now: now))
        case .closed(let code, let reason):
            if transport?.connection == connection { transport = nil }
            perform(core.connectionClosed(connection, code: code, reason: reason, now: now))
        }
    }

    private func requestToken(connection: Int) {
        let registration = ParleyClientRegistration { [weak self] result in
            self?.input { core, now in
                switch result {
                case .success(let jwt): core.tokenProvided(jwt, connection: connection, now: now)
                case .failure(let error): core.tokenFailed(error.message, connection: connection, now: now)
                }
            }
        }
        deliver { [self] in
            if let delegate {
                delegate.clientRequiresRegistrationCredentials(self, withCallback: registration)
            } else {
                registration.registerDidFail(error: ParleyClientError(code: "registration_failed", message: "the client has no delegate to ask for a token"))
            }
        }
    }

    private func deliver(_ kind: ClientCallEventKind, _ record: ClientCallRecord) {
        // The end waits for the call's media to close (its recording written).
        let gates = kind == .ended ? mediaClosing.removeValue(forKey: record.callID).map { [$0] } ?? [] : []
        let call: ParleyCall
        if kind == .incoming {
            call = ParleyCall(record: record, client: self)
            calls[record.callID] = call
        } else {
            guard let known = calls[record.callID] else {
                if !gates.isEmpty { deliver(after: gates) {} }
                return
            }
            call = known
        }
        if kind == .ended { calls[record.callID] = nil }
        let callClient = callClient
        deliver(after: gates) {
            call.update(record)
            switch kind {
            case .incoming: for delegate in callClient.allDelegates { delegate.client(callClient, didReceiveIncomingCall: call) }
            case .progressed: for delegate in call.allDelegates { delegate.callDidProgress(call) }
            case .rang: for delegate in call.allDelegates { delegate.callDidRing(call) }
            case .answered: for delegate in call.allDelegates { delegate.callDidAnswer(call) }
            case .established: for delegate in call.allDelegates { delegate.callDidEstablish(call) }
            case .ended: for delegate in call.allDelegates { delegate.callDidEnd(call) }
            case .holdChanged: for delegate in call.allDelegates { delegate.callDidChangeHold(call) }
            }
        }
    }

    // MARK: Media legs

    private func performMedia(_ instruction: ClientMediaInstruction) {
        switch instruction {
        case .createOffer(let callID):
            guard let session = newMediaSession(callID) else { return }
            session.enqueue { [weak self] session in
                do {
                    let sdp = try await session.media.makeOffer()
                    self?.input { core, now in core.legOffered(callID, sdp: sdp, now: now) }
                } catch {
                    self?.input { core, now in core.legFailed(callID, message: "\(error)", now: now) }
                }
            }
        case .acceptAnswer(let callID, let sdp):
            let call = calls[callID]
            media[callID]?.enqueue { [weak self] session in
                do {
                    try await session.media.acceptAnswer(sdp)
                    try await session.media.start(withAudio: true)
                    self?.watch(session, call: call)
                } catch {
                    self?.input { core, now in core.legFailed(callID, message: "\(error)", now: now) }
                }
            }
        case .answerOffer(let callID, let offer):
            answer(callID, offer: offer, ringing: false)
        case .prepareAnswer(let callID, let offer):
            answer(callID, offer: offer, ringing: true)
        case .activate(let callID):
            media[callID]?.enqueue { [weak self] session in
                do { try await session.media.attachAudio() } catch {
                    self?.input { core, now in core.legFailed(callID, message: "\(error)", now: now) }
                }
            }
        case .close(let callID):
            guard let session = media.removeValue(forKey: callID) else { return }
            let call = calls[callID]
            let closed = DispatchGroup()
            closed.enter()
            mediaClosing[callID] = closed
            // Holds the client until the close is done: its media loop must outlive the
            // leg's close, and the recording is written after it (an app may drop the
            // client right after terminateGracefully()).
            session.enqueue { [self] session in
                if let statistics = await session.close() {
                    call?.update(statistics)
                    input { core, now in core.legClosed(callID, statistics: statistics, now: now) }
                }
                closed.leave()
                withExtendedLifetime(self) {}
            }
        }
    }

    /// Makes the callee's leg and answers the offer: with audio at the answer, or, while
    /// the call rings, without it (the early answer: `legPrepared`, audio attached by
    /// `.activate`). A leg that cannot be prepared leaves the call ringing; the answer then
    /// makes a new one (`legPreparationFailed`).
    private func answer(_ callID: String, offer: String, ringing: Bool) {
        guard let session = newMediaSession(callID) else { return }
        session.enqueue { [weak self] session in
            do {
                let answer = try await session.media.answer(offer: offer)
                try await session.media.start(withAudio: !ringing)
                self?.input { core, now in
                    if ringing { core.legPrepared(callID, sdp: answer, now: now) } else { core.legAnswered(callID, sdp: answer, now: now) }
                }
                self?.watchOnWorkQueue(session)
            } catch {
                if ringing {
                    _ = await session.close()
                    self?.dropMediaSession(session)
                    self?.input { core, now in core.legPreparationFailed(callID, now: now) }
                } else {
                    self?.input { core, now in core.legFailed(callID, message: "\(error)", now: now) }
                }
            }
        }
    }

    /// `watch` with the call looked up once the leg is up: a leg prepared at
    /// `call.incoming` starts before the call object is delivered, so the call cannot be
    /// taken when the instruction arrives.
    private func watchOnWorkQueue(_ session: CallMediaSession) {
        workQueue.async { [self] in watch(session, call: calls[session.callID]) }
    }

    private func newMediaSession(_ callID: String) -> CallMediaSession? {
        let callMedia = engines.media.makeCallMedia(callID: callID, localHost: transport?.localHost,
                                                    source: audioController.source, sink: audioController.sink)
        let session = CallMediaSession(callID: callID, media: callMedia)
        media[callID] = session
        return session
    }

    /// Forgets a call's media session that closed on its own (its preparation failed),
    /// unless a newer session took its place.
    private func dropMediaSession(_ session: CallMediaSession) {
        workQueue.async { [self] in
            if media[session.callID] === session { media[session.callID] = nil }
        }
    }

    /// Refreshes the call's statistics once a second and reports a leg that failed.
    private func watch(_ session: CallMediaSession, call: ParleyCall?) {
        let callID = session.callID
        Task { [weak self] in
            // Bounded: at most the protocol's 4 h maximum call length.
            for _ in 0..<14_400 {
                try? await Task.sleep(for: .seconds(1))
                guard !session.isClosed, let (statistics, failure) = await session.media.poll() else { return }
                call?.update(statistics)
                if let failure {
                    self?.input { core, now in core.legFailed(callID, message: failure, now: now) }
                    return
                }
            }
        }
    }

    // MARK: Helpers

    /// The monotonic and the wall clock, read back to back.
    static func now() -> ClientSessionCore.Time {
        let instant = ContinuousClock.now
        let unix = Date().timeIntervalSince1970
        return ClockReading(instant: instant, unixNanoseconds: Int64(unix * 1e9))
    }

    private static func isValid(_ text: String, maxBytes: Int, extra: String) -> Bool {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty, bytes.count <= maxBytes else { return false }
        let allowed = Set(extra.utf8)
        return bytes.allSatisfy { (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) || allowed.contains($0) }
    }
}
