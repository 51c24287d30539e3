import Foundation
import ParleySignaling
import ParleyWireCore

/// The client's protocol logic, sans-I/O: connection events, decoded server frames,
/// user actions and the time go in; frames to send, SDK events, media instructions and
/// one deadline (`nextDeadline`, then `tick`) come out. The shell (`ParleyClient`) owns
/// the socket, the timers, the legs and the delegates; this type owns every decision.
///
/// Time is two readings taken together: a monotonic instant for deadlines and the wall
/// clock (ms since the epoch) for call details the server did not time.
struct ClientSessionCore {
    struct Configuration: Sendable {
        var applicationKey: String
        var userID: String
        var deviceID: String
        var sdk = SignalingMessage.SDKInfo(name: "parley-swift", version: "0.1.0", platform: Self.platform)
        var capabilities = ["audio"]
        var helloTimeout: Duration = .seconds(10)
        var tokenTimeout: Duration = .seconds(30)
        var requestTimeout: Duration = .seconds(10)
        var reconnectInitialDelay: Duration = .milliseconds(500)
        var reconnectMaximumDelay: Duration = .seconds(30)
        /// After 4005 (rate limited), wait at least this long.
        var rateLimitPause: Duration = .seconds(5)
        /// Consecutive failed connection attempts before the client gives up.
        var maxReconnectAttempts = 10
        /// How long a `push.unregister` may wait for a connection before it fails (reported).
        var unregisterTimeout: Duration = .seconds(30)
        var randomSeed: UInt64 = 0x5EED

        #if os(Linux)
        static let platform = "Linux"
        #elseif os(iOS)
        static let platform = "iOS"
        #elseif os(macOS)
        static let platform = "macOS"
        #else
        static let platform = "other"
        #endif
    }

    /// A moment: monotonic for deadlines, wall clock for call times (the package's one
    /// reading of both clocks, under the name this core's inputs have always used).
    typealias Time = ClockReading

    enum Phase: Sendable, Hashable {
        case idle
        case connecting(connection: Int)
        case awaitingToken(connection: Int, deadline: ContinuousClock.Instant)
        case authenticating(connection: Int, helloID: String, deadline: ContinuousClock.Instant)
        case open(connection: Int)
        case waitingToReconnect(until: ContinuousClock.Instant)
        case stopped
    }

    /// A call request, built into a frame (with a fresh id) when it is sent, so it can
    /// wait for a connection or be sent again after a resumed session.
    enum CallRequest: Sendable, Hashable {
        /// `displayName`: what the callee's devices show for this caller, if set; `cli`:
        /// the caller id toward a phone number, if set.
        case start(callID: String, to: SignalingMessage.Address, headers: [String: String], sdp: String, displayName: String?, cli: String?)
        /// `sdp`: the leg's answer to the offer, given while ringing (early media answer).
        case ack(callID: String, sdp: String?)
        /// `sdp`: nil when it went with `ack`.
        case answer(callID: String, sdp: String?)
        case hangup(callID: String)
        /// Declines a call this device never showed (the system refused it).
        case decline(callID: String)
        /// Reports the playout counters of a call whose leg closed (best effort: an
        /// error or no reply changes nothing, the call has ended).
        case stats(callID: String, playout: SignalingMessage.CallStats.Playout)
        /// Holds (`held` true) or resumes an established call; a refusal leaves the call as it was.
        case hold(callID: String, held: Bool)

        var callID: String {
            switch self {
            case .start(let id, _, _, _, _, _), .ack(let id, _), .answer(let id, _), .hangup(let id), .decline(let id), .stats(let id, _),
                 .hold(let id, _): id
            }
        }

        var typeName: String {
            switch self {
            case .start: "call.start"
            case .ack: "call.ack"
            case .answer: "call.answer"
            case .hangup: "call.hangup"
            case .decline: "call.decline"
            case .stats: "call.stats"
            case .hold: "call.hold"
            }
        }

        func message(id: String) -> SignalingMessage {
            switch self {
            case .start(let callID, let to, let headers, let sdp, let displayName, let cli):
                .callStart(.init(requestID: id, callID: callID, to: to, headers: headers, sdp: sdp, displayName: displayName, cli: cli))
            case .ack(let callID, let sdp): .callAck(.init(requestID: id, callID: callID, sdp: sdp))
            case .answer(let callID, let sdp): .callAnswer(.init(requestID: id, callID: callID, sdp: sdp))
            case .hangup(let callID): .callHangup(.init(requestID: id, callID: callID))
            case .decline(let callID): .callDecline(.init(requestID: id, callID: callID))
            case .stats(let callID, let playout): .callStats(.init(requestID: id, callID: callID, playout: playout))
            case .hold(let callID, let held): .callHold(.init(requestID: id, callID: callID, held: held))
            }
        }
    }

    private enum Pending: Sendable, Hashable {
        case ping
        case call(CallRequest, resent: Bool)
        case push(PushRequest)

        var isUnregister: Bool { if case .push(let request) = self { request.isUnregister } else { false } }
    }

    private struct PendingRequest: Sendable, Hashable {
        var request: Pending
        var deadline: ContinuousClock.Instant
    }

    let configuration: Configuration
    private(set) var phase: Phase = .idle
    private(set) var sessionID: String?
    private(set) var isStarted = false
    private(set) var heartbeat: Duration?
    private var nextPing: ContinuousClock.Instant?
    private var connectionCount = 0
    private var requestCount = 0
    private var failedAttempts = 0
    private var retriedExpiredToken = false
    private var pending: [String: PendingRequest] = [:]
    /// Call requests waiting for an open session, oldest first, with whether they are resends.
    private var queued: [(request: CallRequest, resent: Bool)] = []
    private(set) var calls: [String: ClientCallRecord] = [:]
    /// Push requests waiting for an open session, oldest first.
    private var queuedPush: [PushRequest] = []
    /// The push token the server holds for this device (restored from the shell's store).
    private(set) var pushRegistration: PushDevice?
    /// Calls announced by a relayed push whose `call.incoming` has not come yet, as the
    /// push described them: ended at once if the server says the call is over.
    private(set) var relayedCalls: [String: ClientCallRecord] = [:]
    /// Calls announced by a push the system refused to show: relayed, then declined as
    /// soon as their `call.incoming` arrives, never delivered. Oldest first, bounded.
    private(set) var decliningCalls: [String] = []
    /// Set while a `push.unregister` is queued or in flight: when it must have been sent.
    /// The shell keeps the client alive until it is cleared (answered, refused, timed out
    /// or failed, each reported), so dropping the client cannot lose a logout.
    private(set) var unregisterDeadline: ContinuousClock.Instant?
    /// `terminate` came while a `push.unregister` was outstanding: the session stays (no
    /// calls, no delegate events) until it finishes, then closes with 1000 and stops.
    private(set) var terminatingAfterUnregister = false
    /// Recently ended calls, so late or duplicate events for them are ignored.
    private var endedCallIDs: [String] = []
    private var endedCallSet: Set<String> = []
    private var random: SplitMix64

