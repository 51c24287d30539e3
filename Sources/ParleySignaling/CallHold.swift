import ParleyWireCore
extension SignalingMessage {
    /// `call.hold` (device to server): put an established call on hold, or take it off
    /// hold. Answered by `result` once the server has the call held (or resumed) in its
    /// media and has told the other party (a device gets `call.held`; a SIP far side a
    /// re-INVITE, RFC 3264 §8.4); `error` `invalid_state` before the call is established,
    /// `call_not_found` for a call this device is not a party of.
    public struct CallHold: Sendable, Hashable {
        /// Request id, echoed as `re` in the reply.
        public var requestID: String
        /// The call's id.
        public var callID: String
        /// True to hold the call, false to resume it.
        public var held: Bool

        public init(requestID: String, callID: String, held: Bool) {
            self.requestID = requestID
            self.callID = callID
            self.held = held
        }

        init(_ reader: FieldReader) throws(SignalingError) {
            requestID = try reader.requestIDField()
            callID = try reader.callIDField()
            held = try reader.requiredBool("held")
        }

        func append(to object: inout JSONObject) {
            object.append("id", requestID)
            object.append("callId", callID)
            object.append("held", held)
        }
    }
}
