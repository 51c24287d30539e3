extension SignalingMessage {
    /// A reply that says only which request it answers: `result` (the request succeeded)
    /// and `pong` (the answer to `ping`).
    public struct Reply: Sendable, Hashable {
        /// The request's id.
        public var replyTo: String

        public init(replyTo: String) {
            self.replyTo = replyTo
        }

        init(_ reader: FieldReader) throws(SignalingError) {
            replyTo = try reader.replyToField()
        }

        func append(to object: inout JSONObject) {
            object.append("re", replyTo)
        }
    }
}
