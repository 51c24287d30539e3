import ParleyWireCore
extension SignalingMessage {
    /// `call.media` (server to device): the server's SDP answer to the caller's offer in
    /// `call.start`. Sent right after the `result`, before the callee answers, so the
    /// caller's media leg (ICE, DTLS) is ready by the time the call is answered.
    public struct CallMedia: Sendable, Hashable {
        /// The call's id.
        public var callID: String
        /// The server's SDP answer.
        public var sdp: String

        public init(callID: String, sdp: String) {
            self.callID = callID
            self.sdp = sdp
        }

        init(_ reader: FieldReader) throws(SignalingError) {
            callID = try reader.callIDField()
            sdp = try reader.string("sdp", .sdp)
        }

        func append(to object: inout JSONObject) {
            object.append("callId", callID)
            object.append("sdp", sdp)
        }
    }
}