    init(configuration: Configuration) {
        self.configuration = configuration
        random = SplitMix64(seed: configuration.randomSeed)
    }

    // MARK: Deadlines

    /// The earliest moment `tick(now:)` has work, if any.
    var nextDeadline: ContinuousClock.Instant? {
        var candidates: [ContinuousClock.Instant] = pending.values.map(\.deadline)
        switch phase {
        case .awaitingToken(_, let deadline), .authenticating(_, _, let deadline): candidates.append(deadline)
        case .waitingToReconnect(let until): candidates.append(until)
        case .open: if let nextPing { candidates.append(nextPing) }
        case .idle, .connecting, .stopped: break
        }
        // A sent unregister has its own reply deadline in `pending`; only a queued one waits on this.
        if let unregisterDeadline, queuedPush.contains(where: \.isUnregister) { candidates.append(unregisterDeadline) }
        return candidates.min()
    }

    /// Work the client must finish before it may go away: a `push.unregister` not yet
    /// answered (it is what stops a logged-out user's pushes).
    var hasWorkToFinish: Bool { unregisterDeadline != nil }

    mutating func tick(now: Time) -> [ClientSessionOutput] {
        var out: [ClientSessionOutput] = []
        switch phase {
        case .awaitingToken(let connection, let deadline) where now.instant >= deadline:
            out.append(.close(connection: connection, code: 1000))
            fail(ParleyClientError(code: "registration_failed", message: "the delegate gave no token within \(configuration.tokenTimeout)"), now: now, into: &out)
            return out
        case .authenticating(let connection, _, let deadline) where now.instant >= deadline:
            out.append(.close(connection: connection, code: 1000))
            connectionLost(reason: "no hello.ok within \(configuration.helloTimeout)", pause: nil, now: now, into: &out)
            return out
        case .waitingToReconnect(let until) where now.instant >= until:
            connect(into: &out)
            return out
        default: break
        }
        for (id, request) in pending.sorted(by: { $0.key < $1.key }) where now.instant >= request.deadline {
            pending[id] = nil
            switch request.request {
            case .ping:
                if case .open(let connection) = phase {
                    out.append(.close(connection: connection, code: 1000))
                    connectionLost(reason: "no pong within \(configuration.requestTimeout)", pause: nil, now: now, into: &out)
                    return out
                }
            case .call(.hold(let callID, let held), _):
                // A hold that got no answer leaves the call as it was.
                out.append(.holdCompleted(callID: callID, held: held, error: ParleyClientError(
                    code: "request_timeout", message: "no reply to call.hold within \(configuration.requestTimeout)")))
            case .call(let call, _):
                endCall(call.callID, cause: .error,
                        error: ParleyCallError(code: "request_timeout", message: "no reply to \(call.typeName) within \(configuration.requestTimeout)"),
                        now: now, into: &out)
            case .push(let push):
                pushRequestFailed(push, code: "request_timeout", message: "no reply to \(push.typeName) within \(configuration.requestTimeout)",
                                  now: now, into: &out)
            }
        }
        if let deadline = unregisterDeadline, now.instant >= deadline, queuedPush.contains(where: \.isUnregister) {
            queuedPush.removeAll(where: \.isUnregister)
            out.append(.pushUnregisterFailed(ParleyClientError(
                code: "request_timeout", message: "push.unregister could not be sent within \(configuration.unregisterTimeout): no session with the server")))
            unregisterFinished(into: &out)
            if phase == .stopped { return out }
        }
        if case .open = phase, let ping = nextPing, now.instant >= ping, let heartbeat {
            let id = nextRequestID()
            out.append(.send(.ping(.init(requestID: id))))
            pending[id] = PendingRequest(request: .ping, deadline: now.instant + min(heartbeat, configuration.requestTimeout))
            nextPing = now.instant + heartbeat
        }
        return out
    }

    // MARK: Client lifecycle

    /// `start()`: connect and authenticate.
    mutating func start(now: Time) -> [ClientSessionOutput] {
        switch phase {
        case .idle, .stopped:
            failedAttempts = 0
            retriedExpiredToken = false
            var out: [ClientSessionOutput] = []
            connect(into: &out)
            return out
        default:
            guard terminatingAfterUnregister else { return [] }
            // Started again while a logout waited for its unregister: the session stays.
            terminatingAfterUnregister = false
            guard case .open = phase else { return [] }
            isStarted = true
            return [.clientStarted]
        }
    }

    /// `terminateGracefully()`: hang up every call, close with 1000, stop.
    mutating func terminate(now: Time) -> [ClientSessionOutput] {
        var out: [ClientSessionOutput] = []
        let isOpen = if case .open = phase { true } else { false }
        for call in calls.values.sorted(by: { $0.callID < $1.callID }) {
            if isOpen && call.serverKnows && !call.hangupRequested {
                out.append(.send(CallRequest.hangup(callID: call.callID).message(id: nextRequestID())))
            }
            let cause: ParleyCallEndCause = call.state >= .answered ? .hungUp : (call.direction == .outgoing ? .canceled : .denied)
            endCall(call.callID, cause: cause, error: nil, byThisDevice: true, now: now, into: &out)
        }
        endRelayedCalls(cause: .canceled, error: nil, now: now, into: &out)
        decliningCalls = []
        if unregisterDeadline != nil {
            // A logout: the server must hear push.unregister, or the user keeps getting
            // call pushes. Stay (quietly, no calls) until it is answered or fails.
            terminatingAfterUnregister = true
            isStarted = false
            queued = []
            queuedPush.removeAll { !$0.isUnregister }
            pending = pending.filter {
                switch $0.value.request {
                case .ping, .push(.unregister): true
                case .call, .push: false
                }
            }
            return out
        }
        if let connection = currentConnection { out.append(.close(connection: connection, code: 1000)) }
        stop()
        return out
    }

