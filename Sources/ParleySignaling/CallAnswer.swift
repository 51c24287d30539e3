import ParleyWireCore
extension SignalingMessage {
    /// `call.answer` (device to server): the callee answers an incoming call with its SDP
    /// answer to the offer in `call.incoming`. Answered by `result`, then `call.answered`.
    public struct CallAnswer: Sendable, Hashable {
        /// Request id, echoed as `re` in the reply.
        public var requestID: String
        /// The incoming call's id.
        public var callID: String
        /// The device's SDP answer to the offer of `call.incoming`; nil when the device
        /// already gave it in `call.ack` (its leg connected while it rang).
        public var sdp: String?

        public init(requestID: String, callID: String, sdp: String?) {
            self.requestID = requestID
            self.callID = callID
            self.sdp = sdp
        }

        init(_ reader: FieldReader) throws(SignalingError) {
            requestID = try reader.requestIDField()
            callID = try reader.callIDField()
            sdp = try reader.optionalString("sdp", .sdp)
        }

        func append(to object: inout JSONObject) {
            object.append("id", requestID)
            object.append("callId", callID)
            if let sdp { object.append("sdp", sdp) }
        }
    }
}
