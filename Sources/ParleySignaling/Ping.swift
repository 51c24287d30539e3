import ParleyWireCore
extension SignalingMessage {
    /// `ping` (device to server): keeps the connection alive and measures the round trip.
    /// Answered by `pong`. Allowed before `hello`.
    public struct Ping: Sendable, Hashable {
        /// Request id, echoed as `re` in the `pong`.
        public var requestID: String

        public init(requestID: String) {
            self.requestID = requestID
        }

        init(_ reader: FieldReader) throws(SignalingError) {
            requestID = try reader.requestIDField()
        }

        func append(to object: inout JSONObject) {
            object.append("id", requestID)
        }
    }
}