    /// The WebSocket of `connection` is open.
    mutating func connectionOpened(_ connection: Int, now: Time) -> [ClientSessionOutput] {
        guard case .connecting(connection) = phase else { return [] }
        phase = .awaitingToken(connection: connection, deadline: now.instant + configuration.tokenTimeout)
        return [.requestToken(connection: connection)]
    }

    /// The delegate answered the token request of `connection`.
    mutating func tokenProvided(_ jwt: String, connection: Int, now: Time) -> [ClientSessionOutput] {
        guard case .awaitingToken(connection, _) = phase else { return [] }
        let id = nextRequestID()
        let hello = SignalingMessage.hello(.init(requestID: id, appKey: configuration.applicationKey, token: jwt,
                                                 deviceID: configuration.deviceID, sdk: configuration.sdk,
                                                 capabilities: configuration.capabilities, resumeSessionID: sessionID))
        phase = .authenticating(connection: connection, helloID: id, deadline: now.instant + configuration.helloTimeout)
        return [.send(hello)]
    }

    /// The delegate could not give a token for `connection`.
    mutating func tokenFailed(_ message: String, connection: Int, now: Time) -> [ClientSessionOutput] {
        guard case .awaitingToken(connection, _) = phase else { return [] }
        var out: [ClientSessionOutput] = [.close(connection: connection, code: 1000)]
        fail(ParleyClientError(code: "registration_failed", message: message), now: now, into: &out)
        return out
    }

    /// Connection `connection` could not be opened.
    mutating func connectionFailed(_ connection: Int, message: String, now: Time) -> [ClientSessionOutput] {
        guard case .connecting(connection) = phase else { return [] }
        var out: [ClientSessionOutput] = []
        if !isStarted && sessionID == nil {
            fail(ParleyClientError(code: "server_unreachable", message: "server unreachable: \(message)"), now: now, into: &out)
        } else {
            connectionLost(reason: "server unreachable: \(message)", pause: nil, now: now, into: &out)
        }
        return out
    }

    /// Connection `connection` closed with `code` (1006 when it just dropped).
    mutating func connectionClosed(_ connection: Int, code: UInt16, reason: String, now: Time) -> [ClientSessionOutput] {
        guard currentConnection == connection else { return [] }
        var out: [ClientSessionOutput] = []
        switch code {
        case 4001:
            fail(ParleyClientError(code: "authentication_failed", message: "the server refused the token (4001) \(reason)"), now: now, into: &out)
        case 4003:
            fail(ParleyClientError(code: "replaced", message: "replaced by a newer connection with the same device id (4003)"), now: now, into: &out)
        case 4006:
            fail(ParleyClientError(code: "unsupported_version", message: "the server does not speak protocol version 1 (4006)"), now: now, into: &out)
        case 1000, 1002, 1003, 1007, 1008, 1009:
            fail(ParleyClientError(code: "connection_closed", message: "the server closed the connection with \(code) \(reason)"), now: now, into: &out)
        case 4005:
            connectionLost(reason: "rate limited (4005)", pause: configuration.rateLimitPause, now: now, into: &out)
        default:
            connectionLost(reason: "closed with \(code) \(reason)", pause: nil, now: now, into: &out)
        }
        return out
    }

    // MARK: Frames

    /// A text frame from the server. Frames that do not decode, and events this version
    /// does not know, are dropped (protocol.md: ignore unknown event types).
    mutating func frameReceived(_ bytes: [UInt8], connection: Int, now: Time) -> [ClientSessionOutput] {
        guard currentConnection == connection else { return [] }
        let message: SignalingMessage
        do {
            message = try SignalingCodec.decode(bytes, sender: .serverToDevice)
        } catch {
            return []
        }
        return messageReceived(message, now: now)
    }

    mutating func messageReceived(_ message: SignalingMessage, now: Time) -> [ClientSessionOutput] {
        var out: [ClientSessionOutput] = []
        switch phase {
        case .authenticating(let connection, let helloID, _):
            switch message {
            case .helloOK(let ok) where ok.replyTo == helloID && ok.userID != configuration.userID:
                // The token was minted for another user: signing in as them would be wrong.
                out.append(.close(connection: connection, code: 1000))
                fail(ParleyClientError(code: "user_mismatch", message: "the token is for user \(ok.userID), this client is \(configuration.userID)"), now: now, into: &out)
            case .helloOK(let ok) where ok.replyTo == helloID:
                sessionOpened(ok, connection: connection, now: now, into: &out)
            case .error(let error) where error.replyTo == helloID:
                helloRefused(error, connection: connection, now: now, into: &out)
            default:
                break
            }
        case .open:
            handleSessionMessage(message, now: now, into: &out)
        default:
            break
        }
        return out
    }

    // MARK: Calls: user actions and leg results

    /// `callUser`: a new outgoing call to an app user; see `placeCall`.
    mutating func callUser(
        _ userID: String, headers: [String: String], displayName: String? = nil, callID: String, now: Time
    ) -> (ClientCallRecord, [ClientSessionOutput]) {
        placeCall(to: .user(userID), headers: headers, displayName: displayName, callID: callID, now: now)
    }

    /// A new outgoing call to `destination`; the shell creates its leg and offer.
    /// `displayName`: the name the callee's devices show for this caller (the client's
    /// push display name when the call was placed), or nil; `cli`: the caller id toward
    /// a phone number, or nil.
    mutating func placeCall(
        to destination: SignalingMessage.Address, headers: [String: String], displayName: String? = nil, cli: String? = nil,
        callID: String, now: Time
    ) -> (ClientCallRecord, [ClientSessionOutput]) {
        // Call ids are fresh random UUIDs; a repeat must not replace a live call.
        if let existing = calls[callID] { return (existing, []) }
        var call = ClientCallRecord(callID: callID, direction: .outgoing, remoteUserID: destination.address, headers: headers)
        call.remoteKind = ParleyCallRemoteKind(destination.kind)
        call.cli = cli
        call.callerDisplayName = displayName
        call.details.startedTime = Self.date(now.unixMilliseconds)
        calls[callID] = call
        return (call, [.media(.createOffer(callID: callID))])
    }

