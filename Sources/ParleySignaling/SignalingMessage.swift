import ParleyWireCore
/// One frame of the Parley signaling protocol (version 1), either direction.
///
/// On the wire every frame is one JSON object in a WebSocket text frame:
/// `{"v":1,"type":"call.start","id":"7",...}`. Device-to-server messages are requests
/// carrying an `id`; the server answers each with exactly one reply carrying `re` (the
/// `id`), and sends events that carry neither. `SignalingCodec` turns frames into values
/// and back; docs/protocol.md describes every message.
///
/// The `Codable` form is the wire form: encoding with any `Encoder` gives the frame's
/// members (`v`, `type`, ...), and decoding applies the same validation as
/// `SignalingCodec.decode`, throwing `SignalingError`.
public enum SignalingMessage: Sendable, Hashable {
    // MARK: Device to server: requests

    /// `hello`: authenticate; the first frame on a connection.
    case hello(Hello)
    /// `ping`: keep-alive; answered by `pong`.
    case ping(Ping)
    /// `call.start`: place a call.
    case callStart(CallStart)
    /// `call.ack`: an incoming call is ringing on this device.
    case callAck(CallAck)
    /// `call.answer`: answer an incoming call.
    case callAnswer(CallAnswer)
    /// `call.decline`: refuse an incoming call.
    case callDecline(CallRequest)
    /// `call.hangup`: end, or cancel, a call.
    case callHangup(CallRequest)
    /// `call.dtmf` with an `id`: send DTMF digits.
    case callDTMF(CallDTMF)
    /// `call.hold`: hold or resume an established call.
    case callHold(CallHold)
    /// `call.stats`: the device's playout counters of a call.
    case callStats(CallStats)
    /// `ice.candidate`: a trickled ICE candidate.
    case iceCandidate(ICECandidate)
    /// `push.register`: register a push token.
    case pushRegister(PushRegister)
    /// `push.unregister`: remove push tokens.
    case pushUnregister(PushUnregister)
    /// `push.relay`: hand back a call push's payload.
    case pushRelay(PushRelay)

    // MARK: Server to device: replies

    /// `hello.ok`: the session is open.
    case helloOK(HelloOK)
    /// `pong`: the answer to `ping`.
    case pong(Reply)
    /// `result`: the request succeeded.
    case result(Reply)
    /// `error`: the request failed, or a frame was not understood.
    case error(ErrorReply)

    // MARK: Server to device: call events

    /// `call.incoming`: a call for this device's user.
    case callIncoming(CallIncoming)
    /// `call.media`: the server's SDP answer for the caller.
    case callMedia(CallMedia)
    /// `call.progress`: the server is reaching the callee.
    case callProgress(CallEvent)
    /// `call.ringing`: a callee device is ringing.
    case callRinging(CallEvent)
    /// `call.answered`: the call was answered.
    case callAnswered(CallEvent)
    /// `call.established`: media flows on both legs.
    case callEstablished(CallEvent)
    /// `call.ended`: the call is over.
    case callEnded(CallEnded)
    /// `call.dtmf` without an `id`: digits the far side of a phone or SIP call sent.
    case callDTMFReceived(CallDTMFReceived)
    /// `call.talking`: who talks in the conference room the call is in.
    case callTalking(CallTalking)
    /// `call.held`: the other party held or resumed the call.
    case callHeld(CallHeld)

    /// The frame's `type`.
    public var type: SignalingMessageType {
        switch self {
        case .hello: .hello
        case .ping: .ping
        case .callStart: .callStart
        case .callAck: .callAck
        case .callAnswer: .callAnswer
        case .callDecline: .callDecline
        case .callHangup: .callHangup
        case .callDTMF: .callDTMF
        case .callHold: .callHold
        case .callStats: .callStats
        case .iceCandidate: .iceCandidate
        case .pushRegister: .pushRegister
        case .pushUnregister: .pushUnregister
        case .pushRelay: .pushRelay
        case .helloOK: .helloOK
        case .pong: .pong
        case .result: .result
        case .error: .error
        case .callIncoming: .callIncoming
        case .callMedia: .callMedia
        case .callProgress: .callProgress
        case .callRinging: .callRinging
        case .callAnswered: .callAnswered
        case .callEstablished: .callEstablished
        case .callEnded: .callEnded
        case .callDTMFReceived: .callDTMF
        case .callTalking: .callTalking
        case .callHeld: .callHeld
        }
    }

    /// Who sends this message: its type's direction, except for `call.dtmf`, which devices
    /// send as a request (`callDTMF`) and the server as an event (`callDTMFReceived`).
    public var direction: SignalingMessageType.Direction {
        if case .callDTMFReceived = self { return .serverToDevice }
        return type.direction
    }

    /// The request id (`id`) of a device-to-server message.
    public var requestID: String? {
        switch self {
        case .hello(let m): m.requestID
        case .ping(let m): m.requestID
        case .callStart(let m): m.requestID
        case .callAnswer(let m): m.requestID
        case .callAck(let m): m.requestID
        case .callDecline(let m), .callHangup(let m): m.requestID
        case .callDTMF(let m): m.requestID
        case .callHold(let m): m.requestID
        case .callStats(let m): m.requestID
        case .iceCandidate(let m): m.requestID
        case .pushRegister(let m): m.requestID
        case .pushUnregister(let m): m.requestID
        case .pushRelay(let m): m.requestID
        default: nil
        }
    }

