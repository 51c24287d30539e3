import Dispatch
import Foundation
import ParleyAuth
import ParleyBus
import ParleyCallModel
import ParleyCallCore
import ParleyCrypto
import ParleyEdgeIO
import ParleyMediaLegCore
import ParleyNetCore
import ParleyPush
import ParleySessionCore
import ParleySignaling
import ParleyStore
import ParleyVoiceAPI
import ParleyWebSocket
import ParleyWireCore
import Synchronization

/// The shell of parleyd's signaling and calls: every WebSocket on `/v1/ws`, the session
/// protocol's core (`ServerSessionCore`), the `CallRegistry`, the media anchor and the
/// call records.
///
/// The engine decides nothing about sessions or calls itself: frames, connection events,
/// store answers and timers go into the two sans-I/O cores, and the engine carries out
/// what they return (frames to send, closes, registry requests, media instructions,
/// pushes, records). Everything here runs on one scheduler (`loop`, the "parley-calls"
/// event loop in parleyd, a `ManualScheduler` in virtual-time tests): edge callbacks hop
/// onto it, timers are its, and the media anchor's reports come back onto it from the
/// media loops. The registry and the session core are therefore touched by one thread
/// only, in the order events happened. SQLite never runs on an edge loop, on this loop or
/// on the cooperative pool: reads for `hello` go to a read connection of their own
/// (`helloStore`), record writes to `CallRecorder`'s writer. Actions that depend on a
/// record being committed (a new call's `result` and what follows it, an ended call's
/// `call.ended`) wait for its ticket as `HeldWork` while everything else goes on; a locked
/// or failing store therefore stalls only the calls whose records it cannot take yet,
/// never media.
final class CallEngine: @unchecked Sendable {
    // @unchecked: all mutable state is used on `loop`'s thread only (every entry point hops
    // onto it first), so it is never accessed concurrently.

    /// The subprotocol of docs/protocol.md version 1.
    static let subprotocol = "parley.v1"
    static let serverVersion = "parleyd/0.1"

    /// Where the engine's work runs and the time it reads.
    let loop: any Scheduler
    /// The wall clock (Unix milliseconds) for protocol times and records.
    private let wallClock: @Sendable () -> Int64
    private let configuration: ServerConfiguration
    private let log: ServerLog
    private let metrics: ServerMetrics
    private let store: StoreQueue
    /// A connection of its own for `hello`'s application lookups, so a slow write on
    /// `store` (push registrations, timelines) never holds up a sign-in.
    private let helloStore: StoreQueue
    private var registry: CallRegistry
    /// Connections and device sessions (docs/protocol.md, Sessions).
    private var sessions: ServerSessionCore
    private var nonces = NonceReplayCache()
    private let verifier = TokenVerifier()
    private var sockets: [UInt64: any SignalingSocket] = [:]
    /// This node, and where messages for devices on other nodes go.
    private let node: NodeID
    private let bus: any SignalingBus
    private let directory: any DeviceDirectory
    private var anchor: MediaAnchor?
    /// The SIP user agent SIP parties are told through; nil: calls to phone numbers and
    /// SIP addresses are refused (`CallConfiguration.sipDialling` off).
    private let sipCalls: (any SIPCallPort)?
    /// The applications' backends, called back about calls in to the numbers they route
    /// (with a SIP user agent only).
    private let backend: BackendCallbacks?
    /// What the app calls their backend routes asked (caller and destination), by call id.
    private var routingRequests: [String: RouteRequest] = [:]
    /// Calls in whose ICE their backend answered: what their DiCE needs, by call id.
    private var backendCalls: [String: BackendCall] = [:]
    /// Who hung up each live call that a hang-up is ending (the first side only), for its
    /// DiCE's reason; also kept on the call's timeline (`hangUpEventKind`) for the REST API.
    private var hangUpSides: [String: SinchCallOutcome.HangUpSide] = [:]
    /// The timeline event that names who hung up a call: `{"by": "caller" | "callee" | "api"}`.
    static let hangUpEventKind = "call.hangup"
    /// Calls in the server answered itself for their backend's prompts, menus and park.
    private var answeredByServer: ServerAnsweredCalls?
    /// The refusal `refuse` told a caller last (read back when a call the server answered
    /// could not go on).
    private var refusedNow: CallError?
    /// The recordings the backends' SVAML asks for (`startRecording`, `stopRecording`).
    private var recordings: CallRecordings?
    /// Callouts the server places and plays to itself (`ttsCallout`, `customCallout`).
    private var callouts: ServerCallouts?
    private let recorder: CallRecorder
    /// Applications' dialling settings in, refusals out; nil: not enforced.
    private var dialling: DiallingPolicyShell?
    /// Push registration, sending and relay checks (nil only if libcurl failed to start).
    private var push: PushCoordinator?
    /// Store reads for `hello` (application lookups), off the loop.
    private let reads = DispatchQueue(label: "parley.engine.reads")
    /// Timeline writes (who hung up), off the loop and never ahead of a sign-in's read.
    private let timelineWrites = DispatchQueue(label: "parley.engine.timeline")
    private var callTimer: (id: TimerID, at: ContinuousClock.Instant)?
    private var sessionTimer: (id: TimerID, at: ContinuousClock.Instant)?
    private var nonceTimer: TimerID?
    private var statisticsTimer: TimerID?
    private var pendingMedia: [(event: MediaEvent, callID: String)] = []
    /// The talkers each live room reported last (call ids, loudest first), told to a
    /// participant as its call is established: a room's talkers may not change for a long
    /// while after someone joins. Dropped when the room has nobody left.
    private var roomTalkers: [RoomKey: [String]] = [:]
    /// Actions waiting for the store to commit a record they depend on, in order.
    private var held: [HeldWork] = []
    /// The highest store ticket known to be done (`CallRecorder`).
    private var committedTicket: UInt64 = 0
    /// Callbacks waiting for a ticket (a REST hang-up answers once the record is ended).
    private var ticketWaiters: [(ticket: UInt64, body: () -> Void)] = []
    private var performing = false
    private var stopped = false
    /// Set when `stop` began: ended calls' legs close synchronously from then on.
    private var stopping = false
    /// Ended calls whose legs are closing on their media loop (records not written yet).
    private var closingCalls: Set<String> = []
    /// REST hang-ups waiting for such a call's record to be written and committed.
    private var recordWaiters: [String: [() -> Void]] = [:]

