import ParleyCallCore
import ParleySignaling
import Testing

/// A fresh call id, as a device makes one (from the system's generator).
func newCallID() -> String {
    var generator = SystemRandomNumberGenerator()
    return CallID.random(using: &generator)
}

extension TestDevice {
    /// Sends `call.start` to `callee` with `sdp` and reads the caller's `result`.
    func startCall(to callee: String, sdp: String, callID: String = newCallID()) throws -> String {
        let id = requestID()
        try send(.callStart(.init(requestID: id, callID: callID, to: .user(callee), headers: ["X-Test": "1"], sdp: sdp)))
        let reply = try expect(.result)
        #expect(reply.replyTo == id)
        return callID
    }

    /// Sends a call request (`call.ack`, `call.decline`, `call.hangup`) and reads its `result`.
    func request(_ make: (SignalingMessage.CallRequest) -> SignalingMessage, callID: String) throws {
        let id = requestID()
        try send(make(.init(requestID: id, callID: callID)))
        let reply = try expect(.result)
        #expect(reply.replyTo == id)
    }

    /// Sends `call.ack` (with an early media answer when `sdp` is given) and reads its `result`.
    func request(_ make: (SignalingMessage.CallAck) -> SignalingMessage, callID: String, sdp: String? = nil) throws {
        let id = requestID()
        try send(make(.init(requestID: id, callID: callID, sdp: sdp)))
        let reply = try expect(.result)
        #expect(reply.replyTo == id)
    }

    func answer(callID: String, sdp: String?) throws {
        let id = requestID()
        try send(.callAnswer(.init(requestID: id, callID: callID, sdp: sdp)))
        let reply = try expect(.result)
        #expect(reply.replyTo == id)
    }

    /// Reads `call.ended` and returns its cause (and error code).
    func expectEnded(_ callID: String, timeout: Duration = .seconds(5)) throws -> (cause: String, code: String?, message: String?) {
        guard case .callEnded(let ended) = try expect(.callEnded, timeout: timeout) else { throw TestFailure("not call.ended") }
        #expect(ended.callID == callID)
        return (ended.cause.rawValue, ended.error?.code.rawValue, ended.error?.message)
    }
}

extension SignalingMessage {
    var sdp: String? {
        switch self {
        case .callIncoming(let incoming): incoming.sdp
        case .callMedia(let media): media.sdp
        default: nil
        }
    }
}
