import Dispatch
import Foundation
import ParleyAuth
import ParleyCallModel
import ParleyCalling
import ParleyCrypto
import ParleyEdge
import ParleyMediaLeg
import ParleyNetCore
import ParleyNetLinux
import ParleyPush
import ParleySignaling
import ParleyStore
import ParleyWebSocket
import ParleyWireCore
import Synchronization

/// The signaling session layer and call engine of parleyd: every WebSocket on `/v1/ws`,
/// every device session, the `CallRegistry`, the media anchor and the call records.
///
/// Everything here runs on one `EventLoop` of its own (`loop`): edge callbacks hop onto
/// it with `loop.execute`, timers are the loop's, and the media anchor's reports come back
/// onto it from the media loops. The registry is therefore touched by one thread only, in
/// the order events happened. SQLite never runs on an edge loop, on this loop or on the cooperative
/// pool: reads for `hello` go to a read connection of their own (`helloStore`), record
/// writes to `CallRecorder`'s writer. Actions that depend on a record being committed
/// (a new call's `result` and what follows it, an ended call's `call.ended`) wait for
/// its ticket as `HeldWork` while everything else goes on; a locked or failing store
/// therefore stalls only the calls whose records it cannot take yet, never media.
final class CallEngine: @unchecked Sendable {
    // @unchecked: all mutable state is used on `loop`'s thread only (every entry point hops
    // onto it first), so it is never accessed concurrently.

    /// The subprotocol of docs/protocol.md version 1.
    static let subprotocol = "parley.v1"
    /// Messages kept for a device whose connection is away, at most.
    static let maxBufferedMessages = 256
    static let serverVersion = "parleyd/0.1"

    let loop: EventLoop
    private let configuration: ServerConfiguration
    private let log: ServerLog
    private let metrics: ServerMetrics
    private let store: StoreQueue
    /// A connection of its own for `hello`'s application lookups, so a slow write on
    /// `store` (push registrations, timelines) never holds up a sign-in.
    private let helloStore: StoreQueue
    private var registry: CallRegistry
    private var nonces = NonceReplayCache()
    private let verifier = TokenVerifier()
    private var connections: [UInt64: SignalingConnection] = [:]
    private var sessions: [Device: SignalingSession] = [:]
    private var anchor: MediaAnchor?
    private let recorder: CallRecorder
    /// Push registration, sending and relay checks (nil only if libcurl failed to start).
    private var push: PushCoordinator?
    /// Store reads for `hello` (application lookups), off the loop.
    private let reads = DispatchQueue(label: "parley.engine.reads")
    private var callTimer: (id: TimerID, at: ContinuousClock.Instant)?
    private var nonceTimer: TimerID?
    private var statisticsTimer: TimerID?
    private var pendingMedia: [(event: MediaEvent, callID: String)] = []
    /// Actions waiting for the store to commit a record they depend on, in order.
    private var held: [HeldWork] = []
    /// The highest store ticket known to be done (`CallRecorder`).
    private var committedTicket: UInt64 = 0
    /// Callbacks waiting for a ticket (a REST hang-up answers once the record is ended).
    private var ticketWaiters: [(ticket: UInt64, body: () -> Void)] = []
    private var performing = false
    private var stopped = false

