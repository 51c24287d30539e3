public import ParleyCallCore
public import ParleySignaling
import ParleyWireCore

/// The server's session protocol, sans-I/O (docs/protocol.md: Connecting, Sessions,
/// Heartbeat, Limits, Close codes): the mirror of the SDK's `ClientSessionCore`.
///
/// It keeps every connection on `/v1/ws` (where it is in the `hello` exchange, its soft
/// rate limit, its replies still pending) and every device's session (which connection
/// holds it, the messages buffered while it is away, the reconnect grace). Connection
/// events, frames, `hello` verdicts, deliveries and the time go in; frames to send,
/// closes, requests for the call engine and session changes come out
/// (``ServerSessionOutput``), with ``nextDeadline`` for the shell's one timer. It reads
/// no clock and owns no socket, so it is tested as tables of inputs and expected outputs.
///
/// What stays in the shell: decoding WebSocket frames (binary frames are closed with 1003
/// before they get here), the store lookup and token check behind `verifyHello`, the call
/// registry behind `callRequest`, push behind `pushRequest`, and the order of a device's
/// replies behind work held for a store commit.
public struct ServerSessionCore: Sendable {
    /// The edge's id of a WebSocket connection.
    public typealias ConnectionID = UInt64

    private enum Timer: Hashable, Sendable {
        case hello(ConnectionID)
        case heartbeat(ConnectionID)
        case sessionExpiry(Device)
    }

    public let configuration: ServerSessionConfiguration
    private var connections: [ConnectionID: SessionConnection] = [:]
    private var sessions: [Device: DeviceSession] = [:]
    private var timers = DeadlineQueue<Timer>()
    private var stopped = false

    public init(configuration: ServerSessionConfiguration) {
        self.configuration = configuration
    }

    // MARK: Reading the state

    /// The earliest time ``tick(now:)`` has something to do.
    public var nextDeadline: ContinuousClock.Instant? { timers.earliest }

    /// Connections open (including ones the server is closing).
    public var connectionCount: Int { connections.count }

    /// Device sessions, held by a connection or waiting for a resume.
    public var sessionCount: Int { sessions.count }

    /// The device a connection holds, once its `hello` was accepted.
    public func device(on connection: ConnectionID) -> Device? {
        connections[connection]?.device
    }

    /// The session id of a device's session, if it has one.
    public func sessionID(of device: Device) -> String? {
        sessions[device]?.id
    }

    /// Whether the connection's `hello` is being checked (a verdict for it is still wanted).
    public func awaitsHelloVerdict(on connection: ConnectionID) -> Bool {
        guard !stopped, let state = connections[connection], !state.closing else { return false }
        return state.phase == .authenticating
    }

    /// Whether the device's session is held by a connection now (not away).
    public func isConnected(_ device: Device) -> Bool {
        sessions[device]?.connectionID != nil
    }

    // MARK: Connections

    /// A WebSocket on `/v1/ws` opened at `now`: it has the hello timeout to send `hello`.
    public mutating func connectionOpened(_ id: ConnectionID, now: ContinuousClock.Instant) -> [ServerSessionOutput] {
        guard !stopped else { return [.close(id, code: 1001, reason: "server shutting down")] }
        connections[id] = SessionConnection(lastReceived: now, requests: RequestRateLimiter(
            perSecond: configuration.maxRequestsPerSecond, burst: configuration.requestBurst))
        timers.set(.hello(id), to: now.advanced(by: configuration.helloTimeout))
        return [.event(.connectionOpened(id))]
    }

    /// The connection closed (either side) with `code` (nil: no close frame). A 1000 from
    /// the device is a logout: its session ends now. Otherwise the session waits for a
    /// resume until the reconnect grace.
    public mutating func connectionClosed(_ id: ConnectionID, code: UInt16?, now: ContinuousClock.Instant) -> [ServerSessionOutput] {
        guard let connection = connections.removeValue(forKey: id) else { return [] }
        cancelTimers(of: id)
        var outputs: [ServerSessionOutput] = [.event(.connectionClosed(id, code: code))]
        guard let device = connection.device, var session = sessions[device], session.connectionID == id else { return outputs }
        if code == 1000 {
            sessions[device] = nil
            outputs.append(.deviceLoggedOut(device))
            outputs.append(.event(.sessionClosed(sessionID: session.id, device: device)))
            return outputs
        }
        session.connectionID = nil
        sessions[device] = session
        timers.set(.sessionExpiry(device), to: now.advanced(by: configuration.reconnectGrace))
        outputs.append(.deviceDisconnected(device))
        return outputs
    }

