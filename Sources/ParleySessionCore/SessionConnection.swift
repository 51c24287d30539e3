import ParleyCallCore
import ParleySignaling

/// One WebSocket on `/v1/ws` as the session core sees it.
struct SessionConnection: Sendable {
    /// Where the connection is in the `hello` exchange. A connection that is
    /// authenticating has no device yet; one with a device has sent `hello.ok`.
    enum Phase: Sendable, Hashable {
        /// Connected, no `hello` yet (4002 after the hello timeout).
        case awaitingHello
        /// A `hello` is being checked by the shell (store lookup, token).
        case authenticating
        /// `hello.ok` sent: the connection holds this device's session.
        case authenticated(Device)
    }

    var phase: Phase = .awaitingHello
    /// When the last frame arrived (the heartbeat check reads it).
    var lastReceived: ContinuousClock.Instant
    /// Set once the server closed it (replaced, refused, timed out): later frames are ignored.
    var closing = false
    /// The soft request rate limit.
    var requests: RequestRateLimiter
    /// Requests taken but answered later, off the loop (push registration and relay): a
    /// rate-limit close waits for their replies, and for a `hello` being checked.
    var repliesPending = 0
    /// The edge's hard rate limit was reached: close with 4005 once nothing is pending.
    var closeWhenAnswered = false
    /// Requests handed out and not yet answered, by request id (a device may reuse an id
    /// once its request was answered, so a count per id).
    private(set) var inFlight: [String: Int] = [:]
    private(set) var inFlightCount = 0

    mutating func handedOut(_ requestID: String) {
        inFlight[requestID, default: 0] += 1
        inFlightCount += 1
    }

    /// A reply to `requestID` went out on this connection.
    mutating func answered(_ requestID: String) {
        guard let count = inFlight[requestID] else { return }
        inFlight[requestID] = count > 1 ? count - 1 : nil
        inFlightCount -= 1
    }

    var device: Device? {
        if case .authenticated(let device) = phase { return device }
        return nil
    }
}

/// A device's session: outlives its connection for the reconnect grace, so a `hello` with
/// `resumeSessionId` can take it over; messages for it meanwhile wait in `buffered`.
struct DeviceSession: Sendable {
    let id: String
    let device: Device
    /// The connection holding the session, nil while the device is away.
    var connectionID: ServerSessionCore.ConnectionID?
    /// Messages that arrived while away, oldest first (bounded).
    var buffered: [SignalingMessage] = []
    var droppedWhileAway = 0
}
