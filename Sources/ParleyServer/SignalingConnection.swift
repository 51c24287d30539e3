import ParleyCalling
import ParleyEdge
import ParleyNetLinux

/// One WebSocket on `/v1/ws` as the engine sees it: where it is in the `hello` exchange,
/// when it last sent anything, and its timers. Used on the engine's loop only.
final class SignalingConnection: @unchecked Sendable {
    // @unchecked: created and changed on the engine's loop only.
    enum Phase: Equatable {
        /// Connected, no `hello` yet (4002 after `helloTimeout`).
        case awaitingHello
        /// A `hello` is being checked (store lookup, token).
        case authenticating
        /// `hello.ok` sent: the connection holds this device's session.
        case authenticated(Device)
    }

    let socket: EdgeWebSocket
    var phase: Phase = .awaitingHello
    var lastReceived: ContinuousClock.Instant
    var helloTimer: TimerID?
    var heartbeatTimer: TimerID?
    /// Set once this side closed it (replaced, refused, timed out): later frames are ignored.
    var closing = false
    /// The soft request rate limit (`rate_limited` replies).
    var requests: RequestRateLimiter
    /// Requests taken but answered later, off the loop (`hello`'s store read, push
    /// registration and relay): a rate-limit close waits for their replies.
    var repliesPending = 0
    /// The edge's hard rate limit was reached: close with 4005 once `repliesPending` is 0.
    var closeWhenAnswered = false

    init(socket: EdgeWebSocket, now: ContinuousClock.Instant, requests: RequestRateLimiter) {
        self.socket = socket
        lastReceived = now
        self.requests = requests
    }

    var device: Device? {
        if case .authenticated(let device) = phase { return device }
        return nil
    }
}

/// A device's session: survives its connection for `reconnectGrace`, so a `hello` with
/// `resumeSessionId` can take it over; messages for it meanwhile wait in `buffered`.
struct SignalingSession {
    let id: String
    let device: Device
    /// The WebSocket holding the session, nil while the device is away.
    var connectionID: UInt64?
    /// Messages that arrived while away, oldest first (bounded).
    var buffered: [String] = []
    var droppedWhileAway = 0
    var expiryTimer: TimerID?
}