    /// The leg of outgoing call `callID` made its offer.
    mutating func legOffered(_ callID: String, sdp: String, now: Time) -> [ClientSessionOutput] {
        guard var call = calls[callID], call.direction == .outgoing, !call.startSent else { return [] }
        call.startSent = true
        calls[callID] = call
        var out: [ClientSessionOutput] = []
        sendOrQueue(.start(callID: callID, to: call.remoteAddress, headers: call.headers, sdp: sdp, displayName: call.callerDisplayName,
                           cli: call.cli),
                    resent: false, now: now, into: &out)
        return out
    }

    /// The leg of `callID` could not be set up or failed later.
    mutating func legFailed(_ callID: String, message: String, now: Time) -> [ClientSessionOutput] {
        // After a hangup the server's call.ended (or the hangup's timeout) ends the call
        // with its real cause; a leg torn down meanwhile is not a media failure.
        guard let call = calls[callID], !call.hangupRequested else { return [] }
        var out: [ClientSessionOutput] = []
        if call.serverKnows {
            sendOrQueue(.hangup(callID: callID), resent: false, now: now, into: &out)
        }
        endCall(callID, cause: .error, error: ParleyCallError(code: "media_failed", message: message), now: now, into: &out)
        return out
    }

    /// `answer()` on an incoming call. A leg that connected while ringing only gets its
    /// audio and the server hears `call.answer` without SDP; one still being prepared
    /// answers when it is ready (`legPrepared`); without one, the leg is made now.
    mutating func answer(_ callID: String, now: Time) -> [ClientSessionOutput] {
        guard var call = calls[callID], call.direction == .incoming, !call.answerRequested, !call.hangupRequested,
              let offer = call.offer else { return [] }
        call.answerRequested = true
        calls[callID] = call
        switch call.earlyMedia {
        case .preparing:
            return []
        case .prepared:
            var out: [ClientSessionOutput] = [.media(.activate(callID: callID))]
            sendOrQueue(.answer(callID: callID, sdp: nil), resent: false, now: now, into: &out)
            return out
        case .unavailable:
            return [.media(.answerOffer(callID: callID, sdp: offer))]
        }
    }

    /// The leg of ringing call `callID` answered the server's offer and is connecting
    /// (without audio): the acknowledgement carries that answer, and a user who answered
    /// meanwhile is answered now.
    mutating func legPrepared(_ callID: String, sdp: String, now: Time) -> [ClientSessionOutput] {
        guard var call = calls[callID], call.earlyMedia == .preparing else { return [] }
        call.earlyMedia = .prepared
        calls[callID] = call
        var out: [ClientSessionOutput] = []
        sendOrQueue(.ack(callID: callID, sdp: sdp), resent: false, now: now, into: &out)
        if call.answerRequested, !call.hangupRequested {
            out.append(.media(.activate(callID: callID)))
            sendOrQueue(.answer(callID: callID, sdp: nil), resent: false, now: now, into: &out)
        }
        return out
    }

    /// The leg of ringing call `callID` could not be prepared (the shell closed it): the
    /// call still rings, acknowledged without SDP, and the answer makes a new leg.
    mutating func legPreparationFailed(_ callID: String, now: Time) -> [ClientSessionOutput] {
        guard var call = calls[callID], call.earlyMedia == .preparing, let offer = call.offer else { return [] }
        call.earlyMedia = .unavailable
        calls[callID] = call
        var out: [ClientSessionOutput] = []
        sendOrQueue(.ack(callID: callID, sdp: nil), resent: false, now: now, into: &out)
        if call.answerRequested, !call.hangupRequested { out.append(.media(.answerOffer(callID: callID, sdp: offer))) }
        return out
    }

    /// The leg of incoming call `callID` answered the server's offer.
    mutating func legAnswered(_ callID: String, sdp: String, now: Time) -> [ClientSessionOutput] {
        guard let call = calls[callID], call.answerRequested, !call.hangupRequested, call.earlyMedia == .unavailable else { return [] }
        var out: [ClientSessionOutput] = []
        sendOrQueue(.answer(callID: callID, sdp: sdp), resent: false, now: now, into: &out)
        return out
    }

    /// The media leg of `callID` closed with these statistics: tell the server what its
    /// playout did (`call.stats`), for the call record.
    mutating func legClosed(_ callID: String, statistics: ParleyCallStatistics, now: Time) -> [ClientSessionOutput] {
        var out: [ClientSessionOutput] = []
        sendOrQueue(.stats(callID: callID, playout: Self.playout(statistics)), resent: false, now: now, into: &out)
        return out
    }

    /// The wire form of the SDK's playout counters.
    static func playout(_ s: ParleyCallStatistics) -> SignalingMessage.CallStats.Playout {
        func count(_ value: UInt64) -> Int64 { Int64(clamping: min(value, 9_007_199_254_740_991)) }
        let target = s.targetDelayMilliseconds.isFinite ? max(0, min(s.targetDelayMilliseconds, 86_400_000)).rounded() : 0
        return .init(framesPlayed: count(s.framesPlayed), framesConcealed: count(s.framesConcealed),
                     framesFECRecovered: count(s.framesFECRecovered), framesComfortNoise: count(s.framesComfortNoise),
                     framesSilent: count(s.framesSilent), framesStretched: count(s.framesStretched),
                     framesShrunk: count(s.framesShrunk), packetsLate: count(s.packetsLate), targetDelayMilliseconds: Int64(target))
    }

    /// `hangup()`: cancel, decline or end. The call ends when the server's `call.ended`
    /// arrives; a call the server never heard of ends here, `canceled`.
    mutating func hangup(_ callID: String, now: Time) -> [ClientSessionOutput] {
        guard var call = calls[callID], !call.hangupRequested else { return [] }
        var out: [ClientSessionOutput] = []
        guard call.serverKnows else {
            endCall(callID, cause: .canceled, error: nil, byThisDevice: true, now: now, into: &out)
            return out
        }
        call.hangupRequested = true
        calls[callID] = call
        queued.removeAll { $0.request.callID == callID && $0.request != .hangup(callID: callID) && !Self.isStart($0.request) }
        sendOrQueue(.hangup(callID: callID), resent: false, now: now, into: &out)
        return out
    }