    init(loop: EventLoop, configuration: ServerConfiguration, log: ServerLog, metrics: ServerMetrics, store: StoreQueue,
         helloStore: StoreQueue, recorder: CallRecorder, certificate: DTLSCertificate, knownUsers: [AppUser]) throws(NetError) {
        self.loop = loop
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
        registry = CallRegistry(configuration: calls)
        for user in knownUsers { registry.markKnown(user) }
        self.recorder = recorder
        anchor = try MediaAnchor(loop: loop, mediaLoopCount: configuration.mediaLoopCount, configuration: configuration,
                                 certificate: certificate, log: log, metrics: metrics,
                                 report: { [unowned self] event, callID in self.mediaReported(event, callID: callID) })
        do {
            push = try PushCoordinator(
                configuration: configuration, store: store, log: log,
                deliver: { [loop] body in loop.execute(body) },
                pushDevicesChanged: { [unowned self] user, devices in self.registry.setPushDevices(user, deviceIDs: devices) })
        } catch {
            log.error("push.unavailable", ["error": error.description])
        }
        recorder.onCommitted { [loop, weak self] ticket in
            guard let engine = self else { return }
            loop.execute { engine.storeCommitted(ticket) }
        }
        loop.execute {
            self.scheduleNonceCleanup()
            self.scheduleLegStatistics()
        }
        push?.loadPushDevices { [unowned self] devices in
            for (user, ids) in devices { self.registry.setPushDevices(user, deviceIDs: ids) }
        }
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
                loop.execute { self.opened(socket, now: now) }
            },
            onMessage: { [self] socket, message in
                switch message {
                case .text(let text):
                    let now = ContinuousClock.now
                    loop.execute { self.received(text, on: socket, now: now) }
                case .binary:
                    socket.close(code: .unsupportedData, reason: "binary frames are not part of the protocol")
                }
            },
            onClose: { [self] socket, close in
                loop.execute { self.closed(socket, close) }
            },
            onRateLimited: { [self] socket in
                // Queued behind the messages the edge handed over before, so those are
                // answered before the close (docs/protocol.md, Limits).
                loop.execute { self.rateLimited(socket) }
            })
    }

    // MARK: Connections

    private func opened(_ socket: EdgeWebSocket, now: ContinuousClock.Instant) {
        guard !stopped else {
            socket.close(code: .goingAway, reason: "server shutting down")
            return
        }
        let connection = SignalingConnection(socket: socket, now: now, requests: RequestRateLimiter(
            perSecond: configuration.maxRequestsPerSecond, burst: configuration.requestBurst))
        connections[socket.id] = connection
        metrics.update {
            $0.connectionsOpen += 1
            $0.connectionsTotal += 1
        }
        log.info("ws.open", ["conn": String(socket.id), "remote": socket.remoteAddress.description])
        connection.helloTimer = loop.schedule(after: configuration.helloTimeout) { [self] in
            guard let connection = connections[socket.id], connection.device == nil else { return }
            log.info("ws.hello.timeout", ["conn": String(socket.id)])
            close(connection, code: 4002, reason: "no hello within \(configuration.helloTimeout)")
        }
    }

    private func closed(_ socket: EdgeWebSocket, _ close: WebSocketClose) {
        guard let connection = connections.removeValue(forKey: socket.id) else { return }
        cancelTimers(of: connection)
        metrics.update { $0.connectionsOpen -= 1 }
        log.info("ws.close", ["conn": String(socket.id), "code": close.code.map { String($0.rawValue) } ?? "none"])
        guard let device = connection.device, var session = sessions[device], session.connectionID == socket.id else { return }
        if close.code == .normalClosure {
            // 1000 from the device means it logged out (docs/protocol.md, Close codes): the
            // session ends now, not after the reconnect grace, and its calls are hung up as
            // if it had sent call.hangup (canceled, denied or hungUp, by the call's state).
            sessions[device] = nil
            let now = ServerClock.now()
            for callID in registry.callIDs(of: device).sorted() {
                perform(registry.handleRequest(.callHangup(.init(requestID: "logout", callID: callID)), from: device, now: now))
            }
            perform(registry.deviceDisconnected(device, now: now))
            log.info("session.closed", ["session": session.id, "device": device.description])
            return
        }
        session.connectionID = nil
        let sessionID = session.id
        session.expiryTimer = loop.schedule(after: configuration.reconnectGrace) { [self] in
            guard let session = sessions[device], session.id == sessionID, session.connectionID == nil else { return }
            sessions[device] = nil
            log.info("session.expired", ["session": sessionID, "device": device.description,
                                         "dropped": String(session.buffered.count + session.droppedWhileAway)])
        }
        sessions[device] = session
        perform(registry.deviceDisconnected(device, now: ServerClock.now()))
    }

    // MARK: Rate limit (docs/protocol.md, Limits)

    /// The edge's hard limit: close with 4005, but only after every request taken before
    /// has its reply (some are answered off the loop; see `repliesPending`).
    private func rateLimited(_ socket: EdgeWebSocket) {
        guard let connection = connections[socket.id], !connection.closing else { return }
        connection.closeWhenAnswered = true
        closeIfAnswered(connection)
    }

    private func closeIfAnswered(_ connection: SignalingConnection) {
        guard connection.closeWhenAnswered, !connection.closing, connection.repliesPending == 0,
              connection.phase != .authenticating else { return }
        log.info("ws.rate_limited", ["conn": String(connection.socket.id), "device": connection.device?.description ?? "-"])
        reply(.error(.init(replyTo: nil, code: .rateLimited, message: "message rate limit exceeded; closing")), on: connection)
        close(connection, code: 4005, reason: "message rate limit exceeded")
    }

    /// Counts a request answered later; call the returned closure (on the loop) once its
    /// reply went out.
    private func replyPending(on connection: SignalingConnection) -> @Sendable () -> Void {
        connection.repliesPending += 1
        return { [self] in
            connection.repliesPending -= 1
            closeIfAnswered(connection)
        }
    }

    private func close(_ connection: SignalingConnection, code: UInt16, reason: String) {
        connection.closing = true
        cancelTimers(of: connection)
        connection.socket.close(code: WebSocketCloseCode(rawValue: code), reason: reason)
    }

    private func cancelTimers(of connection: SignalingConnection) {
        if let timer = connection.helloTimer { loop.cancel(timer) }
        if let timer = connection.heartbeatTimer { loop.cancel(timer) }
        connection.helloTimer = nil
        connection.heartbeatTimer = nil
    }

    // MARK: Frames

    private func received(_ text: String, on socket: EdgeWebSocket, now: ContinuousClock.Instant) {
        guard let connection = connections[socket.id], !connection.closing, !stopped else { return }
        connection.lastReceived = now
        // Every frame counts, hello and ping included; one over the soft limit gets
        // rate_limited instead of being carried out.
        let withinRate = connection.requests.allow(at: now)
        let message: SignalingMessage
        do throws(SignalingError) {
            message = try SignalingCodec.decode(Array(text.utf8), maxFrameSize: configuration.maxFrameSize, sender: .deviceToServer)
        } catch {
            guard withinRate else { return refuseOverRate(error.requestID, on: connection) }
            log.info("signal.refused", ["conn": String(socket.id), "code": error.code.rawValue, "reason": error.description])
            reply(SignalingCodec.errorReply(for: error), on: connection)
            if error.code == .unsupportedVersion, connection.phase == .awaitingHello, Self.namesHello(text) {
                close(connection, code: 4006, reason: "unsupported protocol version")
            }
            return
        }
        logMessage("signal.in", message, who: connection.device?.description ?? "conn \(socket.id)")
        guard withinRate else { return refuseOverRate(message.requestID, on: connection) }
        if case .ping(let ping) = message {
            reply(.pong(.init(replyTo: ping.requestID)), on: connection)
            return
        }
        if case .hello(let hello) = message {
            guard connection.phase == .awaitingHello else {
                reply(.error(.init(replyTo: hello.requestID, code: .alreadyAuthenticated, message: "this connection already sent hello")),
                      on: connection)
                return
            }
            connection.phase = .authenticating
            lookUpApplication(for: hello, connectionID: socket.id)
            return
        }
        guard let device = connection.device else {
            reply(.error(.init(replyTo: message.requestID, code: .notAuthenticated, message: "send hello first")), on: connection)
            return
        }
        switch message {
        case .pushRegister(let request): pushRegister(request, from: device, answered: replyPending(on: connection))
        case .pushUnregister(let request): pushUnregister(request, from: device, answered: replyPending(on: connection))
        case .pushRelay(let request): pushRelay(request, from: device, answered: replyPending(on: connection))
        default:
            perform(registry.handleRequest(message, from: device, now: ServerClock.now()))
        }
    }

    private func refuseOverRate(_ requestID: String?, on connection: SignalingConnection) {
        reply(.error(.init(replyTo: requestID, code: .rateLimited,
                           message: "more than \(configuration.maxRequestsPerSecond) requests per second (burst \(configuration.requestBurst))")),
              on: connection)
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
            perform(registry.relayPush(callID: callID, requestID: request.requestID, from: device, now: ServerClock.now()))
        }
    }

    /// Whether a frame that failed the version check is a `hello` (the codec stops before
    /// reading `type`; the frame is valid JSON by then). Decides only the 4006 close.
    /// Read with the same strict parser as every frame, never Foundation's, which lets
    /// through what the codec refuses (a trailing comma, nesting past the limit).
    static func namesHello(_ text: String) -> Bool {
        guard let object = try? StrictJSONParser.parse(Array(text.utf8), maxDepth: SignalingLimits.maxDepth) else { return false }
        return object["type"]?.stringValue == "hello"
    }

    private func reply(_ message: SignalingMessage, on connection: SignalingConnection) {
        if let device = connection.device, !held.isEmpty, held.contains(where: { $0.keys.contains(.device(device)) }) {
            // Behind this device's held replies and events, so it sees them in order.
            held.append(HeldWork(ticket: 0, keys: [.device(device)], actions: [.send(device, message)]))
            return
        }
        logMessage("signal.out", message, who: connection.device?.description ?? "conn \(connection.socket.id)")
        _ = connection.socket.send(.text(SignalingCodec.encodeToString(message)))
    }

    private func logMessage(_ event: String, _ message: SignalingMessage, who: String) {
        let detail: String
        switch message {
        case .error(let error): detail = error.code.rawValue
        case .callEnded(let ended): detail = ended.cause.rawValue + (ended.error.map { "/" + $0.code.rawValue } ?? "")
        default: detail = "-"
        }
        if let callID = message.callID {
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
            self.loop.execute {
                self.finishHello(hello, connectionID: connectionID, application: result)
                // A rate-limit close that waited for this reply.
                if let connection = self.connections[connectionID] { self.closeIfAnswered(connection) }
            }
        }
    }

    private func finishHello(_ hello: SignalingMessage.Hello, connectionID: UInt64, application: Result<Application?, StoreError>) {
        guard let connection = connections[connectionID], !connection.closing, connection.phase == .authenticating, !stopped else { return }
        let nowMillis = ServerClock.now().unixMilliseconds
        let token: UserToken
        do throws(AuthError) {
            let found: Application?
            switch application {
            case .success(let value): found = value
            case .failure(let error):
                log.error("hello.store.failed", ["conn": String(connectionID), "error": error.description])
                connection.phase = .awaitingHello
                reply(.error(.init(replyTo: hello.requestID, code: .internalError, message: "the server could not read its store; retry")),
                      on: connection)
                return
            }
            guard let found else { throw AuthError.unknownApplication(hello.appKey) }
            token = try verifier.verify(hello.token, for: try Self.credentials(of: found, nowMillis: nowMillis),
                                        now: nowMillis / 1000, nonces: &nonces)
        } catch {
            let code = error.protocolCode
            metrics.update { $0.authFailures[code, default: 0] += 1 }
            log.info("hello.refused", ["conn": String(connectionID), "code": code, "reason": error.description])
            reply(.error(.init(replyTo: hello.requestID, code: SignalingErrorCode(rawValue: code), message: error.description)),
                  on: connection)
            close(connection, code: code == SignalingErrorCode.rateLimited.rawValue ? 4005 : 4001, reason: "authentication failed")
            return
        }
        let device = Device(user: AppUser(applicationKey: hello.appKey, userID: token.userID), deviceID: hello.deviceID)
        if let timer = connection.helloTimer { loop.cancel(timer) }
        connection.helloTimer = nil

        var resumed = false
        var session = SignalingSession(id: Self.newSessionID(), device: device, connectionID: connectionID)
        if var existing = sessions[device] {
            if let oldID = existing.connectionID, oldID != connectionID, let old = connections.removeValue(forKey: oldID) {
                metrics.update { $0.connectionsOpen -= 1 }
                log.info("ws.replaced", ["conn": String(oldID), "by": String(connectionID), "device": device.description])
                close(old, code: 4003, reason: "replaced by a newer connection")
            }
            if let timer = existing.expiryTimer { loop.cancel(timer) }
            existing.expiryTimer = nil
            if let resume = hello.resumeSessionID, resume == existing.id {
                resumed = true
                existing.connectionID = connectionID
                session = existing
            }
        }
        let buffered = session.buffered
        session.buffered = []
        session.droppedWhileAway = 0
        sessions[device] = session
        connection.phase = .authenticated(device)
        metrics.update { $0.authenticatedTotal += 1 }
        log.info("hello.ok", ["conn": String(connectionID), "device": device.description, "session": session.id,
                              "resumed": String(resumed), "replayed": String(buffered.count)])
        reply(.helloOK(.init(replyTo: hello.requestID, sessionID: session.id, userID: token.userID, serverVersion: Self.serverVersion,
                             heartbeatInterval: configuration.heartbeatInterval.wholeMilliseconds, time: nowMillis, resumed: resumed,
                             media: .init(codecs: ["opus/48000/2"]))), on: connection)
        for text in buffered { _ = connection.socket.send(.text(text)) }
        scheduleHeartbeatCheck(connection)

        recorder.recordUserSeen(device.user, at: nowMillis)
        perform(registry.deviceConnected(device, resumed: resumed, now: ServerClock.now()))
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

    private func scheduleHeartbeatCheck(_ connection: SignalingConnection) {
        let limit = configuration.heartbeatInterval * 2
        let id = connection.socket.id
        connection.heartbeatTimer = loop.schedule(at: connection.lastReceived + limit) { [self] in
            guard let connection = connections[id], !connection.closing else { return }
            connection.heartbeatTimer = nil
            if ContinuousClock.now - connection.lastReceived >= limit {
                log.info("ws.heartbeat.timeout", ["conn": String(id), "device": connection.device?.description ?? "-"])
                close(connection, code: 4004, reason: "heartbeat timeout")
            } else {
                scheduleHeartbeatCheck(connection)
            }
        }
    }

    private func scheduleNonceCleanup() {
        nonceTimer = loop.schedule(after: .seconds(60)) { [self] in
            guard !stopped else { return }
            nonces.removeExpired(now: ServerClock.now().unixMilliseconds / 1000)
            scheduleNonceCleanup()
        }
    }

    private func scheduleLegStatistics() {
        statisticsTimer = loop.schedule(after: configuration.legStatisticsInterval) { [self] in
            guard !stopped, let anchor else { return }
            let now = ServerClock.now().unixMilliseconds
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
            perform(registry.handleMedia(next.event, callID: next.callID, now: ServerClock.now()))
        }
        performing = false
        rescheduleCallTimer()
    }

    /// Records the actions' records and runs or holds the rest.
    private func submit(_ actions: [CallAction]) {
        let now = ServerClock.now()
        var waitFor: UInt64 = 0
        for case .record(let record) in actions {
            var legs: [CallLeg] = []
            if record.state == .ended, let statistics = anchor?.closeAll(callID: record.callID, now: now.instant) {
                legs = Self.storedLegs(statistics, of: record, at: now.unixMilliseconds)
            }
            let written = recorder.persist(record, legs: legs)
            if written.mustWait { waitFor = max(waitFor, written.ticket) }
        }
        let effects = actions.filter { if case .record = $0 { false } else { true } }
        guard !effects.isEmpty else { return }
        let keys = Self.orderKeys(of: actions)
        if waitFor <= committedTicket, held.allSatisfy({ $0.keys.isDisjoint(with: keys) }) {
            carryOut(effects)
            return
        }
        held.append(HeldWork(ticket: waitFor, keys: keys, actions: effects))
        metrics.update { $0.heldActions = held.count }
    }

    /// Sends, media instructions and pushes, now.
    private func carryOut(_ actions: [CallAction]) {
        let now = ServerClock.now()
        for action in actions {
            switch action {
            case .send(let device, let message): deliver(message, to: device)
            case .notify(let party, let notification): tell(party, notification)
            case .media(let instruction):
                let application = registry.record(of: instruction.callID)?.caller.applicationKey ?? ""
                anchor?.perform(instruction, applicationKey: application, now: now)
            case .push(let instruction):
                log.info("push.call", ["call": instruction.callID, "devices": instruction.devices.map(\.deviceID).joined(separator: ",")])
                push?.send(instruction)
            case .record: break
            }
        }
    }

    /// Hands a call notification to the party's adapter: a device hears it as the frame
    /// `DeviceAdapter` renders, through its session.
    private func tell(_ party: Party, _ notification: CallNotification) {
        switch party {
        case .device(let device): deliver(DeviceAdapter.frame(for: notification), to: device)
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
            if work.ticket <= committedTicket, blocked.isDisjoint(with: work.keys) {
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
                switch party {
                case .device(let device): keys.insert(.device(device))
                }
                keys.insert(.call(notification.callID))
            case .media(let instruction): keys.insert(.call(instruction.callID))
            case .push(let instruction): keys.insert(.call(instruction.callID))
            case .record(let record): keys.insert(.call(record.callID))
            }
        }
        return keys
    }

    private func mediaReported(_ event: MediaEvent, callID: String) {
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
        }
    }

    /// The caller's leg and the answering device's leg, as the store keeps them (one row
    /// per role; legs of devices that only rang are not kept).
    static func storedLegs(_ statistics: [CallLegID: MediaLegStatistics], of record: CallRecord, at time: Int64) -> [CallLeg] {
        var legs: [CallLeg] = []
        if let caller = statistics[.caller] {
            legs.append(CallLeg(role: .caller, userId: record.caller.userID, deviceId: record.callerDeviceID, updatedTime: time,
                                statistics: CallLegStatistics(caller)))
        }
        if let answered = record.answeredDeviceID,
           let callee = statistics[.callee(.device(Device(user: record.callee, deviceID: answered)))] {
            legs.append(CallLeg(role: .callee, userId: record.callee.userID, deviceId: answered, updatedTime: time,
                                statistics: CallLegStatistics(callee)))
        }
        return legs
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
    /// waits for a resume; drops it when the device has no session.
    private func deliver(_ message: SignalingMessage, to device: Device) {
        let who = device.description
        guard var session = sessions[device] else {
            logMessage("signal.dropped", message, who: who)
            return
        }
        let text = SignalingCodec.encodeToString(message)
        if let id = session.connectionID, let connection = connections[id], !connection.closing {
            logMessage("signal.out", message, who: who)
            _ = connection.socket.send(.text(text))
            return
        }
        if session.buffered.count < Self.maxBufferedMessages {
            session.buffered.append(text)
            logMessage("signal.buffered", message, who: who)
        } else {
            session.droppedWhileAway += 1
            logMessage("signal.dropped", message, who: who)
        }
        sessions[device] = session
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
            perform(registry.handleTimeout(now: ServerClock.now()))
        }
        callTimer = (id, next)
    }

    // MARK: REST and lifecycle (called on the loop)

    /// Hangs up a live call of `applicationKey`; nil when the engine has no such live call.
    /// `recorded` runs on the loop once the ended record is committed (for `.hungUp`).
    func hangUpLive(callID: String, applicationKey: String, recorded: @escaping () -> Void = {}) -> HangUpOutcome? {
        guard let record = registry.record(of: callID) else { return nil }
        guard record.caller.applicationKey == applicationKey else { return .notFound }
        do throws(CallingError) {
            let actions = try registry.hangUp(callID: callID, now: ServerClock.now())
            log.info("call.rest.hangup", ["call": callID])
            perform(actions)
            whenRecordsCommitted(recorded)
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

    func liveCallCounts() -> [CallState: Int] {
        var counts: [CallState: Int] = [:]
        for record in registry.activeCalls { counts[record.state, default: 0] += 1 }
        return counts
    }

    /// Ends every call (`error` `internal_error` "server shutting down"), tells every
    /// connection `shutting_down`, closes the media legs and waits for the records.
    func stop() {
        guard !stopped else { return }
        perform(registry.endAll(.init(code: .internalError, message: "server shutting down"), now: ServerClock.now()))
        // The ended records, then the `call.ended` they hold back (bounded: a store locked
        // past it leaves those calls to the next start's recovery).
        if !recorder.flush(timeout: configuration.shutdownStoreTimeout) {
            log.error("store.flush.timeout", ["pending": String(recorder.pendingWrites)])
        }
        storeCommitted(recorder.doneTicket)
        for connection in connections.values where !connection.closing {
            reply(.error(.init(replyTo: nil, code: .shuttingDown, message: "the server is stopping; reconnect later")), on: connection)
        }
        stopped = true
        if let timer = callTimer { loop.cancel(timer.id) }
        callTimer = nil
        if let nonceTimer { loop.cancel(nonceTimer) }
        nonceTimer = nil
        if let statisticsTimer { loop.cancel(statisticsTimer) }
        statisticsTimer = nil
        for connection in connections.values { cancelTimers(of: connection) }
        for session in sessions.values { if let timer = session.expiryTimer { loop.cancel(timer) } }
        anchor?.closeEverything()
        push?.stop()
        recorder.flush(timeout: configuration.shutdownStoreTimeout)
        // Nobody waits past the stop, committed or not (the next start recovers the rest).
        let waiters = ticketWaiters
        ticketWaiters = []
        for waiter in waiters { waiter.body() }
        log.info("engine.stopped", ["connections": String(connections.count)])
    }

    /// Media legs open now (tests, metrics).
    var mediaLegCount: Int { anchor?.legCount ?? 0 }
    var mediaPortsInUse: Int { anchor?.portsInUse ?? 0 }

    /// Runs `body` on the loop and waits for its result; nil when the loop no longer runs.
    func onLoop<T: Sendable>(_ body: @escaping @Sendable () -> T) -> T? {
        loop.runAndWait(body)
    }
}

/// Actions held until the store has committed `ticket`, in the order they were made.
private struct HeldWork {
    let ticket: UInt64
    let keys: Set<OrderKey>
    let actions: [CallAction]
}

/// What held work keeps its order with: a call, or a device's connection.
private enum OrderKey: Hashable {
    case call(String)
    case device(Device)
}

extension MediaInstruction {
    /// The call the instruction is for.
    var callID: String {
        switch self {
        case .answerCaller(let callID, _), .offerCallee(let callID, _), .acceptAnswer(let callID, _, _), .bridge(let callID, _),
             .sendDTMF(let callID, _, _), .closeLeg(let callID, _), .closeAll(let callID):
            callID
        }
    }
}
