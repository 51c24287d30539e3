import ParleyWireCore
extension SignalingMessage {
    /// `call.dtmf` (device to server): send DTMF digits on an established call; the server
    /// plays them to the other leg as RFC 4733 telephone events. Answered by `result`.
    public struct CallDTMF: Sendable, Hashable {
        /// Request id, echoed as `re` in the reply.
        public var requestID: String
        /// The call's id.
        public var callID: String
        /// One to 32 of `0-9 * # A B C D`, sent in order.
        public var digits: String

        public init(requestID: String, callID: String, digits: String) {
            self.requestID = requestID
            self.callID = callID
            self.digits = digits
        }

        init(_ reader: FieldReader) throws(SignalingError) {
            requestID = try reader.requestIDField()
            callID = try reader.callIDField()
            digits = try reader.string("digits", .dtmfDigits)
        }

        func append(to object: inout JSONObject) {
            object.append("id", requestID)
            object.append("callId", callID)
            object.append("digits", digits)
        }
    }
}