    /// The edge's hard rate limit was reached on the connection: it closes with 4005, but
    /// only after every request taken before has its reply.
    public mutating func rateLimitReached(on id: ConnectionID) -> [ServerSessionOutput] {
        guard var connection = connections[id], !connection.closing else { return [] }
        connection.closeWhenAnswered = true
        connections[id] = connection
        return closeIfAnswered(id)
    }

    /// A request handed out as ``ServerSessionOutput/pushRequest(_:_:_:)`` had its reply sent.
    public mutating func requestAnswered(on id: ConnectionID) -> [ServerSessionOutput] {
        guard var connection = connections[id] else { return [] }
        connection.repliesPending = max(connection.repliesPending - 1, 0)
        connections[id] = connection
        return closeIfAnswered(id)
    }

    // MARK: Frames

    /// A text frame arrived on the connection at `now`.
    public mutating func frameReceived(_ text: String, on id: ConnectionID, now: ContinuousClock.Instant) -> [ServerSessionOutput] {
        guard var connection = connections[id], !connection.closing, !stopped else { return [] }
        connection.lastReceived = now
        // Every frame counts, hello and ping included; one over the soft limit gets
        // rate_limited instead of being carried out.
        let withinRate = connection.requests.allow(at: now)
        connections[id] = connection
        let message: SignalingMessage
        do throws(SignalingError) {
            message = try SignalingCodec.decode(Array(text.utf8), maxFrameSize: configuration.maxFrameSize, sender: .deviceToServer)
        } catch {
            guard withinRate else { return [refuseOverRate(error.requestID, on: id)] }
            var outputs: [ServerSessionOutput] = [
                .event(.frameRefused(id, code: error.code.rawValue, reason: error.description)),
                reply(SignalingCodec.errorReply(for: error), on: id),
            ]
            if error.code == .unsupportedVersion, connection.phase == .awaitingHello, Self.namesHello(text) {
                outputs += close(id, code: 4006, reason: "unsupported protocol version")
            }
            return outputs
        }
        var outputs: [ServerSessionOutput] = [.event(.received(message, from: connection.device?.description ?? "conn \(id)"))]
        guard withinRate else { return outputs + [refuseOverRate(message.requestID, on: id)] }
        switch message {
        case .ping(let ping):
            outputs.append(reply(.pong(.init(replyTo: ping.requestID)), on: id))
        case .hello(let hello):
            guard connection.phase == .awaitingHello else {
                outputs.append(reply(.error(.init(replyTo: hello.requestID, code: .alreadyAuthenticated,
                                                  message: "this connection already sent hello")), on: id))
                break
            }
            connections[id]?.phase = .authenticating
            outputs.append(.verifyHello(id, hello))
        default:
            guard let device = connection.device else {
                outputs.append(reply(.error(.init(replyTo: message.requestID, code: .notAuthenticated, message: "send hello first")), on: id))
                break
            }
            guard connection.inFlightCount < configuration.maxRequestsInFlight else {
                outputs.append(reply(.error(.init(replyTo: message.requestID, code: .rateLimited,
                                                  message: "more than \(configuration.maxRequestsInFlight) requests wait for their replies")),
                                     on: id))
                break
            }
            if let requestID = message.requestID { connections[id]?.handedOut(requestID) }
            switch message {
            case .pushRegister, .pushUnregister, .pushRelay:
                connections[id]?.repliesPending += 1
                outputs.append(.pushRequest(id, device, message))
            default:
                outputs.append(.callRequest(device, message))
            }
        }
        return outputs
    }

    // MARK: hello verdicts

