import ParleyWireCore
extension SignalingMessage {
    /// `push.relay` (device to server): a device woken by a call push hands the push's
    /// signed payload back, after `hello`. Answered by `result`, then `call.incoming` for
    /// the call, or `call.ended` if it already ended (so the device never rings for a
    /// canceled call); `error` `push_payload_invalid` for a forged or stale payload.
    public struct PushRelay: Sendable, Hashable {
        /// Request id, echoed as `re` in the reply.
        public var requestID: String
        /// The `parley` value of the push's payload, as received.
        public var payload: String

        public init(requestID: String, payload: String) {
            self.requestID = requestID
            self.payload = payload
        }

        init(_ reader: FieldReader) throws(SignalingError) {
            requestID = try reader.requestIDField()
            payload = try reader.string("payload", .pushPayload)
        }

        func append(to object: inout JSONObject) {
            object.append("id", requestID)
            object.append("payload", payload)
        }
    }
}
