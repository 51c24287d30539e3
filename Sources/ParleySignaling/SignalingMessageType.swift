/// The `type` of a frame: every message of protocol version 1.
public enum SignalingMessageType: String, Sendable, Hashable, CaseIterable, Codable {
    // Device to server: requests, each carrying an `id`. `call.dtmf` is also a server
    // event (without `id`): see `isSent(by:)`.
    case hello = "hello"
    case ping = "ping"
    case callStart = "call.start"
    case callAck = "call.ack"
    case callAnswer = "call.answer"
    case callDecline = "call.decline"
    case callHangup = "call.hangup"
    case callDTMF = "call.dtmf"
    case callHold = "call.hold"
    case callStats = "call.stats"
    case iceCandidate = "ice.candidate"
    case pushRegister = "push.register"
    case pushUnregister = "push.unregister"
    case pushRelay = "push.relay"

    // Server to device: replies, each carrying `re`.
    case helloOK = "hello.ok"
    case pong = "pong"
    case result = "result"
    case error = "error"

    // Server to device: events.
    case callIncoming = "call.incoming"
    case callMedia = "call.media"
    case callProgress = "call.progress"
    case callRinging = "call.ringing"
    case callAnswered = "call.answered"
    case callEstablished = "call.established"
    case callEnded = "call.ended"
    case callTalking = "call.talking"
    case callHeld = "call.held"

    /// Who may send a message.
    public enum Direction: String, Sendable, Hashable {
        case deviceToServer
        case serverToDevice
    }

    /// Who sends messages of this type. `call.dtmf` is the one type both sides send (a
    /// device's request, the server's event): for it this is the request's sender,
    /// devices; `isSent(by:)` and `SignalingMessage.direction` tell the two apart.
    public var direction: Direction {
        switch self {
        case .hello, .ping, .callStart, .callAck, .callAnswer, .callDecline, .callHangup, .callDTMF, .callHold, .callStats,
             .iceCandidate, .pushRegister, .pushUnregister, .pushRelay:
            .deviceToServer
        case .helloOK, .pong, .result, .error, .callIncoming, .callMedia, .callProgress,
             .callRinging, .callAnswered, .callEstablished, .callEnded, .callTalking, .callHeld:
            .serverToDevice
        }
    }

    /// Whether `sender` sends messages of this type: `direction`, and for `call.dtmf` both.
    public func isSent(by sender: Direction) -> Bool {
        self == .callDTMF || direction == sender
    }
}
