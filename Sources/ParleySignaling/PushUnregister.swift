import ParleyWireCore
extension SignalingMessage {
    /// `push.unregister` (device to server): stop waking this device by push, on logout.
    /// Answered by `result` (also when nothing was registered).
    public struct PushUnregister: Sendable, Hashable {
        /// Request id, echoed as `re` in the reply.
        public var requestID: String
        /// The token to remove; absent removes every token of this device.
        public var token: String?

        public init(requestID: String, token: String? = nil) {
            self.requestID = requestID
            self.token = token
        }

        init(_ reader: FieldReader) throws(SignalingError) {
            requestID = try reader.requestIDField()
            token = try reader.optionalString("token", .pushToken)
        }

        func append(to object: inout JSONObject) {
            object.append("id", requestID)
            object.append("token", ifPresent: token)
        }
    }
}