    /// `setHeld(_:)`: asks the server to hold or resume the call. Refused at once (a
    /// `holdCompleted` with an error, nothing sent) for a call this device does not have
    /// or that is not established; otherwise sent (or queued until the session is open).
    mutating func hold(_ callID: String, held: Bool, now: Time) -> [ClientSessionOutput] {
        guard let call = calls[callID], call.state == .established, !call.hangupRequested else {
            let state = calls[callID].map { "the call is \($0.state.rawValue)" } ?? "no such call"
            return [.holdCompleted(callID: callID, held: held, error: ParleyClientError(
                code: "invalid_state", message: "cannot \(held ? "hold" : "resume"): \(state)"))]
        }
        var out: [ClientSessionOutput] = []
        sendOrQueue(.hold(callID: callID, held: held), resent: false, now: now, into: &out)
        return out
    }

    /// The server accepted a hold or resume of this device's.
    private mutating func holdAccepted(_ callID: String, held: Bool, into out: inout [ClientSessionOutput]) {
        out.append(.holdCompleted(callID: callID, held: held, error: nil))
        guard var call = calls[callID], call.isHeld != held else { return }
        call.isHeld = held
        calls[callID] = call
        out.append(.call(.holdChanged, call))
    }

    // MARK: Session

    private var currentConnection: Int? {
        switch phase {
        case .connecting(let c), .awaitingToken(let c, _), .authenticating(let c, _, _), .open(let c): c
        case .idle, .waitingToReconnect, .stopped: nil
        }
    }

    private mutating func connect(into out: inout [ClientSessionOutput]) {
        connectionCount += 1
        phase = .connecting(connection: connectionCount)
        out.append(.connect(connection: connectionCount))
    }

    private mutating func sessionOpened(_ ok: SignalingMessage.HelloOK, connection: Int, now: Time, into out: inout [ClientSessionOutput]) {
        let previous = sessionID
        phase = .open(connection: connection)
        sessionID = ok.sessionID
        failedAttempts = 0
        retriedExpiredToken = false
        let interval = Duration.milliseconds(min(max(ok.heartbeatInterval, 1000), 600_000))
        heartbeat = interval
        nextPing = now.instant + interval
        if !isStarted && !terminatingAfterUnregister {
            isStarted = true
            out.append(.clientStarted)
        }
        if previous != nil && !ok.resumed {
            // The old session's calls ended on the server; we will hear nothing more of them.
            for call in calls.values.sorted(by: { $0.callID < $1.callID }) where call.serverKnows && !isQueuedStart(call.callID) {
                endCall(call.callID, cause: .inactive, error: nil, now: now, into: &out)
            }
        }
        let waiting = queued
        queued = []
        for item in waiting where calls[item.request.callID] != nil {
            sendOrQueue(item.request, resent: item.resent, now: now, into: &out)
        }
        let waitingPush = queuedPush
        queuedPush = []
        for request in waitingPush { sendOrQueue(request, now: now, into: &out) }
    }

    private func isQueuedStart(_ callID: String) -> Bool {
        queued.contains { $0.request.callID == callID && Self.isStart($0.request) && !$0.resent }
    }

    private static func isStart(_ request: CallRequest) -> Bool {
        if case .start = request { return true }
        return false
    }

    private mutating func helloRefused(_ error: SignalingMessage.ErrorReply, connection: Int, now: Time, into out: inout [ClientSessionOutput]) {
        let code = error.code.rawValue
        out.append(.close(connection: connection, code: 1000))
        if code == "token_expired" && !retriedExpiredToken {
            // A token may expire on the way (clock skew, a slow backend): ask once more.
            retriedExpiredToken = true
            connect(into: &out)
        } else if code.hasPrefix("token_") || code == "unsupported_version" || code == "bad_request" || code == "malformed" || code == "too_large" {
            fail(ParleyClientError(code: code, message: error.message), now: now, into: &out)
        } else if code == "rate_limited" {
            connectionLost(reason: "rate limited", pause: configuration.rateLimitPause, now: now, into: &out)
        } else {
            connectionLost(reason: "hello refused: \(code)", pause: nil, now: now, into: &out)
        }
    }

    /// The connection is gone but the client should stay: keep calls, schedule a reconnect.
    private mutating func connectionLost(reason: String, pause: Duration?, now: Time, into out: inout [ClientSessionOutput]) {
        // Requests in flight may or may not have reached the server: send call requests
        // again after a resumed hello (a resent call.start answered call_exists is fine).
        for (_, item) in pending.sorted(by: { $0.key < $1.key }) {
            if case .call(let request, _) = item.request, calls[request.callID] != nil {
                queued.append((request, true))
            }
            if case .push(let request) = item.request { queuedPush.append(request) }
        }
        pending = [:]
        nextPing = nil
        failedAttempts += 1
        if failedAttempts > configuration.maxReconnectAttempts {
            fail(ParleyClientError(code: "server_unreachable", message: "server unreachable: \(reason), \(failedAttempts - 1) reconnects failed"), now: now, into: &out)
            return
        }
        phase = .waitingToReconnect(until: now.instant + max(backoff(attempt: failedAttempts), pause ?? .zero))
    }

    /// Exponential backoff with jitter: uniform in [d/2, d], d = initial * 2^(attempt-1), capped.
    func backoffBounds(attempt: Int) -> (Duration, Duration) {
        let exponent = min(max(attempt - 1, 0), 20)
        let full = min(configuration.reconnectInitialDelay * (1 << exponent), configuration.reconnectMaximumDelay)
        return (full / 2, full)
    }

    private mutating func backoff(attempt: Int) -> Duration {
        let (low, high) = backoffBounds(attempt: attempt)
        let fraction = Double(random.next() >> 11) / Double(1 << 53)
        return low + (high - low) * fraction
    }

    private mutating func fail(_ error: ParleyClientError, now: Time, into out: inout [ClientSessionOutput]) {
        for call in calls.values.sorted(by: { $0.callID < $1.callID }) {
            endCall(call.callID, cause: .inactive, error: nil, now: now, into: &out)
        }
        endRelayedCalls(cause: .inactive, error: nil, now: now, into: &out)
        let unregisters = queuedPush.filter(\.isUnregister).count + pending.values.filter(\.request.isUnregister).count
        for _ in 0..<unregisters {
            out.append(.pushUnregisterFailed(ParleyClientError(code: error.code, message: "push.unregister was not answered: \(error.message)")))
        }
        // A logout that was waiting for its unregister promised no delegate call but that one.
        let quiet = terminatingAfterUnregister
        stop()
        if !quiet { out.append(.clientFailed(error)) }
    }