    /// The `hello` on the connection is valid: it now holds `userID`'s device session, a
    /// new one (`sessionID`, drawn by the shell) or, with a matching `resumeSessionId`
    /// within the grace, the one that waited, whose buffered messages follow `hello.ok`. An
    /// older connection of the same device is closed with 4003. `unixMillis` is the
    /// server's wall-clock time for `hello.ok`.
    public mutating func helloAccepted(on id: ConnectionID, hello: SignalingMessage.Hello, userID: String, sessionID: String,
                                       unixMillis: Int64) -> [ServerSessionOutput] {
        guard var connection = connections[id], !connection.closing, connection.phase == .authenticating, !stopped else { return [] }
        let device = Device(user: AppUser(applicationKey: hello.appKey, userID: userID), deviceID: hello.deviceID)
        timers.set(.hello(id), to: nil)
        var outputs: [ServerSessionOutput] = []
        var resumed = false
        var session = DeviceSession(id: sessionID, device: device, connectionID: id)
        if var existing = sessions[device] {
            if let oldID = existing.connectionID, oldID != id, connections.removeValue(forKey: oldID) != nil {
                cancelTimers(of: oldID)
                outputs.append(.event(.connectionReplaced(oldID, by: id, device: device)))
                outputs.append(.close(oldID, code: 4003, reason: "replaced by a newer connection"))
            }
            timers.set(.sessionExpiry(device), to: nil)
            if let resume = hello.resumeSessionID, resume == existing.id {
                resumed = true
                existing.connectionID = id
                session = existing
            }
        }
        let buffered = session.buffered
        session.buffered = []
        session.droppedWhileAway = 0
        sessions[device] = session
        connection.phase = .authenticated(device)
        connections[id] = connection
        outputs.append(.event(.authenticated(id, device: device, sessionID: session.id, resumed: resumed, replayed: buffered.count)))
        outputs.append(reply(.helloOK(.init(
            replyTo: hello.requestID, sessionID: session.id, userID: userID, serverVersion: configuration.serverVersion,
            heartbeatInterval: configuration.heartbeatInterval.wholeMilliseconds, time: unixMillis, resumed: resumed,
            media: .init(codecs: configuration.codecs))), on: id))
        outputs += buffered.map { .replay(id, $0) }
        timers.set(.heartbeat(id), to: connection.lastReceived.advanced(by: configuration.heartbeatInterval * 2))
        outputs.append(.deviceConnected(device, resumed: resumed))
        return outputs + closeIfAnswered(id)
    }

    /// The `hello` is refused (unknown application, bad or replayed token, ...) with a
    /// protocol error code: the error goes back and the connection closes with 4001, or
    /// 4005 when the code is `rate_limited`.
    public mutating func helloRefused(on id: ConnectionID, hello: SignalingMessage.Hello, code: String,
                                      message: String) -> [ServerSessionOutput] {
        guard let connection = connections[id], !connection.closing, connection.phase == .authenticating, !stopped else { return [] }
        return [
            .event(.helloRefused(id, code: code, reason: message)),
            reply(.error(.init(replyTo: hello.requestID, code: SignalingErrorCode(rawValue: code), message: message)), on: id),
        ] + close(id, code: code == SignalingErrorCode.rateLimited.rawValue ? 4005 : 4001, reason: "authentication failed")
    }

    /// The `hello` could not be checked (the store failed): `internal_error`, and the
    /// connection may send `hello` again.
    public mutating func helloFailed(on id: ConnectionID, hello: SignalingMessage.Hello, message: String) -> [ServerSessionOutput] {
        guard let connection = connections[id], !connection.closing, connection.phase == .authenticating, !stopped else { return [] }
        connections[id]?.phase = .awaitingHello
        return [
            .event(.helloStoreFailed(id, message: message)),
            reply(.error(.init(replyTo: hello.requestID, code: .internalError, message: "the server could not read its store; retry")), on: id),
        ] + closeIfAnswered(id)
    }

    // MARK: Delivery

    /// A message for a device (a reply made later, a call event): on its connection, or
    /// kept (bounded) while its session waits for a resume; dropped without a session.
    public mutating func deliver(_ message: SignalingMessage, to device: Device) -> [ServerSessionOutput] {
        guard var session = sessions[device] else { return [.event(.messageDropped(message, device: device))] }
        if let id = session.connectionID, let connection = connections[id], !connection.closing {
            if let replyTo = message.replyTo { connections[id]?.answered(replyTo) }
            return [.send(id, message, device: device)]
        }
        if session.buffered.count < configuration.maxBufferedMessages {
            session.buffered.append(message)
            sessions[device] = session
            return [.event(.messageBuffered(message, device: device))]
        }
        session.droppedWhileAway += 1
        sessions[device] = session
        return [.event(.messageDropped(message, device: device))]
    }