    /// - Parameters:
    ///   - loop: the scheduler every engine method runs on.
    ///   - mediaAnchor: builds the media anchor, given the function its reports go to
    ///     (they arrive on `loop`); nil runs without media (instructions are dropped).
    ///   - wallClock: Unix milliseconds now (the real clock in parleyd).
    ///   - pushSender: builds the push sender (the composition root's choice); nil builds
    ///     the configuration's (tests).
    ///   - sipCalls: the SIP user agent; with one, calls to phone numbers and SIP addresses
    ///     are placed through it.
    ///   - diallingSettings: with it, those calls are checked against their application's
    ///     dialling settings (read from `helloStore`).
    init(loop: any Scheduler, configuration: ServerConfiguration, log: ServerLog, metrics: ServerMetrics, store: StoreQueue,
         helloStore: StoreQueue, node: NodeID = .local, bus: any SignalingBus = LocalSignalingBus(),
         directory: any DeviceDirectory = LocalDeviceDirectory(), router: any CallRouter = PresenceRouter(),
         pushSender: PushSenderFactory? = nil, sipCalls: (any SIPCallPort)? = nil,
         diallingSettings: DiallingSettingsSource? = nil, recorder: CallRecorder, knownUsers: [AppUser],
         wallClock: @escaping @Sendable () -> Int64 = ServerClock.unixMillis,
         mediaAnchor: ((@escaping (MediaEvent, String) -> Void) throws(NetError) -> MediaAnchor)?) throws(NetError) {
        self.loop = loop
        self.wallClock = wallClock
        self.configuration = configuration
        self.log = log
        self.metrics = metrics
        self.store = store
        self.helloStore = helloStore
        var calls = CallConfiguration()
        calls.ringTimeout = configuration.ringTimeout
        calls.mediaSetupTimeout = configuration.mediaSetupTimeout
        calls.reconnectGrace = configuration.reconnectGrace
        calls.maximumCallLength = configuration.maximumCallLength
        calls.maxCallsPerUser = configuration.maxCallsPerUser
        calls.maxCallsPerApplication = configuration.maxCallsPerApplication
        calls.sipDialling = sipCalls != nil
        // The applications' backends: their callback settings are read in any case, since
        // a backend may route app calls (`--app-calls`) as well as calls in over SIP.
        let callbackSettings = CallbackSettingsSource()
        backend = BackendCallbacks(settings: callbackSettings, store: helloStore, log: log)
        let backendRouter = BackendRouter(fallback: router, settings: callbackSettings)
        registry = CallRegistry(configuration: calls, router: backendRouter)
        self.sipCalls = sipCalls
        self.node = node
        self.bus = bus
        self.directory = directory
        for user in knownUsers { registry.markKnown(user) }
        sessions = ServerSessionCore(configuration: Self.sessionConfiguration(of: configuration))
        self.recorder = recorder
        anchor = try mediaAnchor?({ [unowned self] event, callID in self.mediaReported(event, callID: callID) })
        anchor?.talkersChanged = { [unowned self] room, talkers in self.roomTalkersChanged(room, talkers: talkers) }
        answeredByServer = ServerAnsweredCalls(
            loop: loop, anchor: anchor, sipCalls: sipCalls, backend: backend,
            prompts: PromptLibrary(directory: configuration.promptDirectory), log: log,
            maximumCallLength: configuration.maximumCallLength, recorder: recorder, wallClock: wallClock)
        recordings = CallRecordings(directory: configuration.recordingDirectory, anchor: anchor, backend: backend, log: log)
        answeredByServer?.recordings = recordings
        answeredByServer?.connect = { [unowned self] call, info, action in
            // As the ICE's answer would have placed it; its caller's leg is the one answered.
            backendCalls[call.party.callID] = info
            refusedNow = nil
            backendAnswered(call, .success(SVAMLResponse(action: action)))
            guard registry.record(of: call.party.callID) == nil else { return nil }
            return refusedNow ?? CallError(code: SignalingErrorCode.internalError.rawValue, message: "the call could not go on")
        }
        callouts = ServerCallouts(
            loop: loop, anchor: anchor, sipCalls: sipCalls, backend: backend,
            prompts: PromptLibrary(directory: configuration.promptDirectory), log: log, ringTimeout: configuration.ringTimeout,
            maximumCallLength: configuration.maximumCallLength, hooks: calloutHooks(), wallClock: wallClock)
        if let diallingSettings {
            let shell = DiallingPolicyShell(
                source: diallingSettings, loop: loop, store: helloStore, log: log, metrics: metrics,
                apply: { [unowned self] settings in registry.replaceDiallingSettings(settings) })
            registry.enforceDiallingSettings(shell.loadNow())
            dialling = shell
        }
        do {
            push = try PushCoordinator(
                configuration: configuration, store: store, log: log,
                makeSender: pushSender ?? ServerComponents.pushSender(for: configuration),
                deliver: { [loop] body in loop.execute(body) },
                pushDevicesChanged: { [unowned self] user, devices in self.registry.setPushDevices(user, deviceIDs: devices) })
        } catch {
            log.error("push.unavailable", ["error": error.description])
        }
        // Messages other nodes send to the sessions this node holds.
        bus.attach(node: node) { [loop, weak self] message, device in
            guard let engine = self else { return }
            loop.execute { engine.session { $0.deliver(message, to: device) } }
        }
        sipCalls?.attach { [loop, weak self] event, party in
            guard let engine = self else { return }
            loop.execute { engine.sipReported(event, from: party) }
        }
        sipCalls?.attachInbound { [loop, weak self] call in
            guard let engine = self else { return }
            loop.execute { engine.sipOffered(call) }
        }
        if let backend { backend.settings.start(loop: loop, store: helloStore, log: log) }
        backendRouter.setAsk { [loop, weak self] request in
            guard let engine = self else { return }
            // After the call.start that asked is handled: the call is in its routing state.
            loop.execute { engine.askBackend(route: request) }
        }
        recorder.onCommitted { [loop, weak self] ticket in
            guard let engine = self else { return }
            loop.execute { engine.storeCommitted(ticket) }
        }
        loop.execute {
            self.scheduleNonceCleanup()
            self.scheduleLegStatistics()
            self.dialling?.start()
        }
        push?.loadPushDevices { [unowned self] devices in
            for (user, ids) in devices { self.registry.setPushDevices(user, deviceIDs: ids) }
        }
    }

    /// The session core's settings from the server's.
    static func sessionConfiguration(of configuration: ServerConfiguration) -> ServerSessionConfiguration {
        var sessions = ServerSessionConfiguration()
        sessions.helloTimeout = configuration.helloTimeout
        sessions.heartbeatInterval = configuration.heartbeatInterval
        sessions.reconnectGrace = configuration.reconnectGrace
        sessions.maxFrameSize = configuration.maxFrameSize
        sessions.maxRequestsPerSecond = configuration.maxRequestsPerSecond
        sessions.requestBurst = configuration.requestBurst
        sessions.serverVersion = serverVersion
        return sessions
    }

    /// The time now, both clocks, read once per event.
    private func now() -> ClockReading {
        ClockReading(instant: loop.now, unixMilliseconds: wallClock())
    }

    // MARK: The WebSocket route

