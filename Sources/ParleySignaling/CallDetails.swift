import ParleyWireCore
extension SignalingMessage {
    /// The times of a call, in integer milliseconds since the Unix epoch, read from the
    /// server's clock. Names follow the SDK's `call.details`.
    public struct CallDetails: Sendable, Hashable {
        /// When the server accepted `call.start` (or, for the callee, created the incoming call).
        public var startedTime: Int64
        /// When the caller got `call.progress`.
        public var progressedTime: Int64?
        /// When the caller got `call.ringing`.
        public var rungTime: Int64?
        /// When the call was answered.
        public var answeredTime: Int64?
        /// When media flowed on both legs.
        public var establishedTime: Int64?
        /// When the call ended.
        public var endedTime: Int64

        public init(startedTime: Int64, progressedTime: Int64? = nil, rungTime: Int64? = nil, answeredTime: Int64? = nil, establishedTime: Int64? = nil, endedTime: Int64) {
            self.startedTime = startedTime
            self.progressedTime = progressedTime
            self.rungTime = rungTime
            self.answeredTime = answeredTime
            self.establishedTime = establishedTime
            self.endedTime = endedTime
        }

        init(_ reader: FieldReader) throws(SignalingError) {
            startedTime = try reader.timeField("startedTime")
            progressedTime = try reader.optionalTimeField("progressedTime")
            rungTime = try reader.optionalTimeField("rungTime")
            answeredTime = try reader.optionalTimeField("answeredTime")
            establishedTime = try reader.optionalTimeField("establishedTime")
            // The order of the times is not checked: they are wall-clock readings, and a
            // clock stepped back mid-call must not make a client drop the call's end.
            endedTime = try reader.timeField("endedTime")
        }

        var json: JSONValue {
            var object = JSONObject()
            object.append("startedTime", startedTime)
            object.append("progressedTime", ifPresent: progressedTime)
            object.append("rungTime", ifPresent: rungTime)
            object.append("answeredTime", ifPresent: answeredTime)
            object.append("establishedTime", ifPresent: establishedTime)
            object.append("endedTime", endedTime)
            return .object(object)
        }
    }
}
