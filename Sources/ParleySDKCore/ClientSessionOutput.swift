import Foundation
import ParleySignaling

/// What the media shell must do for a call's leg.
enum ClientMediaInstruction: Sendable, Hashable {
    /// Create the leg and make an SDP offer; answer with `legOffered` or `legFailed`.
    case createOffer(callID: String)
    /// Apply the server's SDP answer (`call.media`) to the leg and start it.
    case acceptAnswer(callID: String, sdp: String)
    /// Create the leg, answer the server's offer and start it; answer with `legAnswered`
    /// or `legFailed`.
    case answerOffer(callID: String, sdp: String)
    /// Create the leg for a ringing call, answer the server's offer and start it without
    /// audio (ICE and DTLS only); answer with `legPrepared` or `legPreparationFailed`.
    case prepareAnswer(callID: String, sdp: String)
    /// Give the prepared leg its audio: the user answered.
    case activate(callID: String)
    /// Close the leg, if there is one.
    case close(callID: String)
}

/// What a call's delegate hears.
enum ClientCallEventKind: String, Sendable, Hashable {
    case incoming, progressed, rang, answered, established, ended
    /// The call's hold changed: this device's (`call.hold` accepted) or the other party's (`call.held`).
    case holdChanged
}

/// One thing `ClientSessionCore` asks its I/O shell to do, in order.
enum ClientSessionOutput: Sendable, Hashable, CustomStringConvertible {
    /// Open WebSocket connection number `connection`; report `connectionOpened` or `connectionFailed`.
    case connect(connection: Int)
    /// Close connection `connection` with this close code.
    case close(connection: Int, code: UInt16)
    /// Send this frame on the open connection.
    case send(SignalingMessage)
    /// Ask the delegate for a token for connection `connection`.
    case requestToken(connection: Int)
    /// `clientDidStart`.
    case clientStarted
    /// `clientDidFail`; the client is stopped.
    case clientFailed(ParleyClientError)
    /// A call event for the delegates, with the call as it is after the event.
    case call(ClientCallEventKind, ClientCallRecord)
    /// Work for the call's media leg.
    case media(ClientMediaInstruction)
    /// The far side of call `callID` sent DTMF `digits` (`call.dtmf` event): for its delegates.
    case dtmfReceived(callID: String, digits: String)
    /// The server answered this device's `call.hold` for `callID` asking for `held`:
    /// accepted (`error` nil) or refused, timed out or never sent; for the oldest waiting
    /// `setHeld` completion of that call. The call goes on either way.
    case holdCompleted(callID: String, held: Bool, error: ParleyClientError?)
    /// The talkers of the room call `callID` is in changed (`call.talking`): for its delegates.
    case talkersChanged(callID: String, talkers: [ParleyConferenceTalker])
    /// The server holds `device` and signs its pushes with `pushKey`: store both.
    case pushRegistered(PushDevice, pushKey: String)
    /// `push.register` was refused, timed out or carried no key.
    case pushRegistrationFailed(ParleyClientError)
    /// Forget the stored registration (the server is being told).
    case pushUnregistered
    /// The server answered `push.unregister`: it no longer holds this device's token.
    case pushUnregisterSucceeded
    /// `push.unregister` was refused, timed out or could not be sent: the server may
    /// still wake this device.
    case pushUnregisterFailed(ParleyClientError)

    /// A compact line for test tables and logs.
    var description: String {
        switch self {
        case .connect(let id): "connect #\(id)"
        case .close(let id, let code): "close #\(id) \(code)"
        case .send(let message): "send \(SignalingCodec.encodeToString(message))"
        case .requestToken(let id): "token? #\(id)"
        case .clientStarted: "started"
        case .clientFailed(let error): "failed \(error.code)"
        case .call(let kind, let call):
            if kind == .ended {
                "ended \(call.callID) \(call.details.endCause.rawValue)" + (call.details.error.map { " \($0.code)" } ?? "")
            } else {
                "\(kind.rawValue) \(call.callID) \(call.state.rawValue)"
            }
        case .dtmfReceived(let id, let digits): "dtmf \(id) \(digits)"
        case .holdCompleted(let id, let held, let error): "hold \(id) \(held) " + (error.map(\.code) ?? "ok")
        case .talkersChanged(let id, let talkers): "talking \(id) \(talkers.map(\.userId).joined(separator: ","))"
        case .media(.createOffer(let id)): "media offer \(id)"
        case .media(.acceptAnswer(let id, _)): "media accept \(id)"
        case .media(.answerOffer(let id, _)): "media answer \(id)"
        case .media(.prepareAnswer(let id, _)): "media prepare \(id)"
        case .media(.activate(let id)): "media activate \(id)"
        case .media(.close(let id)): "media close \(id)"
        case .pushRegistered(let device, let key): "push registered \(device.pushType.rawValue) \(device.token) key=\(key)"
        case .pushRegistrationFailed(let error): "push failed \(error.code)"
        case .pushUnregistered: "push unregistered"
        case .pushUnregisterSucceeded: "push unregister done"
        case .pushUnregisterFailed(let error): "push unregister failed \(error.code)"
        }
    }
}