    /// The id of the request a reply answers (`re`).
    public var replyTo: String? {
        switch self {
        case .helloOK(let m): m.replyTo
        case .pong(let m), .result(let m): m.replyTo
        case .error(let m): m.replyTo
        default: nil
        }
    }

    /// The call a message is about, if any.
    public var callID: String? {
        switch self {
        case .callStart(let m): m.callID
        case .callAnswer(let m): m.callID
        case .callAck(let m): m.callID
        case .callDecline(let m), .callHangup(let m): m.callID
        case .callDTMF(let m): m.callID
        case .callHold(let m): m.callID
        case .callStats(let m): m.callID
        case .iceCandidate(let m): m.callID
        case .callIncoming(let m): m.callID
        case .callMedia(let m): m.callID
        case .callProgress(let m), .callRinging(let m), .callAnswered(let m), .callEstablished(let m): m.callID
        case .callEnded(let m): m.callID
        case .callDTMFReceived(let m): m.callID
        case .callTalking(let m): m.callID
        case .callHeld(let m): m.callID
        default: nil
        }
    }

    // MARK: Wire form

    /// The whole frame as a JSON object: `v`, `type`, then the message's own members.
    var json: JSONValue {
        var object = JSONObject()
        object.append("v", SignalingCodec.version)
        object.append("type", type.rawValue)
        switch self {
        case .hello(let m): m.append(to: &object)
        case .ping(let m): m.append(to: &object)
        case .callStart(let m): m.append(to: &object)
        case .callAnswer(let m): m.append(to: &object)
        case .callAck(let m): m.append(to: &object)
        case .callDecline(let m), .callHangup(let m): m.append(to: &object)
        case .callDTMF(let m): m.append(to: &object)
        case .callHold(let m): m.append(to: &object)
        case .callStats(let m): m.append(to: &object)
        case .iceCandidate(let m): m.append(to: &object)
        case .pushRegister(let m): m.append(to: &object)
        case .pushUnregister(let m): m.append(to: &object)
        case .pushRelay(let m): m.append(to: &object)
        case .helloOK(let m): m.append(to: &object)
        case .pong(let m), .result(let m): m.append(to: &object)
        case .error(let m): m.append(to: &object)
        case .callIncoming(let m): m.append(to: &object)
        case .callMedia(let m): m.append(to: &object)
        case .callProgress(let m), .callRinging(let m), .callAnswered(let m), .callEstablished(let m): m.append(to: &object, as: type)
        case .callEnded(let m): m.append(to: &object)
        case .callDTMFReceived(let m): m.append(to: &object)
        case .callTalking(let m): m.append(to: &object)
        case .callHeld(let m): m.append(to: &object)
        }
        return .object(object)
    }

    /// Reads the message of `type` sent by `sender` from a frame whose envelope has been
    /// checked (`sender` only matters for `call.dtmf`, the one type both sides send).
    init(type: SignalingMessageType, sender: SignalingMessageType.Direction, reader: FieldReader) throws(SignalingError) {
        switch type {
        case .hello: self = .hello(try Hello(reader))
        case .ping: self = .ping(try Ping(reader))
        case .callStart: self = .callStart(try CallStart(reader))
        case .callAck: self = .callAck(try CallAck(reader))
        case .callAnswer: self = .callAnswer(try CallAnswer(reader))
        case .callDecline: self = .callDecline(try CallRequest(reader))
        case .callHangup: self = .callHangup(try CallRequest(reader))
        case .callDTMF:
            self = sender == .deviceToServer ? .callDTMF(try CallDTMF(reader)) : .callDTMFReceived(try CallDTMFReceived(reader))
        case .callHold: self = .callHold(try CallHold(reader))
        case .callStats: self = .callStats(try CallStats(reader))
        case .iceCandidate: self = .iceCandidate(try ICECandidate(reader))
        case .pushRegister: self = .pushRegister(try PushRegister(reader))
        case .pushUnregister: self = .pushUnregister(try PushUnregister(reader))
        case .pushRelay: self = .pushRelay(try PushRelay(reader))
        case .helloOK: self = .helloOK(try HelloOK(reader))
        case .pong: self = .pong(try Reply(reader))
        case .result: self = .result(try Reply(reader))
        case .error: self = .error(try ErrorReply(reader))
        case .callIncoming: self = .callIncoming(try CallIncoming(reader))
        case .callMedia: self = .callMedia(try CallMedia(reader))
        case .callProgress: self = .callProgress(try CallEvent(reader))
        case .callRinging: self = .callRinging(try CallEvent(reader))
        case .callAnswered: self = .callAnswered(try CallEvent(reader))
        case .callEstablished: self = .callEstablished(try CallEvent(reader))
        case .callEnded: self = .callEnded(try CallEnded(reader))
        case .callTalking: self = .callTalking(try CallTalking(reader))
        case .callHeld: self = .callHeld(try CallHeld(reader))
        }
    }
}
