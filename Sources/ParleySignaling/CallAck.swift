import ParleyWireCore
extension SignalingMessage {
    /// `call.ack`: an incoming call is ringing on this device. With `sdp`, the device also
    /// answers the media offer of `call.incoming` while it rings (an *early media answer*):
    /// the server connects this device's leg (ICE, DTLS) at once and keeps audio off until
    /// `call.answer`, which then carries no SDP. Answered by `result`.
    public struct CallAck: Sendable, Hashable {
        /// Request id, echoed as `re` in the reply.
        public var requestID: String
        /// The incoming call's id.
        public var callID: String
        /// The device's SDP answer to the offer of `call.incoming`, given before the user
        /// answers; nil for an acknowledgement only (the answer then comes with `call.answer`).
        public var sdp: String?

        public init(requestID: String, callID: String, sdp: String? = nil) {
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