    private mutating func stop() {
        phase = .stopped
        isStarted = false
        sessionID = nil
        pending = [:]
        queued = []
        queuedPush = []
        nextPing = nil
        heartbeat = nil
        decliningCalls = []
        unregisterDeadline = nil
        terminatingAfterUnregister = false
    }

    private mutating func nextRequestID() -> String {
        requestCount += 1
        return String(requestCount)
    }

    private mutating func sendOrQueue(_ request: CallRequest, resent: Bool, now: Time, into out: inout [ClientSessionOutput]) {
        guard case .open = phase else {
            queued.append((request, resent))
            return
        }
        let id = nextRequestID()
        out.append(.send(request.message(id: id)))
        pending[id] = PendingRequest(request: .call(request, resent: resent), deadline: now.instant + configuration.requestTimeout)
    }

    // MARK: Messages on an open session

    private mutating func handleSessionMessage(_ message: SignalingMessage, now: Time, into out: inout [ClientSessionOutput]) {
        switch message {
        case .pong(let reply):
            pending[reply.replyTo] = nil
        case .result(let reply):
            guard let request = pending.removeValue(forKey: reply.replyTo) else { return }
            switch request.request {
            case .push(.register(let device)):
                pushRegistered(device, pushKey: reply.pushKey, into: &out)
            case .push(.unregister):
                out.append(.pushUnregisterSucceeded)
                unregisterFinished(into: &out)
            case .call(.hold(let callID, let held), _):
                holdAccepted(callID, held: held, into: &out)
            case .ping, .call, .push(.relay):
                break
            }
        case .error(let error):
            guard let re = error.replyTo, let request = pending.removeValue(forKey: re) else { return }
            if case .push(let push) = request.request {
                pushRequestFailed(push, code: error.code.rawValue, message: error.message, now: now, into: &out)
                return
            }
            guard case .call(let call, let resent) = request.request else { return }
            if case .hold(let callID, let held) = call {
                // A refused hold (not established yet, ...) leaves the call as it was.
                out.append(.holdCompleted(callID: callID, held: held, error: ParleyClientError(code: error.code.rawValue, message: error.message)))
                return
            }
            if resent && Self.isStart(call) && error.code == .callExists { return }
            endCall(call.callID, cause: .error, error: ParleyCallError(code: error.code.rawValue, message: error.message), now: now, into: &out)
        case .callIncoming(let incoming):
            relayedCalls[incoming.callID] = nil
            guard calls[incoming.callID] == nil, !endedCallSet.contains(incoming.callID) else { return }
            if let index = decliningCalls.firstIndex(of: incoming.callID) {
                decliningCalls.remove(at: index)
                declineUnshown(incoming.callID, now: now, into: &out)
                return
            }
            if terminatingAfterUnregister {
                // Logging out: this user takes no more calls here.
                declineUnshown(incoming.callID, now: now, into: &out)
                return
            }
            var call = ClientCallRecord(callID: incoming.callID, direction: .incoming, remoteUserID: incoming.from.address, headers: incoming.headers)
            call.remoteKind = ParleyCallRemoteKind(incoming.from.kind)
            call.state = .ringing
            call.offer = incoming.sdp
            call.details.startedTime = Self.date(incoming.time)
            call.details.isVideoOffered = incoming.video
            call.remoteDisplayName = incoming.displayName
            call.earlyMedia = .preparing
            calls[incoming.callID] = call
            // The leg connects while it rings; `legPrepared` acknowledges with its answer.
            out.append(.media(.prepareAnswer(callID: incoming.callID, sdp: incoming.sdp)))
            out.append(.call(.incoming, call))
        case .callMedia(let media):
            guard var call = calls[media.callID], call.direction == .outgoing, !call.mediaApplied else { return }
            call.mediaApplied = true
            calls[media.callID] = call
            out.append(.media(.acceptAnswer(callID: media.callID, sdp: media.sdp)))
        case .callProgress(let event):
            progress(event, kind: .progressed, now: now, into: &out)
        case .callRinging(let event):
            progress(event, kind: .rang, now: now, into: &out)
        case .callAnswered(let event):
            progress(event, kind: .answered, now: now, into: &out)
        case .callEstablished(let event):
            progress(event, kind: .established, now: now, into: &out)
        case .callDTMFReceived(let event):
            // Digits the far side sent; for a call this device does not have (over, or
            // another device's), there is nobody to tell.
            guard calls[event.callID] != nil else { return }
            out.append(.dtmfReceived(callID: event.callID, digits: event.digits))
        case .callHeld(let event):
            // The other party held or resumed; an ended or unknown call has nobody to tell.
            guard var call = calls[event.callID], call.isRemoteHeld != event.held else { return }
            call.isRemoteHeld = event.held
            calls[event.callID] = call
            out.append(.call(.holdChanged, call))
        case .callTalking(let event):
            // Only a room call has talkers; an ended or unknown call has nobody to tell.
            guard var call = calls[event.callID], call.remoteKind == .conference else { return }
            call.talkers = event.talking.map { ParleyConferenceTalker(participantId: $0.callID, userId: $0.userID) }
            calls[event.callID] = call
            out.append(.talkersChanged(callID: event.callID, talkers: call.talkers))
        case .callEnded(let ended):
            // Over before it arrived: nothing left to decline.
            decliningCalls.removeAll { $0 == ended.callID }
            if calls[ended.callID] == nil, relayedCalls[ended.callID] != nil {
                // A relayed push for a call that is already over (canceled while the
                // push was out): the app reported it to the system, so it must end.
                let (cause, error) = Self.outcome(of: ended)
                endRelayedCall(ended.callID, cause: cause, error: error, endedAt: ended.details.endedTime, now: now, into: &out)
                return
            }
            guard var call = calls[ended.callID] else { return }
            call.details.takeMissingTimes(from: ended.details)
            calls[ended.callID] = call
            let (cause, error) = Self.outcome(of: ended)
            // This device's hangup ended it if the cause is the one its hangup gives (a
            // racing end from elsewhere, e.g. the callee's decline of our cancel, is not).
            let causeOfOwnHangup = switch cause {
            case .hungUp: true
            case .canceled: call.direction == .outgoing
            case .denied: call.direction == .incoming
            default: false
            }
            let byThisDevice = call.hangupRequested && causeOfOwnHangup
            endCall(ended.callID, cause: cause, error: error, endedAt: ended.details.endedTime, byThisDevice: byThisDevice, now: now, into: &out)
        default:
            // Replies to nothing we sent, a second hello.ok, device-to-server types: ignored.
            break
        }
    }