    // MARK: Time

    /// Runs every timer due at `now`: hello timeouts (4002), heartbeat checks (4004) and
    /// session expiries.
    public mutating func tick(now: ContinuousClock.Instant) -> [ServerSessionOutput] {
        var outputs: [ServerSessionOutput] = []
        while let next = timers.next, next.deadline <= now {
            timers.set(next.key, to: nil)
            switch next.key {
            case .hello(let id):
                guard let connection = connections[id], connection.device == nil, !connection.closing else { continue }
                outputs.append(.event(.helloTimedOut(id)))
                outputs += close(id, code: 4002, reason: "no hello within \(configuration.helloTimeout)")
            case .heartbeat(let id):
                guard let connection = connections[id], !connection.closing else { continue }
                let limit = configuration.heartbeatInterval * 2
                if connection.lastReceived.duration(to: now) >= limit {
                    outputs.append(.event(.heartbeatTimedOut(id, device: connection.device)))
                    outputs += close(id, code: 4004, reason: "heartbeat timeout")
                } else {
                    timers.set(.heartbeat(id), to: connection.lastReceived.advanced(by: limit))
                }
            case .sessionExpiry(let device):
                guard let session = sessions[device], session.connectionID == nil else { continue }
                sessions[device] = nil
                outputs.append(.event(.sessionExpired(sessionID: session.id, device: device,
                                                      dropped: session.buffered.count + session.droppedWhileAway)))
            }
        }
        return outputs
    }

    /// The server is stopping: every connection is told `shutting_down`; from now on new
    /// connections are closed with 1001 and frames are ignored.
    public mutating func stop() -> [ServerSessionOutput] {
        guard !stopped else { return [] }
        let open = connections.filter { !$0.value.closing }.keys.sorted()
        let outputs = open.map { reply(.error(.init(replyTo: nil, code: .shuttingDown, message: "the server is stopping; reconnect later")), on: $0) }
        stopped = true
        timers = DeadlineQueue()
        return outputs
    }

    // MARK: Helpers

    private func reply(_ message: SignalingMessage, on id: ConnectionID) -> ServerSessionOutput {
        .send(id, message, device: connections[id]?.device)
    }

    private func refuseOverRate(_ requestID: String?, on id: ConnectionID) -> ServerSessionOutput {
        reply(.error(.init(replyTo: requestID, code: .rateLimited,
                           message: "more than \(configuration.maxRequestsPerSecond) requests per second (burst \(configuration.requestBurst))")),
              on: id)
    }

    private mutating func close(_ id: ConnectionID, code: UInt16, reason: String) -> [ServerSessionOutput] {
        connections[id]?.closing = true
        cancelTimers(of: id)
        return [.close(id, code: code, reason: reason)]
    }

    private mutating func cancelTimers(of id: ConnectionID) {
        timers.set(.hello(id), to: nil)
        timers.set(.heartbeat(id), to: nil)
    }

    /// Closes with 4005 once a rate-limited connection has no reply pending (and no
    /// `hello` being checked), after a last `rate_limited` error.
    private mutating func closeIfAnswered(_ id: ConnectionID) -> [ServerSessionOutput] {
        guard let connection = connections[id], connection.closeWhenAnswered, !connection.closing, connection.repliesPending == 0,
              connection.phase != .authenticating else { return [] }
        return [
            .event(.rateLimitClose(id, device: connection.device)),
            reply(.error(.init(replyTo: nil, code: .rateLimited, message: "message rate limit exceeded; closing")), on: id),
        ] + close(id, code: 4005, reason: "message rate limit exceeded")
    }

    /// Whether a frame that failed the version check is a `hello` (the codec stops before
    /// reading `type`; the frame is valid JSON by then). Decides only the 4006 close.
    /// Read with the same strict parser as every frame, never Foundation's, which lets
    /// through what the codec refuses (a trailing comma, nesting past the limit).
    public static func namesHello(_ text: String) -> Bool {
        guard let object = try? StrictJSONParser.parse(Array(text.utf8), maxDepth: SignalingLimits.maxDepth) else { return false }
        return object["type"]?.stringValue == "hello"
    }
}
