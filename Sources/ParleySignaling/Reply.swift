import ParleyWireCore
extension SignalingMessage {
    /// A reply that says only which request it answers: `result` (the request succeeded)
    /// and `pong` (the answer to `ping`).
    public struct Reply: Sendable, Hashable {
        /// The request's id.
        public var replyTo: String
        /// Only in the `result` answering `push.register`: base64url (no padding) of the 32
        /// random bytes the server signs this registration's push payloads with.
        public var pushKey: String?

        public init(replyTo: String) {
            self.replyTo = replyTo
        }

        /// The `result` of `push.register`, with the registration's key.
        public init(replyTo: String, pushKey: String?) {
            self.replyTo = replyTo
            self.pushKey = pushKey
        }

        init(_ reader: FieldReader) throws(SignalingError) {
            replyTo = try reader.replyToField()
            pushKey = try reader.optionalString("pushKey", .shortVisibleASCII)
        }

        func append(to object: inout JSONObject) {
            object.append("re", replyTo)
            if let pushKey { object.append("pushKey", pushKey) }
        }
    }
}
