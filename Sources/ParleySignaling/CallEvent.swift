import ParleyWireCore
extension SignalingMessage {
    /// A call event that says which call and when: `call.progress`, `call.ringing`,
    /// `call.answered`, `call.established`. On a call to a phone number or SIP endpoint,
    /// `call.ringing` and `call.answered` may also carry the far side's `x-` headers.
    public struct CallEvent: Sendable, Hashable {
        /// The call's id.
        public var callID: String
        /// When it happened, milliseconds since the Unix epoch (server clock).
        public var time: Int64
        /// `call.ringing` and `call.answered` only: the custom (`x-`) SIP headers of the far
        /// side's 18x or 2xx response, under the same rules and limits as `call.start`'s
        /// headers; empty when there are none (the member is then omitted). The other
        /// two events have no such member: it is neither written nor read for them.
        public var headers: [String: String]

        public init(callID: String, time: Int64, headers: [String: String] = [:]) {
            self.callID = callID
            self.time = time
            self.headers = headers
        }

        /// Whether events of `type` carry `headers`.
        static func carriesHeaders(_ type: SignalingMessageType?) -> Bool {
            type == .callRinging || type == .callAnswered
        }

        init(_ reader: FieldReader) throws(SignalingError) {
            callID = try reader.callIDField()
            time = try reader.timeField("time")
            headers = Self.carriesHeaders(reader.messageType) ? try reader.headersField() : [:]
        }

        func append(to object: inout JSONObject, as type: SignalingMessageType) {
            object.append("callId", callID)
            object.append("time", time)
            if Self.carriesHeaders(type), !headers.isEmpty { object.append("headers", headersJSON(headers)) }
        }
    }
}
