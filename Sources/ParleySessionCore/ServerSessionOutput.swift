public import ParleyCallCore
public import ParleySignaling

/// What the server's session core asks its shell to do, in order. The shell owns the
/// sockets, the store, the token verifier and the call engine; the core decides.
public enum ServerSessionOutput: Sendable, Hashable {
    /// Send a frame on a connection: a reply, or a message delivered to the device it holds
    /// (`device`, nil before `hello.ok`). The shell keeps a device's replies in order behind
    /// work it still holds for that device.
    case send(ServerSessionCore.ConnectionID, SignalingMessage, device: Device?)
    /// Send a frame that waited in the device's session while it was away (after `hello.ok`
    /// of a resume, oldest first).
    case replay(ServerSessionCore.ConnectionID, SignalingMessage)
    /// Close the connection with a WebSocket close code and reason (docs/protocol.md,
    /// Close codes). Later frames from it are ignored.
    case close(ServerSessionCore.ConnectionID, code: UInt16, reason: String)
    /// Check this `hello` (the application's credentials from the store, the token) and
    /// answer with `helloAccepted`, `helloRefused` or `helloFailed`.
    case verifyHello(ServerSessionCore.ConnectionID, SignalingMessage.Hello)
    /// A call request from an authenticated device, for the call engine.
    case callRequest(Device, SignalingMessage)
    /// A push request (`push.register`, `push.unregister`, `push.relay`) answered later,
    /// off the loop; tell the core `requestAnswered(on:)` once its reply went out (a
    /// rate-limit close waits for it).
    case pushRequest(ServerSessionCore.ConnectionID, Device, SignalingMessage)
    /// The device's session is held by a connection again (`hello.ok` sent).
    case deviceConnected(Device, resumed: Bool)
    /// The device's connection went away; its session waits for a resume until the grace.
    case deviceDisconnected(Device)
    /// The device logged out (it closed with 1000): its session is gone now; its calls end
    /// as if it had hung them up, then it is disconnected.
    case deviceLoggedOut(Device)
    /// Something to log and count (the shell's log lines and metrics).
    case event(ServerSessionEvent)
}

/// What happened in the session layer, for logs and metrics.
public enum ServerSessionEvent: Sendable, Hashable {
    case connectionOpened(ServerSessionCore.ConnectionID)
    case connectionClosed(ServerSessionCore.ConnectionID, code: UInt16?)
    /// A newer connection of the same device took its place (closed with 4003); it no
    /// longer counts as open.
    case connectionReplaced(ServerSessionCore.ConnectionID, by: ServerSessionCore.ConnectionID, device: Device)
    case helloTimedOut(ServerSessionCore.ConnectionID)
    case heartbeatTimedOut(ServerSessionCore.ConnectionID, device: Device?)
    /// A frame that failed to decode, with the error code sent back.
    case frameRefused(ServerSessionCore.ConnectionID, code: String, reason: String)
    case received(SignalingMessage, from: String)
    case rateLimitClose(ServerSessionCore.ConnectionID, device: Device?)
    case helloRefused(ServerSessionCore.ConnectionID, code: String, reason: String)
    case helloStoreFailed(ServerSessionCore.ConnectionID, message: String)
    case authenticated(ServerSessionCore.ConnectionID, device: Device, sessionID: String, resumed: Bool, replayed: Int)
    /// The device logged out and its session ended.
    case sessionClosed(sessionID: String, device: Device)
    /// The reconnect grace passed with the device away; `dropped` messages were lost.
    case sessionExpired(sessionID: String, device: Device, dropped: Int)
    case messageBuffered(SignalingMessage, device: Device)
    case messageDropped(SignalingMessage, device: Device)
}