    /// Progress events move a call forward only: each at most once, none after a later one.
    private mutating func progress(_ event: SignalingMessage.CallEvent, kind: ClientCallEventKind, now: Time, into out: inout [ClientSessionOutput]) {
        guard var call = calls[event.callID] else { return }
        let time = Self.date(event.time)
        switch kind {
        case .progressed:
            guard call.direction == .outgoing, call.details.progressedTime == nil, call.state == .initiating else { return }
            call.details.progressedTime = time
        case .rang:
            guard call.direction == .outgoing, call.details.rungTime == nil, call.state == .initiating else { return }
            call.details.rungTime = time
            call.state = .ringing
            call.responseHeaders.merge(event.headers) { $1 }
        case .answered:
            guard call.state < .answered || (call.direction == .incoming && call.state == .ringing) else { return }
            guard call.direction == .outgoing || call.answerRequested, call.details.answeredTime == nil else { return }
            call.details.answeredTime = time
            call.state = .answered
            call.responseHeaders.merge(event.headers) { $1 }
        case .established:
            guard call.state < .established, call.details.establishedTime == nil else { return }
            guard call.direction == .outgoing || call.answerRequested else { return }
            call.details.establishedTime = time
            call.state = .established
        case .incoming, .ended, .holdChanged:
            return
        }
        calls[event.callID] = call
        out.append(.call(kind, call))
    }

    private mutating func endCall(_ callID: String, cause: ParleyCallEndCause, error: ParleyCallError?, endedAt: Int64? = nil,
                                  byThisDevice: Bool = false, now: Time, into out: inout [ClientSessionOutput]) {
        guard var call = calls.removeValue(forKey: callID) else { return }
        call.state = .ended
        call.endedByThisDevice = byThisDevice
        call.details.endCause = cause
        call.details.error = error
        call.details.endedTime = Self.date(endedAt ?? now.unixMilliseconds)
        // Holds still waiting for an answer will get none: their completions hear why.
        let waitingHolds = pending.sorted { $0.key < $1.key }.compactMap { entry -> (String, Bool)? in
            if case .call(.hold(let id, let held), _) = entry.value.request, id == callID { (id, held) } else { nil }
        } + queued.compactMap { item -> (String, Bool)? in
            if case .hold(let id, let held) = item.request, id == callID { (id, held) } else { nil }
        }
        for (id, held) in waitingHolds {
            out.append(.holdCompleted(callID: id, held: held, error: ParleyClientError(code: "call_ended", message: "the call ended before the server answered")))
        }
        pending = pending.filter { if case .call(let request, _) = $0.value.request { request.callID != callID } else { true } }
        queued.removeAll { $0.request.callID == callID }
        endedCallIDs.append(callID)
        endedCallSet.insert(callID)
        if endedCallIDs.count > 1024 { endedCallSet.remove(endedCallIDs.removeFirst()) }
        out.append(.media(.close(callID: callID)))
        out.append(.call(.ended, call))
    }

    // MARK: Push

    /// The registration the shell's store holds, at launch; `nil` when there is none.
    mutating func restorePushRegistration(_ device: PushDevice?) {
        pushRegistration = device
    }

    /// `registerPushNotificationDeviceToken`: register `device` unless the server already
    /// holds exactly it. Registering again would replace the push key and make pushes
    /// already on their way fail verification, so an unchanged token is not re-sent.
    mutating func registerPush(_ device: PushDevice, now: Time) -> [ClientSessionOutput] {
        guard pushRegistration != device else { return [] }
        let request = PushRequest.register(device)
        guard !queuedPush.contains(request), !pending.values.contains(where: { $0.request == .push(request) }) else { return [] }
        queuedPush.removeAll { if case .register = $0 { true } else { false } }
        var out: [ClientSessionOutput] = []
        sendOrQueue(request, now: now, into: &out)
        return out
    }

    /// `unregisterPushNotificationDeviceToken()`: the server forgets this device's token;
    /// locally it is forgotten at once, so later pushes no longer verify.
    /// The request is sent once a session is open (at most `unregisterTimeout` from now)
    /// and its outcome is reported; with no session started or coming (idle, stopped) it
    /// fails at once, `not_started`, since nothing would ever send it.
    mutating func unregisterPush(now: Time) -> [ClientSessionOutput] {
        let token = pushRegistration?.token
        pushRegistration = nil
        queuedPush.removeAll { if case .register = $0 { true } else { false } }
        var out: [ClientSessionOutput] = [.pushUnregistered]
        if phase == .idle || phase == .stopped {
            out.append(.pushUnregisterFailed(ParleyClientError(
                code: "not_started", message: "push.unregister needs a started client (call start() first): the server still holds the token")))
            return out
        }
        unregisterDeadline = now.instant + configuration.unregisterTimeout
        sendOrQueue(.unregister(token: token), now: now, into: &out)
        return out
    }

    /// No unregister is left: forget the deadline, and finish a logout that waited for it.
    private mutating func unregisterFinished(into out: inout [ClientSessionOutput]) {
        guard !queuedPush.contains(where: \.isUnregister), !pending.values.contains(where: \.request.isUnregister) else { return }
        unregisterDeadline = nil
        guard terminatingAfterUnregister else { return }
        if let connection = currentConnection { out.append(.close(connection: connection, code: 1000)) }
        stop()
    }

