import ParleyWireCore
extension SignalingMessage {
    /// A call event that says only which call and when: `call.progress`, `call.ringing`,
    /// `call.answered`, `call.established`.
    public struct CallEvent: Sendable, Hashable {
        /// The call's id.
        public var callID: String
        /// When it happened, milliseconds since the Unix epoch (server clock).
        public var time: Int64

        public init(callID: String, time: Int64) {
            self.callID = callID
            self.time = time
        }

        init(_ reader: FieldReader) throws(SignalingError) {
            callID = try reader.callIDField()
            time = try reader.timeField("time")
        }

        func append(to object: inout JSONObject) {
            object.append("callId", callID)
            object.append("time", time)
        }
    }
}