    /// The `/v1/ws` route: `parley.v1` required (else 426 JSON), text frames to the engine,
    /// binary frames closed with 1003.
    func route() -> WebSocketRoute {
        WebSocketRoute(
            path: "/v1/ws",
            accept: { upgrade, _ in
                guard upgrade.subprotocols.contains(CallEngine.subprotocol) else {
                    return .respond(.json(status: 426, body: Array(
                        #"{"code":"unsupported_version","message":"offer the WebSocket subprotocol parley.v1","supported":[1]}"#.utf8)))
                }
                return .accept(subprotocol: CallEngine.subprotocol)
            },
            onOpen: { [self] socket in
                let now = ContinuousClock.now
                loop.execute { self.socketOpened(socket, now: now) }
            },
            onMessage: { [self] socket, message in
                switch message {
                case .text(let text):
                    // The arrival time, for the rate limit and the heartbeat.
                    let now = ContinuousClock.now
                    loop.execute { self.socketReceived(text, on: socket.id, now: now) }
                case .binary:
                    socket.close(code: .unsupportedData, reason: "binary frames are not part of the protocol")
                }
            },
            onClose: { [self] socket, close in
                loop.execute { self.socketClosed(socket.id, code: close.code?.rawValue) }
            },
            onRateLimited: { [self] socket in
                // Queued behind the messages the edge handed over before, so those are
                // answered before the close (docs/protocol.md, Limits).
                loop.execute { self.socketRateLimited(socket.id) }
            })
    }

    // MARK: Sockets (on the loop)

    /// A WebSocket opened at `now`.
    func socketOpened(_ socket: any SignalingSocket, now: ContinuousClock.Instant) {
        sockets[socket.id] = socket
        session { $0.connectionOpened(socket.id, now: now) }
    }

    /// A text frame arrived at `now` on the socket.
    func socketReceived(_ text: String, on id: UInt64, now: ContinuousClock.Instant) {
        session { $0.frameReceived(text, on: id, now: now) }
    }

    /// The socket closed with `code` (nil: without a close frame).
    func socketClosed(_ id: UInt64, code: UInt16?) {
        let now = loop.now
        session { $0.connectionClosed(id, code: code, now: now) }
        sockets[id] = nil
    }

    /// The edge's hard rate limit: close with 4005, after every request taken before has
    /// its reply.
    func socketRateLimited(_ id: UInt64) {
        session { $0.rateLimitReached(on: id) }
    }

    // MARK: The session core's outputs

    /// Runs one input through the session core and carries out what it returns.
    private func session(_ input: (inout ServerSessionCore) -> [ServerSessionOutput]) {
        let outputs = input(&sessions)
        for output in outputs { carryOut(output) }
        rescheduleSessionTimer()
    }

    private func carryOut(_ output: ServerSessionOutput) {
        switch output {
        case .send(let id, let message, let device):
            // Behind this device's held replies and events, so it sees them in order;
            // `hello.ok` opens a connection and never waits (held work follows it).
            if let device, !held.isEmpty, !message.isHelloOK, held.contains(where: { $0.keys.contains(.device(device)) }) {
                held.append(HeldWork(ticket: 0, keys: [.device(device)], actions: [.send(device, message)]))
                return
            }
            logMessage("signal.out", message, who: device?.description ?? "conn \(id)")
            sockets[id]?.sendText(SignalingCodec.encodeToString(message))
        case .replay(let id, let message):
            sockets[id]?.sendText(SignalingCodec.encodeToString(message))
        case .close(let id, let code, let reason):
            sockets[id]?.close(code: code, reason: reason)
        case .verifyHello(let id, let hello):
            lookUpApplication(for: hello, connectionID: id)
        case .callRequest(let device, let message):
            // The DiCE and the REST API say who hung up: the caller's device, or the other side.
            if case .callHangup(let request) = message, let record = registry.record(of: request.callID) {
                noteHangUp(record, by: record.callerDeviceID == device.deviceID ? .caller : .callee)
            }
            perform(registry.handleRequest(message, from: device, now: now()))
        case .pushRequest(let id, let device, let message):
            let answered: @Sendable () -> Void = { [self] in session { $0.requestAnswered(on: id) } }
            switch message {
            case .pushRegister(let request): pushRegister(request, from: device, answered: answered)
            case .pushUnregister(let request): pushUnregister(request, from: device, answered: answered)
            case .pushRelay(let request): pushRelay(request, from: device, answered: answered)
            default: answered()
            }
        case .deviceConnected(let device, let resumed):
            directory.sessionStarted(device, on: node)
            let time = now()
            recorder.recordUserSeen(device.user, at: time.unixMilliseconds)
            perform(registry.deviceConnected(device, resumed: resumed, now: time))
        case .deviceDisconnected(let device):
            perform(registry.deviceDisconnected(device, now: now()))
        case .deviceLoggedOut(let device):
            // 1000 from the device means it logged out (docs/protocol.md, Close codes): its
            // calls are hung up as if it had sent call.hangup (canceled, denied or hungUp,
            // by the call's state), then it is gone.
            let time = now()
            for callID in registry.callIDs(of: device).sorted() {
                perform(registry.handleRequest(.callHangup(.init(requestID: "logout", callID: callID)), from: device, now: time))
            }
            perform(registry.deviceDisconnected(device, now: time))
        case .event(let event):
            record(event)
        }
    }

    /// Logs and counts a session event (the log lines of docs/operations.md).
    private func record(_ event: ServerSessionEvent) {
        switch event {
        case .connectionOpened(let id):
            metrics.update {
                $0.connectionsOpen += 1
                $0.connectionsTotal += 1
            }
            log.info("ws.open", ["conn": String(id), "remote": sockets[id]?.remoteDescription ?? "-"])
        case .connectionClosed(let id, let code):
            metrics.update { $0.connectionsOpen -= 1 }
            log.info("ws.close", ["conn": String(id), "code": code.map { String($0) } ?? "none"])
        case .connectionReplaced(let old, let by, let device):
            metrics.update { $0.connectionsOpen -= 1 }
            log.info("ws.replaced", ["conn": String(old), "by": String(by), "device": device.description])
        case .helloTimedOut(let id):
            log.info("ws.hello.timeout", ["conn": String(id)])
        case .heartbeatTimedOut(let id, let device):
            log.info("ws.heartbeat.timeout", ["conn": String(id), "device": device?.description ?? "-"])
        case .frameRefused(let id, let code, let reason):
            log.info("signal.refused", ["conn": String(id), "code": code, "reason": reason])
        case .received(let message, let who):
            logMessage("signal.in", message, who: who)
        case .rateLimitClose(let id, let device):
            log.info("ws.rate_limited", ["conn": String(id), "device": device?.description ?? "-"])
        case .helloRefused(let id, let code, let reason):
            metrics.update { $0.authFailures[code, default: 0] += 1 }
            log.info("hello.refused", ["conn": String(id), "code": code, "reason": reason])
        case .helloStoreFailed(let id, let message):
            log.error("hello.store.failed", ["conn": String(id), "error": message])
        case .authenticated(let id, let device, let sessionID, let resumed, let replayed):
            metrics.update { $0.authenticatedTotal += 1 }
            log.info("hello.ok", ["conn": String(id), "device": device.description, "session": sessionID,
                                  "resumed": String(resumed), "replayed": String(replayed)])
        case .sessionClosed(let sessionID, let device):
            directory.sessionEnded(device, on: node)
            log.info("session.closed", ["session": sessionID, "device": device.description])
        case .sessionExpired(let sessionID, let device, let dropped):
            directory.sessionEnded(device, on: node)
            log.info("session.expired", ["session": sessionID, "device": device.description, "dropped": String(dropped)])
        case .messageBuffered(let message, let device):
            logMessage("signal.buffered", message, who: device.description)
        case .messageDropped(let message, let device):
            logMessage("signal.dropped", message, who: device.description)
        }
    }

    private func rescheduleSessionTimer() {
        guard !stopped, let next = sessions.nextDeadline else {
            if let timer = sessionTimer { loop.cancel(timer.id) }
            sessionTimer = nil
            return
        }
        if let timer = sessionTimer {
            if timer.at == next { return }
            loop.cancel(timer.id)
        }
        let id = loop.schedule(at: next) { [self] in
            sessionTimer = nil
            let now = loop.now
            session { $0.tick(now: now) }
        }
        sessionTimer = (id, next)
    }

    // MARK: Push (docs/push.md)

    private func pushUnavailable(_ requestID: String, to device: Device) {
        deliverInOrder(.error(.init(replyTo: requestID, code: .internalError, message: "push is unavailable on this server")), to: device)
    }

    private func pushRegister(_ request: SignalingMessage.PushRegister, from device: Device, answered: @escaping @Sendable () -> Void) {
        guard let push else { pushUnavailable(request.requestID, to: device); return answered() }
        push.register(request, device: device) { [unowned self] key in
            defer { answered() }
            guard !stopped else { return }
            if let key {
                deliverInOrder(.result(.init(replyTo: request.requestID, pushKey: key)), to: device)
            } else {
                deliverInOrder(.error(.init(replyTo: request.requestID, code: .internalError, message: "the push token could not be stored; retry")), to: device)
            }
        }
    }

    private func pushUnregister(_ request: SignalingMessage.PushUnregister, from device: Device, answered: @escaping @Sendable () -> Void) {
        guard let push else { pushUnavailable(request.requestID, to: device); return answered() }
        push.unregister(device: device, token: request.token) { [unowned self] result in
            defer { answered() }
            guard !stopped else { return }
            switch result {
            case .success: deliverInOrder(.result(.init(replyTo: request.requestID)), to: device)
            case .failure:
                deliverInOrder(.error(.init(replyTo: request.requestID, code: .internalError, message: "the push token could not be removed; retry")), to: device)
            }
        }
    }

    private func pushRelay(_ request: SignalingMessage.PushRelay, from device: Device, answered: @escaping @Sendable () -> Void) {
        guard let push else { pushUnavailable(request.requestID, to: device); return answered() }
        push.verifyRelay(request.payload, device: device) { [unowned self] callID in
            defer { answered() }
            guard !stopped else { return }
            guard let callID else {
                deliverInOrder(.error(.init(replyTo: request.requestID, code: .pushPayloadInvalid, message: "the push payload is forged, malformed or expired")),
                        to: device)
                return
            }
            perform(registry.relayPush(callID: callID, requestID: request.requestID, from: device, now: now()))
        }
    }

    private func logMessage(_ event: String, _ message: SignalingMessage, who: String) {
        let detail: String
        switch message {
        case .error(let error): detail = error.code.rawValue
        case .callEnded(let ended): detail = ended.cause.rawValue + (ended.error.map { "/" + $0.code.rawValue } ?? "")
        case .callTalking(let talking): detail = String(talking.talking.count)
        default: detail = "-"
        }
        if case .callTalking = message {
            // Up to ten a second per room and participant: kept out of the info log.
            log.debug(event, ["call": message.callID ?? "-", "type": message.type.rawValue, "device": who, "detail": detail])
        } else if let callID = message.callID {
            log.info(event, ["call": callID, "type": message.type.rawValue, "device": who, "detail": detail])
        } else {
            log.info(event, ["type": message.type.rawValue, "device": who, "detail": detail])
        }
    }

    // MARK: hello

    private func lookUpApplication(for hello: SignalingMessage.Hello, connectionID: UInt64) {
        let store = self.helloStore
        let key = hello.appKey
        // A dispatch queue of our own, not a Task: the engine must not depend on the
        // cooperative pool, which blocking callers (tests, CLI code) can exhaust.
        reads.async {
            let result = Result { () throws(StoreError) -> Application? in
                try store.performAndWait { (store) throws(StoreError) -> Application? in try store.application(key: key) }
            }
            self.loop.execute { self.finishHello(hello, connectionID: connectionID, application: result) }
        }
    }

    /// Checks the token against the application the store returned and gives the session
    /// core its verdict.
    private func finishHello(_ hello: SignalingMessage.Hello, connectionID: UInt64, application: Result<Application?, StoreError>) {
        // A connection gone or closed meanwhile: no token is checked (its nonce stays unused).
        guard sessions.awaitsHelloVerdict(on: connectionID) else { return }
        let nowMillis = wallClock()
        let token: UserToken
        do throws(AuthError) {
            let found: Application?
            switch application {
            case .success(let value): found = value
            case .failure(let error):
                session { $0.helloFailed(on: connectionID, hello: hello, message: error.description) }
                return
            }
            guard let found else { throw AuthError.unknownApplication(hello.appKey) }
            token = try verifier.verify(hello.token, for: try Self.credentials(of: found, nowMillis: nowMillis),
                                        now: nowMillis / 1000, nonces: &nonces)
        } catch {
            session { $0.helloRefused(on: connectionID, hello: hello, code: error.protocolCode, message: error.description) }
            return
        }
        if case .success(let found?) = application, dialling != nil {
            // The freshest settings come with the application a sign-in just read.
            registry.setDiallingSettings(found.dialling, forApplication: found.key)
        }
        let sessionID = Self.newSessionID()
        session { $0.helloAccepted(on: connectionID, hello: hello, userID: token.userID, sessionID: sessionID, unixMillis: nowMillis) }
    }

    /// The application's credentials as ParleyAuth wants them (its previous secret expiry
    /// is in seconds; the store keeps milliseconds).
    static func credentials(of application: Application, nowMillis: Int64) throws(AuthError) -> ApplicationCredentials {
        let secret = try ApplicationSecret(base64: application.secret)
        if let previous = application.previousSecret, let until = application.previousSecretValidUntil, nowMillis < until {
            return try ApplicationCredentials(key: application.key, secret: secret, previousSecret: try ApplicationSecret(base64: previous),
                                              previousSecretExpiresAt: until / 1000)
        }
        return try ApplicationCredentials(key: application.key, secret: secret)
    }

    private func scheduleNonceCleanup() {
        nonceTimer = loop.schedule(after: .seconds(60)) { [self] in
            guard !stopped else { return }
            nonces.removeExpired(now: wallClock() / 1000)
            scheduleNonceCleanup()
        }
    }

    private func scheduleLegStatistics() {
        statisticsTimer = loop.schedule(after: configuration.legStatisticsInterval) { [self] in
            guard !stopped, let anchor else { return }
            let now = wallClock()
            for record in registry.activeCalls where record.state == .established {
                // The figures come back from the call's media loop as an input; a call that
                // ended meanwhile has its final figures stored already.
                anchor.statistics(callID: record.callID) { [self] statistics in
                    guard !stopped, registry.record(of: record.callID)?.state == .established else { return }
                    for leg in Self.storedLegs(statistics, of: record, at: now) {
                        recorder.recordLeg(callID: record.callID, leg)
                    }
                }
            }
            scheduleLegStatistics()
        }
    }

    /// A session id: 96 random bits, so one device's sessions are not guessable from another's.
    static func newSessionID() -> String {
        let bytes = (try? SecureRandom.bytes(12)) ?? (0..<12).map { _ in UInt8.random(in: 0...255) }
        return "s-" + bytes.map { byte in
            let digits = Array("0123456789abcdef")
            return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0f)]])
        }.joined()
    }


    // MARK: Performing the engine's actions

    /// Carries out the registry's actions in order. Records go first (an ended call's legs
    /// are closed first, for their statistics), to the recorder; the rest runs now, or,
    /// when it depends on a record that must be committed first (a new or an ended call)
    /// or follows held work of the same call or device, later, in order, once the store
    /// has it (`HeldWork`). Media reports raised while performing are queued and handed
    /// to the registry afterwards, in order.
    private func perform(_ actions: [CallAction]) {
        let outermost = !performing
        performing = true
        if !actions.isEmpty { submit(actions) }
        guard outermost else { return }
        var rounds = 0
        while rounds < 10_000 {
            releaseHeldWork()
            guard !pendingMedia.isEmpty else { break }
            rounds += 1
            let next = pendingMedia.removeFirst()
            log.info("media.report", ["call": next.callID, "event": Self.describe(next.event)])
            perform(registry.handleMedia(next.event, callID: next.callID, now: now()))
        }
        performing = false
        dialling?.report(registry.takeDiallingRefusals())
        rescheduleCallTimer()
    }

    /// Records the actions' records and runs or holds the rest.
    private func submit(_ actions: [CallAction]) {
        let time = now()
        var waitFor: UInt64 = 0
        var closing: Set<String> = []
        var ended: [CallRecord] = []
        defer { for record in ended { sendDiCE(for: record) } }
        for case .record(let record) in actions {
            if record.state == .ended { ended.append(record) }
            var legs: [CallLeg] = []
            if record.state == .ended, let anchor {
                if !stopping {
                    // The legs close on their media loop; the record (with their final
                    // figures) is written when those come back, and what it holds waits.
                    closing.insert(record.callID)
                    closingCalls.insert(record.callID)
                    anchor.closeAll(callID: record.callID, now: time.instant) { [self] statistics in
                        legsClosed(record, statistics)
                    }
                    continue
                }
                legs = Self.storedLegs(anchor.closeAll(callID: record.callID, now: time.instant), of: record, at: time.unixMilliseconds)
            }
            let written = recorder.persist(record, legs: legs)
            if written.mustWait { waitFor = max(waitFor, written.ticket) }
        }
        let effects = actions.filter { if case .record = $0 { false } else { true } }
        guard !effects.isEmpty else { return }
        let keys = Self.orderKeys(of: actions)
        if waitFor <= committedTicket, closing.isEmpty, held.allSatisfy({ $0.keys.isDisjoint(with: keys) }) {
            carryOut(effects)
            return
        }
        held.append(HeldWork(ticket: waitFor, closing: closing, keys: keys, actions: effects))
        metrics.update { $0.heldActions = held.count }
    }

    /// An ended call's legs closed on their media loop: its record is written with their
    /// final figures, and the work held for it waits for that write's commit.
    private func legsClosed(_ record: CallRecord, _ statistics: [CallLegID: MediaLegStatistics]) {
        closingCalls.remove(record.callID)
        let written = recorder.persist(record, legs: Self.storedLegs(statistics, of: record, at: wallClock()))
        for index in held.indices where held[index].closing.contains(record.callID) {
            held[index].closing.remove(record.callID)
            if written.mustWait { held[index].ticket = max(held[index].ticket, written.ticket) }
        }
        if let waiters = recordWaiters.removeValue(forKey: record.callID) {
            for body in waiters { whenRecordsCommitted(body) }
        }
        if !performing { perform([]) }
    }

    /// Sends, media instructions and pushes, now.
    private func carryOut(_ actions: [CallAction]) {
        let time = now()
        for action in actions {
            switch action {
            case .send(let device, let message): deliver(message, to: device)
            case .notify(let party, let notification):
                if case .answered(let callID, _, _) = notification { sendACE(callID: callID) }
                tell(party, notification)
                if case .established(let callID, _) = notification { tellTalkers(joining: callID, party) }
            case .media(let instruction):
                let application = registry.record(of: instruction.callID)?.applicationKey ?? ""
                anchor?.perform(instruction, applicationKey: application, now: time)
            case .push(let instruction):
                log.info("push.call", ["call": instruction.callID, "devices": instruction.devices.map(\.deviceID).joined(separator: ",")])
                push?.send(instruction)
            case .recordPlayout(let callID, let role, let playout):
                log.info("call.stats", ["call": callID, "leg": role.rawValue, "concealed": String(playout.framesConcealed)])
                recorder.recordPlayout(callID: callID, role: role, playout)
            case .record: break
            }
        }
    }

    /// Hands a call notification to the party's adapter: a device hears it as the frame
    /// `DeviceAdapter` renders, through its session; a SIP party through the SIP port.
    private func tell(_ party: Party, _ notification: CallNotification) {
        switch party {
        case .device(let device):
            if let frame = DeviceAdapter.frame(for: notification) { deliver(frame, to: device) }
        case .sip(let sip):
            guard let sipCalls else {
                // Unreachable: without a port the registry places no SIP call.
                log.error("sip.unavailable", ["call": sip.callID, "party": sip.description])
                return
            }
            sipCalls.tell(sip, notification)
        case .room:
            break  // a room answers at once and its media is the anchor's mixer: nothing to tell
        }
    }

    /// A report of the SIP user agent about a call's SIP party (on the loop).
    private func sipReported(_ event: SIPCallEvent, from party: SIPParty) {
        guard !stopped else { return }
        let described: String =
            switch event {
            case .placed: "placed"
            case .trying: "trying"
            case .ringing(let sdp, _): sdp == nil ? "ringing" : "ringing with SDP"
            case .answered(let sdp, _): sdp == nil ? "answered" : "answered with SDP"
            case .failed(let status, _): "failed \(status)"
            case .hungUp: "hungUp"
            case .dtmf: "dtmf"
            case .held(let held): held ? "held" : "resumed"
            }
        log.info("sip.report", ["call": party.callID, "event": described])
        if let answeredByServer, answeredByServer.handles(party.callID) { return answeredByServer.sipReported(event, callID: party.callID) }
        if let callouts, callouts.handles(party.callID) { return callouts.sipReported(event, callID: party.callID) }
        if case .hungUp = event, let record = registry.record(of: party.callID) {
            noteHangUp(record, by: record.callerDeviceID == nil && record.caller == party.address ? .caller : .callee)
        }
        perform(registry.handleSIP(event, from: party, now: now()))
    }

    /// A call came in over SIP (on the loop): it starts toward the user or room its number's
    /// rule names, or its caller is told it ended with the refusal (a final failure).
    private func sipOffered(_ call: InboundSIPCall) {
        guard let target = call.target else { return askBackend(call) }
        start(call, to: target)
    }

    /// Starts a call in toward `target`, or refuses it.
    /// A phone or SIP `target` bridges it to a call out presenting `cli` (docs/sip.md).
    private func start(_ call: InboundSIPCall, to target: PartyAddress, cli: String? = nil, maximumLength: Duration? = nil,
                       ringTimeout: Duration? = nil) {
        let time = now()
        do throws(CallingError) {
            guard !stopped else { throw CallingError.stopping(callID: call.party.callID) }
            let actions = try registry.startInbound(
                callID: call.party.callID, from: call.party, applicationKey: call.applicationKey, to: target, offer: call.offer,
                headers: call.headers, cli: cli, maximumLength: maximumLength, ringTimeout: ringTimeout, now: time)
            log.info("sip.inbound.call", ["call": call.party.callID, "from": call.party.description, "to": target.address])
            perform(actions)
        } catch {
            refuse(call, code: error.signalingCode, message: error.reason)
            sendRefusedDiCE(call, reason: error.signalingCode == .destinationNotFound ? .userNotFound : .generalError)
        }
    }

    private func refuse(_ call: InboundSIPCall, code: SignalingErrorCode, message: String) {
        log.info("sip.inbound.refused", ["call": call.party.callID, "code": code.rawValue, "reason": message])
        refusedNow = CallError(code: code.rawValue, message: String(message.prefix(512)))
        let time = now().unixMilliseconds
        sipCalls?.tell(call.party, .ended(
            callID: call.party.callID, cause: .error, error: .init(code: code, message: message),
            details: CallTimes(startedTime: time, endedTime: time)))
    }

    // MARK: The application's backend (docs/backend.md)

    /// What a call in routed by its backend needs for its DiCE.
    struct BackendCall {
        var applicationKey: String
        var from: String
        var to: Destination
        var headers: [CallHeader]
        /// Set when the backend's answer refused the call: its DiCE gives this reason.
        var refusal: DisconnectReason?
        /// Set when the backend ended the call after its answer (its ACE answered
        /// `hangup`, or failed): its DiCE gives this reason.
        var endReason: DisconnectReason?
        /// The ACE went out.
        var answeredEventSent = false
        /// The cookies its backend set (`setCookie`), as later callbacks' `custom`.
        var custom: String?
        /// When its ICE went out (Unix milliseconds): a record made later starts then.
        var startedTime: Int64?
        /// When the server answered it itself (prompts, a menu, park) before it went on to a
        /// callee: its DiCE's `duration` counts from then, as its record's does.
        var serverAnsweredTime: Int64?
        /// It has a record already (the server answered it): a refusal of what it goes on
        /// to is kept on that record's timeline as any DiCE's outcome.
        var recorded = false
    }

    /// A call in to a number its application's backend routes: the ICE goes out, and the
    /// call waits (its caller heard 100 Trying) for the SVAML answer, which places it.
    private func askBackend(_ call: InboundSIPCall) {
        guard let backend, backend.sends(.ice, applicationKey: call.applicationKey) else {
            return refuse(call, code: .destinationUnavailable, message: "the number is routed by the application's backend, and it has no callback URL for ice")
        }
        let callID = call.party.callID
        let headers = call.headers.sorted { $0.key < $1.key }.map { CallHeader(key: $0.key, value: $0.value) }
        let from = call.party.address.address
        let to = Destination(kind: .did, endpoint: call.dialled)
        let origination: CallDomain = call.party.address.kind == .phone ? .pstn : .sip
        guard let timestamp = try? SinchTimestamp(unixMilliseconds: now().unixMilliseconds) else { return }
        let event = IncomingCallEvent(
            header: CallbackHeader(callID: callID, timestamp: timestamp, applicationKey: call.applicationKey),
            cli: from, to: to, domain: .mxp, originationType: origination, callHeaders: headers)
        backendCalls[callID] = BackendCall(applicationKey: call.applicationKey, from: from, to: to, headers: headers,
                                           startedTime: now().unixMilliseconds)
        log.info("backend.ice", ["call": callID, "app": call.applicationKey, "to": call.dialled])
        backend.post(.incoming(event), applicationKey: call.applicationKey) { [loop, weak self] result in
            guard let engine = self else { return }
            loop.execute { engine.backendAnswered(call, result) }
        }
    }

    /// The backend's answer to a call's ICE (on the loop): its action places the call
    /// (`connectMxp` to a user, `connectConf` to a room), refuses it (`hangup`), or the
    /// call is refused with the DiCE reason of what went wrong.
    private func backendAnswered(_ call: InboundSIPCall, _ result: Result<SVAMLResponse?, BackendCallbacks.Failure>) {
        guard !stopped else { return }
        switch result {
        case .failure(let failure):
            log.warning("backend.ice.failed", ["call": call.party.callID, "reason": failure.reason.rawValue, "detail": failure.message])
            refuse(call, code: .destinationUnavailable, message: "the backend's answer: \(failure.message)")
            sendRefusedDiCE(call, reason: failure.reason)
        case .success(let svaml?):
            if ServerAnsweredCalls.answers(svaml), let answeredByServer, let info = backendCalls.removeValue(forKey: call.party.callID) {
                return answeredByServer.take(call, context: info, svaml: svaml)
            }
            let cookies = svaml.instructions.compactMap { if case .setCookie(let key, let value) = $0 { (key: key, value: value) } else { nil } }
            if !cookies.isEmpty { backendCalls[call.party.callID]?.custom = ServerAnsweredCalls.custom(of: cookies) }
            switch svaml.action {
            case .connectMxp(let action):
                guard let destination = action.destination, destination.kind == .username else {
                    refuse(call, code: .badRequest, message: "connectMxp needs a destination of type username")
                    return sendRefusedDiCE(call, reason: .invalidSVAMLAction)
                }
                var routed = call
                for header in action.callHeaders { routed.headers[header.key] = header.value }
                backendCalls[call.party.callID]?.to = destination
                start(routed, to: .user(destination.endpoint))
            case .connectConf(let action):
                backendCalls[call.party.callID]?.to = Destination(kind: .conference, endpoint: action.conferenceID)
                start(call, to: .conference(action.conferenceID))
            case .connectPstn, .connectSip:
                do throws(SVAMLBridgeRoute.Refusal) {
                    guard let route = try SVAMLBridgeRoute(svaml.action, headers: call.headers) else { return }
                    var routed = call
                    routed.headers = route.headers
                    backendCalls[call.party.callID]?.to = route.destination
                    start(routed, to: route.target, cli: route.cli, maximumLength: route.maximumLength, ringTimeout: route.ringTimeout)
                } catch {
                    refuse(call, code: .badRequest, message: error.message)
                    sendRefusedDiCE(call, reason: .invalidSVAMLAction)
                }
            case .hangup:
                log.info("backend.ice.hangup", ["call": call.party.callID])
                refuse(call, code: .destinationUnavailable, message: "the backend hung up")
                sendRefusedDiCE(call, reason: .managerHangup)
            default:
                log.warning("backend.ice.unsupported", ["call": call.party.callID, "action": svaml.action.name.rawValue])
                refuse(call, code: .notImplemented, message: "SVAML action \(svaml.action.name.rawValue) is not supported for calls in yet")
                sendRefusedDiCE(call, reason: .invalidSVAMLAction)
            }
            // A placed call's recording starts with its media.
            recordings?.perform(svaml.instructions, callID: call.party.callID, applicationKey: call.applicationKey,
                                placed: registry.record(of: call.party.callID) != nil)
        case .success(nil):
            refuse(call, code: .destinationUnavailable, message: "the backend gave no SVAML")
            sendRefusedDiCE(call, reason: .callbackError)
        }
    }

    /// Runs SVAML on a call of `applicationKey` the server answered (a REST `PATCH` of the
    /// call); false when the application has no such call here (on the loop).
    func update(callID: String, applicationKey: String, svaml: SVAMLResponse) -> Bool {
        guard answeredByServer?.applicationKey(of: callID) == applicationKey || callouts?.applicationKey(of: callID) == applicationKey else {
            return false
        }
        return update(callID: callID, svaml: svaml)
    }

    /// Runs SVAML on a call the server answered (a REST `PATCH` of the call: `continue`,
    /// `park`, `hangup`, instructions); false when no such call is here (on the loop).
    func update(callID: String, svaml: SVAMLResponse) -> Bool {
        if case .hangup = svaml.action, svaml.instructions.isEmpty { return hangUp(callID: callID) }
        return answeredByServer?.update(callID: callID, svaml: svaml) ?? false
    }

    /// Hangs up a call the server answered (DiCE `MANAGERHANGUP`); false when no such call
    /// is here (on the loop).
    func hangUp(callID: String) -> Bool {
        answeredByServer?.hangUp(callID: callID) ?? callouts?.hangUp(callID: callID) ?? false
    }

    /// An app call whose backend routes it (`BackendRouter`): the ICE goes out, and the call
    /// waits in its routing state for the answer, which `backendRouted` turns into the
    /// router's decision.
    private func askBackend(route request: RouteRequest) {
        guard let backend, !stopped, let timestamp = try? SinchTimestamp(unixMilliseconds: now().unixMilliseconds) else { return }
        let applicationKey = request.caller.user.applicationKey
        let destination = Self.destination(of: request.destination)
        let headers = request.headers.sorted { $0.key < $1.key }.map { CallHeader(key: $0.key, value: $0.value) }
        let domain: CallDomain = switch request.destination.kind {
        case .phone: .pstn
        case .sip: .sip
        case .user, .conference: .mxp
        }
        let event = IncomingCallEvent(
            header: CallbackHeader(callID: request.callID, timestamp: timestamp, applicationKey: applicationKey),
            cli: request.cli, to: destination, domain: domain, originationType: .mxp, callHeaders: headers,
            user: request.caller.user.userID)
        backendCalls[request.callID] = BackendCall(
            applicationKey: applicationKey, from: request.caller.user.userID, to: destination, headers: headers)
        routingRequests[request.callID] = request
        log.info("backend.ice", ["call": request.callID, "app": applicationKey, "to": request.destination.address])
        backend.post(.incoming(event), applicationKey: applicationKey) { [loop, weak self] result in
            guard let engine = self else { return }
            loop.execute { engine.backendRouted(request, result) }
        }
    }

    /// The backend's answer to an app call's ICE (on the loop), as the router's decision.
    private func backendRouted(_ request: RouteRequest, _ result: Result<SVAMLResponse?, BackendCallbacks.Failure>) {
        routingRequests[request.callID] = nil
        guard !stopped else { return }
        let decision: RoutingDecision
        var instructions: [SVAMLInstruction] = []
        switch result {
        case .failure(let failure):
            log.warning("backend.ice.failed", ["call": request.callID, "reason": failure.reason.rawValue, "detail": failure.message])
            markDiCEReason(request.callID, failure.reason)
            decision = .reject(.init(code: .destinationUnavailable, message: "the application's backend: \(failure.message)".prefix(1024).description))
        case .success(nil):
            markDiCEReason(request.callID, .callbackError)
            decision = .reject(.init(code: .destinationUnavailable, message: "the application's backend gave no SVAML"))
        case .success(let svaml?):
            instructions = svaml.instructions
            switch svaml.action {
            case .connectMxp(let action):
                let user = action.destination.map(\.endpoint) ?? request.destination.address
                var routed = request
                routed.destination = .user(user)
                for header in action.callHeaders { routed.headers[header.key] = header.value }
                backendCalls[request.callID]?.to = Destination(kind: .username, endpoint: user)
                decision = PresenceRouter().route(routed, presence: registry.presence)
                    ?? .reject(.init(code: .destinationUnavailable, message: "destination user has no connected device"))
            case .connectPstn(let action):
                let number = action.number?.e164 ?? request.destination.address
                backendCalls[request.callID]?.to = Destination(kind: .number, endpoint: number)
                decision = .dialNumber(PhoneRoute(number: number, callerID: action.cli?.e164 ?? request.cli))
            case .connectSip(let action):
                var headers: [String: String] = [:]
                for header in action.callHeaders { headers[header.key] = header.value }
                let address = action.destination.endpoint.hasPrefix("sip:") ? String(action.destination.endpoint.dropFirst(4)) : action.destination.endpoint
                backendCalls[request.callID]?.to = Destination(kind: .sip, endpoint: address)
                decision = .dialSIP(uri: address, headers: headers)
            case .connectConf(let action):
                backendCalls[request.callID]?.to = Destination(kind: .conference, endpoint: action.conferenceID)
                decision = .joinRoom(action.conferenceID)
            case .hangup:
                log.info("backend.ice.hangup", ["call": request.callID])
                markDiCEReason(request.callID, .managerHangup)
                decision = .reject(.init(code: .destinationUnavailable, message: "the application's backend hung up"))
            default:
                log.warning("backend.ice.unsupported", ["call": request.callID, "action": svaml.action.name.rawValue])
                markDiCEReason(request.callID, .invalidSVAMLAction)
                decision = .reject(.init(code: .notImplemented, message: "SVAML action \(svaml.action.name.rawValue) is not supported yet"))
            }
        }
        perform(registry.handleRouting(decision, callID: request.callID, now: now()))
        recordings?.perform(instructions, callID: request.callID, applicationKey: request.caller.user.applicationKey,
                            placed: registry.record(of: request.callID) != nil)
    }

    /// The reason a call's DiCE gives when it ends refused (the backend's doing).
    private func markDiCEReason(_ callID: String, _ reason: DisconnectReason) {
        backendCalls[callID]?.refusal = reason
    }

    /// A protocol address as a callback's `to`.
    static func destination(of address: PartyAddress) -> Destination {
        switch address {
        case .user(let id): Destination(kind: .username, endpoint: id)
        case .phone(let number): Destination(kind: .number, endpoint: number)
        case .sip(let uri): Destination(kind: .sip, endpoint: uri)
        case .conference(let id): Destination(kind: .conference, endpoint: id)
        }
    }

    /// The DiCE of a call in refused before it started (or before it went on from the
    /// server's answer: then its duration counts from that answer, and its record keeps
    /// the outcome).
    private func sendRefusedDiCE(_ call: InboundSIPCall, reason: DisconnectReason) {
        guard let info = backendCalls.removeValue(forKey: call.party.callID) else { return }
        let time = now().unixMilliseconds
        let duration = info.serverAnsweredTime.map { max(0, time - $0) / 1000 } ?? 0
        if info.recorded {
            recorder.recordOutcome(callID: call.party.callID, applicationKey: info.applicationKey,
                                   SinchCallOutcome(result: .failed, reason: reason), at: time)
        }
        sendDiCE(callID: call.party.callID, info, result: .failed, reason: reason, durationSeconds: duration)
    }

    /// The DiCE of a call in its backend routed, once its record ended.
    private func sendDiCE(for record: CallRecord) {
        let side = hangUpSides.removeValue(forKey: record.callID)
        guard let info = backendCalls.removeValue(forKey: record.callID) else { return }
        let outcome = SinchCallOutcome(ended: record, hungUpBy: side, refusal: info.refusal)
        // The backend ended it after its answer (its ACE's `hangup`, or a failed ACE): that reason.
        let answered = record.times.answeredTime != nil
        let (result, reason) = info.endReason.map { (answered ? DisconnectResult.answered : .failed, $0) } ?? (outcome.result, outcome.reason)
        // A call the server answered first: its caller has talked since that answer.
        let ended = record.times.endedTime ?? now().unixMilliseconds
        let durationMillis = info.serverAnsweredTime.map { max(0, ended - $0) } ?? record.durationMillis ?? 0
        // Its record keeps the outcome (GET /calling/v1/calls/id/{callId} says what the DiCE says).
        recorder.recordOutcome(callID: record.callID, applicationKey: record.applicationKey,
                               SinchCallOutcome(result: result, reason: reason), at: ended)
        // Posted once the ended record is committed, so a backend that reads the call
        // (`GET /calling/v1/calls/id/{callId}`) when its DiCE arrives finds it ended.
        let post = { [self] in sendDiCE(callID: record.callID, info, result: result, reason: reason, durationSeconds: durationMillis / 1000) }
        if closingCalls.contains(record.callID) {
            recordWaiters[record.callID, default: []].append(post)
        } else {
            whenRecordsCommitted(post)
        }
    }

    /// Keeps who hung up a live call (the first hang-up only), and writes it to the call's
    /// timeline off the loop.
    private func noteHangUp(_ record: CallRecord, by side: SinchCallOutcome.HangUpSide) {
        guard record.state != .ended, hangUpSides[record.callID] == nil else { return }
        hangUpSides[record.callID] = side
        writeHangUpEvent(callID: record.callID, applicationKey: record.applicationKey, side: side)
    }

    /// Writes who hung up a call to its timeline, off the loop.
    private func writeHangUpEvent(callID: String, applicationKey key: String, side: SinchCallOutcome.HangUpSide) {
        let store = self.store
        let log = self.log
        let event = CallEvent(time: now().unixMilliseconds, kind: Self.hangUpEventKind, detail: ["by": side.rawValue])
        timelineWrites.async {
            do throws(StoreError) {
                try store.performAndWait { (store) throws(StoreError) in
                    _ = try store.recordCallEvent(callId: callID, applicationKey: key, event)
                }
            } catch {
                log.warning("timeline.failed", ["call": callID, "kind": event.kind, "error": error.description])
            }
        }
    }

    private func sendDiCE(callID: String, _ info: BackendCall, result: DisconnectResult, reason: DisconnectReason, durationSeconds: Int64) {
        guard let backend, backend.sends(.dice, applicationKey: info.applicationKey),
              let timestamp = try? SinchTimestamp(unixMilliseconds: now().unixMilliseconds) else { return }
        let event = DisconnectedCallEvent(
            header: CallbackHeader(callID: callID, timestamp: timestamp, custom: info.custom, applicationKey: info.applicationKey),
            result: result, reason: reason, durationSeconds: durationSeconds, from: info.from, to: info.to, callHeaders: info.headers)
        log.info("backend.dice", ["call": callID, "result": result.rawValue, "reason": reason.rawValue])
        backend.post(.disconnected(event), applicationKey: info.applicationKey) { _ in }
    }

    /// The ACE of a call its backend routed, once its callee answered (when the application
    /// takes `ace`): `continue` (or an answer with no action: `{}`, an empty body) lets it
    /// go on, `hangup` ends it (DiCE `MANAGERHANGUP`), and a failed callback ends it with
    /// its reason (CALLBACKERROR, INVALIDSVAMLACTION).
    private func sendACE(callID: String) {
        guard let info = backendCalls[callID], !info.answeredEventSent, let backend,
              backend.sends(.ace, applicationKey: info.applicationKey),
              let timestamp = try? SinchTimestamp(unixMilliseconds: now().unixMilliseconds) else { return }
        backendCalls[callID]?.answeredEventSent = true
        let event = AnsweredCallEvent(header: CallbackHeader(
            callID: callID, timestamp: timestamp, custom: info.custom, applicationKey: info.applicationKey))
        log.info("backend.ace", ["call": callID])
        backend.post(.answered(event), applicationKey: info.applicationKey) { [loop, weak self] result in
            guard let engine = self else { return }
            loop.execute { engine.aceAnswered(callID: callID, result) }
        }
    }

    private func aceAnswered(callID: String, _ result: Result<SVAMLResponse?, BackendCallbacks.Failure>) {
        guard !stopped, backendCalls[callID] != nil else { return }
        let reason: DisconnectReason
        switch result {
        case .success(let svaml?) where svaml.action == .continue:
            return log.info("backend.ace.continue", ["call": callID])
        case .failure(let failure) where failure.noAction:
            // A backend that has nothing to say about the answer (`{}`, an empty body).
            return log.info("backend.ace.continue", ["call": callID, "detail": "no action"])
        case .success(let svaml?) where svaml.action == .hangup:
            log.info("backend.ace.hangup", ["call": callID])
            reason = .managerHangup
        case .success(let svaml?):
            log.warning("backend.ace.unsupported", ["call": callID, "action": svaml.action.name.rawValue])
            reason = .invalidSVAMLAction
        case .success(nil):
            log.warning("backend.ace.failed", ["call": callID, "reason": DisconnectReason.callbackError.rawValue])
            reason = .callbackError
        case .failure(let failure):
            log.warning("backend.ace.failed", ["call": callID, "reason": failure.reason.rawValue, "detail": failure.message])
            reason = failure.reason
        }
        backendCalls[callID]?.endReason = reason
        // The call's timeline says the backend hung it up, as for the REST API's hang-ups.
        if let record = registry.record(of: callID) { noteHangUp(record, by: .api) }
        do throws(CallingError) { perform(try registry.hangUp(callID: callID, now: now())) } catch {
            log.info("backend.ace.late", ["call": callID, "reason": error.reason])
        }
    }

    /// Runs held work whose ticket is committed, in order: work waits while earlier held
    /// work of one of its calls or devices still waits.
    private func releaseHeldWork() {
        guard !held.isEmpty else { return }
        let current = held
        held = []
        var blocked: Set<OrderKey> = []
        var remaining: [HeldWork] = []
        for work in current {
            if work.ticket <= committedTicket, work.closing.isEmpty, blocked.isDisjoint(with: work.keys) {
                carryOut(work.actions)
            } else {
                blocked.formUnion(work.keys)
                remaining.append(work)
            }
        }
        held = remaining + held
        metrics.update { $0.heldActions = held.count }
    }

    /// The recorder's writer finished every write up to `ticket` (on the loop).
    private func storeCommitted(_ ticket: UInt64) {
        guard ticket > committedTicket else { return }
        committedTicket = ticket
        let pending = recorder.pendingWrites
        metrics.update { $0.storeWritesPending = pending }
        if !ticketWaiters.isEmpty {
            let ready = ticketWaiters.filter { $0.ticket <= ticket }
            ticketWaiters.removeAll { $0.ticket <= ticket }
            for waiter in ready { waiter.body() }
        }
        if !performing { perform([]) }
    }

    /// The calls and devices an action batch concerns: held work keeps its order with
    /// later work that shares one (docs/protocol.md: replies and events in order).
    private static func orderKeys(of actions: [CallAction]) -> Set<OrderKey> {
        var keys: Set<OrderKey> = []
        for action in actions {
            switch action {
            case .send(let device, let message):
                keys.insert(.device(device))
                if let callID = message.callID { keys.insert(.call(callID)) }
            case .notify(let party, let notification):
                if let device = party.device { keys.insert(.device(device)) }
                keys.insert(.call(notification.callID))
            case .media(let instruction): keys.insert(.call(instruction.callID))
            case .push(let instruction): keys.insert(.call(instruction.callID))
            case .record(let record): keys.insert(.call(record.callID))
            case .recordPlayout(let callID, _, _): keys.insert(.call(callID))
            }
        }
        return keys
    }

    private func mediaReported(_ event: MediaEvent, callID: String) {
        if let answeredByServer, answeredByServer.handles(callID) { return answeredByServer.mediaReported(event, callID: callID) }
        if let callouts, callouts.handles(callID) { return callouts.mediaReported(event, callID: callID) }
        pendingMedia.append((event, callID))
        if !performing { perform([]) }
    }

    private static func describe(_ event: MediaEvent) -> String {
        switch event {
        case .callerLegReady: "callerLegReady"
        case .calleeLegReady(let party, _): "calleeLegReady \(party.device?.deviceID ?? party.description)"
        case .legConnected(let leg): "legConnected \(leg)"
        case .legFailed(let leg, let reason): "legFailed \(leg): \(reason)"
        case .legInactive(let leg): "legInactive \(leg)"
        // Digits can be PINs or card numbers: the log names how many, not which.
        case .dtmfReceived(let leg, let digits): "dtmfReceived \(leg): \(digits.count) digit(s)"
        }
    }

    /// The caller's leg and the answering device's leg, as the store keeps them (one row
    /// per role; legs of devices that only rang are not kept).
    static func storedLegs(_ statistics: [CallLegID: MediaLegStatistics], of record: CallRecord, at time: Int64) -> [CallLeg] {
        var kept: [(leg: CallLegID, address: PartyAddress, deviceID: String?)] = [(.caller, record.caller, record.callerDeviceID)]
        if let answering = statistics.keys.first(where: record.isAnsweringLeg) { kept.append((answering, record.callee, record.answeredDeviceID)) }
        return kept.compactMap { leg, address, deviceID in
            statistics[leg].map {
                CallLeg(role: CallLegRole(leg), userId: address.address, deviceId: deviceID, updatedTime: time,
                        statistics: CallLegStatistics($0))
            }
        }
    }

    /// A reply made outside `perform` (push answers): behind the device's held replies and
    /// events when it has any, so it sees them in order; else at once.
    private func deliverInOrder(_ message: SignalingMessage, to device: Device) {
        if !held.isEmpty, held.contains(where: { $0.keys.contains(.device(device)) }) {
            held.append(HeldWork(ticket: 0, keys: [.device(device)], actions: [.send(device, message)]))
            return
        }
        deliver(message, to: device)
    }

    /// Sends to the device's connection, or keeps the message (bounded) while its session
    /// waits for a resume (the session core decides); a device whose session another node
    /// holds gets it through the bus; without a session anywhere it is dropped.
    func deliver(_ message: SignalingMessage, to device: Device) {
        if sessions.sessionID(of: device) == nil, let holder = directory.node(of: device), holder != node,
           bus.deliver(message, to: device, on: holder) {
            logMessage("signal.forwarded", message, who: device.description + "@" + holder.description)
            return
        }
        session { $0.deliver(message, to: device) }
    }

    private func rescheduleCallTimer() {
        guard !stopped, let next = registry.nextDeadline else {
            if let timer = callTimer { loop.cancel(timer.id) }
            callTimer = nil
            return
        }
        if let timer = callTimer {
            if timer.at == next { return }
            loop.cancel(timer.id)
        }
        let id = loop.schedule(at: next) { [self] in
            callTimer = nil
            perform(registry.handleTimeout(now: now()))
        }
        callTimer = (id, next)
    }

    // MARK: REST and lifecycle (called on the loop)

    /// Hangs up a live call of `applicationKey`; nil when the engine has no such live call.
    /// `recorded` runs on the loop once the ended record is committed (for `.hungUp`).
    func hangUpLive(callID: String, applicationKey: String, recorded: @escaping () -> Void = {}) -> HangUpOutcome? {
        guard let record = registry.record(of: callID) else { return nil }
        guard record.applicationKey == applicationKey else { return .notFound }
        do throws(CallingError) {
            noteHangUp(record, by: .api)
            let actions = try registry.hangUp(callID: callID, now: now())
            log.info("call.rest.hangup", ["call": callID])
            perform(actions)
            if closingCalls.contains(callID) {
                // Its legs are closing: the ended record is written once they did.
                recordWaiters[callID, default: []].append(recorded)
            } else {
                whenRecordsCommitted(recorded)
            }
            return .hungUp
        } catch {
            return .alreadyEnded
        }
    }

    /// Runs `body` on the loop once every record write handed over so far is done.
    func whenRecordsCommitted(_ body: @escaping () -> Void) {
        let ticket = recorder.lastTicket
        if ticket <= committedTicket { return body() }
        ticketWaiters.append((ticket, body))
    }

    /// Places a callout the server plays to itself (`ttsCallout`, `customCallout`; engine
    /// loop): the call's id, or the refusal.
    func serverCallout(_ request: ServerCalloutRequest, applicationKey: String) -> CalloutOutcome {
        guard !stopped, let callouts else { return .refused(code: .internalError, message: "the server is stopping") }
        let outcome = callouts.place(request, applicationKey: applicationKey, callID: UUID().uuidString.lowercased())
        dialling?.report(registry.takeDiallingRefusals())
        return outcome
    }

    /// What the callouts borrow of the engine: the registry's dialling policy, the
    /// recorder, the timeline.
    private func calloutHooks() -> ServerCallouts.Hooks {
        ServerCallouts.Hooks(
            admit: { [unowned self] target, applicationKey, cli, callID in
                do throws(CallingError) {
                    return .success(try registry.admitCallout(to: target, applicationKey: applicationKey, cli: cli, callID: callID, now: now()))
                } catch {
                    return .failure(error)
                }
            },
            ended: { [unowned self] callID in registry.calloutEnded(callID) },
            persist: { [unowned self] record, legs in recorder.persist(record, legs: legs) },
            whenCommitted: { [unowned self] body in whenRecordsCommitted(body) },
            noteHangUp: { [unowned self] record, side in
                writeHangUpEvent(callID: record.callID, applicationKey: record.applicationKey, side: side)
            })
    }

    /// Starts a conference callout (engine loop): the room `room` of `applicationKey` calls
    /// the user `userID` (ringing their devices, or pushing them), and their answered leg
    /// joins the room. The call's id, or the refusal.
    func conferenceCallout(_ request: ConferenceCalloutRequest, applicationKey: String) -> CalloutOutcome {
        guard !stopped else { return .refused(code: .internalError, message: "the server is stopping") }
        let callID = UUID().uuidString.lowercased()
        let callee = AppUser(applicationKey: applicationKey, userID: request.userID)
        do throws(CallingError) {
            let actions = try registry.startCallout(
                callID: callID, room: request.conferenceID, to: callee, headers: request.headers, displayName: request.displayName, now: now())
            log.info("conference.callout", ["call": callID, "room": request.conferenceID, "user": request.userID])
            perform(actions)
            return .placed(callID: callID)
        } catch {
            return .refused(code: error.signalingCode, message: error.reason)
        }
    }

    /// The participants of a conference room of `applicationKey` now (engine loop): every
    /// live call to it that the room answered, with the mixer's view of each; `deliver`
    /// gets them on the loop, oldest first (empty: nobody is in such a room).
    func conferenceParticipants(_ room: String, applicationKey: String, deliver: @escaping @Sendable ([ConferenceParticipant]) -> Void) {
        let time = now()
        let calls = roomCalls(room, applicationKey: applicationKey)
        guard !calls.isEmpty, let anchor else { return deliver([]) }
        anchor.roomState(applicationKey: applicationKey, room: room) { media in
            deliver(calls.map { record in
                let joined = record.times.answeredTime ?? record.times.startedTime
                let state = media[record.callID]
                return ConferenceParticipant(
                    id: record.callID, cli: record.roomParticipant?.user.userID ?? record.caller.address, duration: max(0, Int((time.unixMilliseconds - joined) / 1000)),
                    muted: state?.muted ?? false, onhold: state?.onHold ?? false, talking: state?.talking ?? false)
            })
        }
    }

    /// Mutes, unmutes, holds or resumes a participant (engine loop); `done` gets the
    /// outcome on the loop.
    func manageParticipant(_ command: ConferenceCommand, callID: String, room: String, applicationKey: String,
                           done: @escaping @Sendable (ConferenceOutcome) -> Void) {
        let calls = roomCalls(room, applicationKey: applicationKey)
        guard !calls.isEmpty else { return done(.roomNotFound) }
        guard calls.contains(where: { $0.callID == callID }), let anchor else { return done(.participantNotFound) }
        anchor.control(command, callID: callID, applicationKey: applicationKey, room: room) { applied in
            done(applied ? .done : .participantNotFound)
        }
    }

    /// Ends participants' calls as `DELETE /v1/calls/{id}` does (`hungUp`): one (`callID`)
    /// or, when nil, all of the room (engine loop); how many were ended, nil when the room
    /// had nobody or not that participant.
    func kickFromRoom(_ room: String, callID: String?, applicationKey: String) -> ConferenceOutcome {
        let calls = roomCalls(room, applicationKey: applicationKey)
        guard !calls.isEmpty else { return .roomNotFound }
        let kicked = calls.filter { callID == nil || $0.callID == callID }
        guard !kicked.isEmpty else { return .participantNotFound }
        for record in kicked {
            log.info("conference.kick", ["room": room, "call": record.callID])
            _ = hangUpLive(callID: record.callID, applicationKey: applicationKey)
        }
        return .done
    }

    /// The talkers of a room changed (engine loop, from the anchor, paced): every
    /// participant whose call is established hears `call.talking` on its caller device,
    /// the talkers named by call id and calling user, loudest first. Behind what that
    /// device still has held, so it never hears of talkers before its `call.established`.
    private func roomTalkersChanged(_ room: RoomKey, talkers: [String]) {
        guard !stopped else { return }
        let calls = roomCalls(room.room, applicationKey: room.applicationKey)
        guard !calls.isEmpty else {
            roomTalkers[room] = nil
            return
        }
        roomTalkers[room] = talkers
        let named = Self.named(talkers, in: calls)
        log.debug("conference.talkers", ["room": room.description, "talkers": named.map(\.callID).joined(separator: ",")])
        for record in calls where record.state == .established {
            guard let device = record.roomParticipant else { continue }
            if let frame = DeviceAdapter.frame(for: .talking(callID: record.callID, talkers: named)) { deliverInOrder(frame, to: device) }
        }
    }

    /// A participant's call was just established (`party` was told): when its room has
    /// talkers, it hears them now, right after its `call.established`.
    private func tellTalkers(joining callID: String, _ party: Party) {
        guard let record = registry.record(of: callID), let name = record.conferenceID, party.device != nil,
              let talkers = roomTalkers[RoomKey(applicationKey: record.applicationKey, room: name)], !talkers.isEmpty else { return }
        tell(party, .talking(callID: callID, talkers: Self.named(talkers, in: roomCalls(name, applicationKey: record.applicationKey))))
    }

    /// Talkers by call id, named by their calls' callers; a talker whose call the registry
    /// no longer has (it just left) is not named.
    private static func named(_ talkers: [String], in calls: [CallRecord]) -> [SignalingMessage.CallTalking.Talker] {
        var callers: [String: String] = [:]
        for record in calls { callers[record.callID] = record.roomParticipant?.user.userID ?? record.caller.address }
        return talkers.prefix(SignalingLimits.maxTalkers).compactMap { id in
            callers[id].map { SignalingMessage.CallTalking.Talker(callID: id, userID: $0) }
        }
    }

    /// The live calls in a room of `applicationKey` that the room answered, oldest first.
    private func roomCalls(_ room: String, applicationKey: String) -> [CallRecord] {
        registry.activeCalls
            .filter { $0.applicationKey == applicationKey && $0.conferenceID == room && $0.times.answeredTime != nil && $0.state != .ended }
            .sorted { $0.times.startedTime < $1.times.startedTime }
    }

    /// The conference rooms' figures (engine loop), handed to `deliver` on the loop.
    func conferenceStatistics(deliver: @escaping @Sendable (ConferenceStatistics) -> Void) {
        guard let anchor else { return deliver(ConferenceStatistics()) }
        anchor.conferenceStatistics(deliver: deliver)
    }

    func liveCallCounts() -> [CallState: Int] {
        var counts: [CallState: Int] = [:]
        for record in registry.activeCalls { counts[record.state, default: 0] += 1 }
        return counts
    }

    /// Ends every call (`error` `internal_error` "server shutting down"), tells every
    /// connection `shutting_down`, closes the media legs and waits for the records.
    func stop() {
        guard !stopped else { return }
        backend?.settings.stop()
        // Closes already handed to the media loops finish and write their records first;
        // the calls ended now close synchronously, so every record is written before the
        // flush below.
        stopping = true
        answeredByServer?.endAll()
        callouts?.endAll()
        anchor?.finishPendingCloses()
        perform(registry.endAll(.init(code: .internalError, message: "server shutting down"), now: now()))
        // The ended records, then the `call.ended` they hold back (bounded: a store locked
        // past it leaves those calls to the next start's recovery).
        if !recorder.flush(timeout: configuration.shutdownStoreTimeout) {
            log.error("store.flush.timeout", ["pending": String(recorder.pendingWrites)])
        }
        storeCommitted(recorder.doneTicket)
        session { $0.stop() }
        stopped = true
        if let timer = callTimer { loop.cancel(timer.id) }
        callTimer = nil
        if let nonceTimer { loop.cancel(nonceTimer) }
        nonceTimer = nil
        if let statisticsTimer { loop.cancel(statisticsTimer) }
        statisticsTimer = nil
        dialling?.stop()
        if let sessionTimer { loop.cancel(sessionTimer.id) }
        sessionTimer = nil
        // This node's sessions end with it.
        bus.detach(node: node)
        for device in directory.devices(on: node) { directory.sessionEnded(device, on: node) }
        anchor?.closeEverything()
        recordings?.finishWrites()
        push?.stop()
        recorder.flush(timeout: configuration.shutdownStoreTimeout)
        // Nobody waits past the stop, committed or not (the next start recovers the rest).
        let waiters = ticketWaiters.map(\.body) + recordWaiters.values.flatMap { $0 }
        ticketWaiters = []
        recordWaiters = [:]
        for waiter in waiters { waiter() }
        log.info("engine.stopped", ["connections": String(sessions.connectionCount)])
    }

    /// Media legs open now (tests, metrics).
    var mediaLegCount: Int { anchor?.legCount ?? 0 }
    var mediaPortsInUse: Int { anchor?.portsInUse ?? 0 }
}

/// Actions held until the store has committed `ticket`, in the order they were made.
private struct HeldWork {
    var ticket: UInt64
    /// Ended calls whose legs' final figures (and so their records) are still to come.
    var closing: Set<String> = []
    let keys: Set<OrderKey>
    let actions: [CallAction]
}

/// What held work keeps its order with: a call, or a device's connection.
private enum OrderKey: Hashable {
    case call(String)
    case device(Device)
}

extension SignalingMessage {
    /// `hello.ok`, which opens a connection's conversation and is never held.
    var isHelloOK: Bool {
        if case .helloOK = self { true } else { false }
    }
}

extension MediaInstruction {
    /// The call the instruction is for.
    var callID: String {
        switch self {
        case .answerCaller(let callID, _, _), .joinRoom(let callID, _, _), .seatCallout(let callID, _), .answerSIPCaller(let callID, _, _),
             .offerCallee(let callID, _),
             .acceptAnswer(let callID, _, _), .bridge(let callID, _),
             .sendDTMF(let callID, _, _), .setHold(let callID, _, _), .closeLeg(let callID, _), .closeAll(let callID):
            callID
        }
    }
}