    /// `declinePushNotification`: the system refused to show the call a verified push
    /// announced (Do Not Disturb, a call in progress). Relay the push so the server knows
    /// this device has it, then decline the call the moment its `call.incoming` arrives,
    /// so the caller hears `denied` at once instead of ringing until the ring timeout.
    /// The call is never delivered. A call already here is hung up (declined) instead.
    mutating func declinePush(_ call: ParleyCallNotificationResult, payload: String, now: Time) -> [ClientSessionOutput] {
        let callID = call.callId
        if calls[callID] != nil { return hangup(callID, now: now) }
        guard !endedCallSet.contains(callID), !decliningCalls.contains(callID) else { return [] }
        decliningCalls.append(callID)
        // Bounded like the relayed calls: a flood of refused pushes must not grow it.
        if decliningCalls.count > 64 { decliningCalls.removeFirst() }
        // Relayed already (the app relayed, then the system refused): the relay is out.
        guard relayedCalls.removeValue(forKey: callID) == nil else { return [] }
        var out: [ClientSessionOutput] = []
        sendOrQueue(.relay(callID: callID, payload: payload), now: now, into: &out)
        return out
    }

    /// `relayPushNotification`: a verified push announced `call`; hand its payload to the
    /// server once connected. A call this client already knows (its `call.incoming` came
    /// over a live connection) or already relayed is not relayed again.
    mutating func relayPush(_ call: ParleyCallNotificationResult, payload: String, now: Time) -> [ClientSessionOutput] {
        guard calls[call.callId] == nil, !endedCallSet.contains(call.callId), relayedCalls[call.callId] == nil else { return [] }
        var record = ClientCallRecord(callID: call.callId, direction: .incoming, remoteUserID: call.remoteUserId, headers: call.headers)
        record.remoteKind = call.remoteKind
        record.state = .ringing
        record.details.startedTime = Self.date(now.unixMilliseconds)
        record.details.isVideoOffered = call.isVideoOffered
        relayedCalls[call.callId] = record
        // Bounded: a flood of pushes must not grow this without limit.
        if relayedCalls.count > 64, let oldest = relayedCalls.values.min(by: { ($0.details.startedTime ?? .distantPast) < ($1.details.startedTime ?? .distantPast) }) {
            relayedCalls[oldest.callID] = nil
        }
        var out: [ClientSessionOutput] = []
        sendOrQueue(.relay(callID: call.callId, payload: payload), now: now, into: &out)
        return out
    }

    private mutating func sendOrQueue(_ request: PushRequest, now: Time, into out: inout [ClientSessionOutput]) {
        guard case .open = phase else {
            queuedPush.append(request)
            return
        }
        let id = nextRequestID()
        out.append(.send(request.message(id: id)))
        pending[id] = PendingRequest(request: .push(request), deadline: now.instant + configuration.requestTimeout)
    }

    private mutating func pushRegistered(_ device: PushDevice, pushKey: String?, into out: inout [ClientSessionOutput]) {
        guard let pushKey, let key = try? Base64.decodeURL(pushKey), key.count == 32 else {
            out.append(.pushRegistrationFailed(ParleyClientError(code: "push_key_missing", message: "the server accepted push.register but sent no pushKey (32 bytes, base64url): pushes cannot be verified")))
            return
        }
        pushRegistration = device
        out.append(.pushRegistered(device, pushKey: pushKey))
    }

    private mutating func pushRequestFailed(_ request: PushRequest, code: String, message: String, now: Time, into out: inout [ClientSessionOutput]) {
        switch request {
        case .register:
            out.append(.pushRegistrationFailed(ParleyClientError(code: code, message: message)))
        case .unregister:
            // Nothing to undo here (the token is already forgotten locally), but the app
            // must hear that the server may still hold it.
            out.append(.pushUnregisterFailed(ParleyClientError(code: code, message: message)))
            unregisterFinished(into: &out)
        case .relay(let callID, _):
            // A refused relay of a call being declined: the server has no such live call.
            decliningCalls.removeAll { $0 == callID }
            if relayedCalls[callID] != nil, calls[callID] == nil {
                endRelayedCall(callID, cause: .error, error: ParleyCallError(code: code, message: message), endedAt: nil, now: now, into: &out)
            }
        }
    }

    /// A relayed call ends before its `call.incoming`: it is delivered as incoming (the
    /// app already showed it) and ended at once, without an ack.
    private mutating func endRelayedCall(_ callID: String, cause: ParleyCallEndCause, error: ParleyCallError?, endedAt: Int64?,
                                         now: Time, into out: inout [ClientSessionOutput]) {
        guard var call = relayedCalls.removeValue(forKey: callID) else { return }
        out.append(.call(.incoming, call))
        call.state = .ended
        call.details.endCause = cause
        call.details.error = error
        call.details.endedTime = Self.date(endedAt ?? now.unixMilliseconds)
        endedCallIDs.append(callID)
        endedCallSet.insert(callID)
        if endedCallIDs.count > 1024 { endedCallSet.remove(endedCallIDs.removeFirst()) }
        out.append(.call(.ended, call))
    }

    /// Declines a `call.incoming` that is never shown: `call.decline` (the server ends the
    /// call `denied`), and the call is remembered as ended so its `call.ended` is dropped.
    private mutating func declineUnshown(_ callID: String, now: Time, into out: inout [ClientSessionOutput]) {
        endedCallIDs.append(callID)
        endedCallSet.insert(callID)
        if endedCallIDs.count > 1024 { endedCallSet.remove(endedCallIDs.removeFirst()) }
        sendOrQueue(.decline(callID: callID), resent: false, now: now, into: &out)
    }

    private mutating func endRelayedCalls(cause: ParleyCallEndCause, error: ParleyCallError?, now: Time, into out: inout [ClientSessionOutput]) {
        for callID in relayedCalls.keys.sorted() {
            endRelayedCall(callID, cause: cause, error: error, endedAt: nil, now: now, into: &out)
        }
    }

    /// How a `call.ended` reads in the SDK: its cause, and its error (an `error` cause
    /// always has one, `internal_error` if the server sent none).
    private static func outcome(of ended: SignalingMessage.CallEnded) -> (ParleyCallEndCause, ParleyCallError?) {
        let cause = ParleyCallEndCause(ended.cause)
        let error = ended.error.map { ParleyCallError(code: $0.code.rawValue, message: $0.message) }
            ?? (cause == .error ? ParleyCallError(code: "internal_error", message: "the call failed") : nil)
        return (cause, error)
    }

    static func date(_ milliseconds: Int64) -> Date {
        Date(timeIntervalSince1970: Double(milliseconds) / 1000)
    }
}

/// A small deterministic generator for backoff jitter (seeded, so tests can bound it).
struct SplitMix64: RandomNumberGenerator, Sendable, Hashable {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
