import ParleyWireCore
extension SignalingMessage {
    /// A request about one call that needs nothing but its id: `call.decline` (the callee
    /// refuses an incoming call) and `call.hangup` (either party ends or cancels a call).
    /// Answered by `result`;
    /// after a decline or hangup the end arrives as `call.ended`.
    public struct CallRequest: Sendable, Hashable {
        /// Request id, echoed as `re` in the reply.
        public var requestID: String
        /// The call's id.
        public var callID: String

        public init(requestID: String, callID: String) {
            self.requestID = requestID
            self.callID = callID
        }

        init(_ reader: FieldReader) throws(SignalingError) {
            requestID = try reader.requestIDField()
            callID = try reader.callIDField()
        }

        func append(to object: inout JSONObject) {
            object.append("id", requestID)
            object.append("callId", callID)
        }
    }
}
