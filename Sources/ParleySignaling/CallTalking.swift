import ParleyWireCore
extension SignalingMessage {
    /// `call.talking` (server to device): who talks in the conference room a call is in,
    /// sent to each participant's device whenever the room's talkers change (at most ten
    /// times a second per room, the latest change winning).
    public struct CallTalking: Sendable, Hashable {
        /// One participant the room's mixer counts as a talker.
        public struct Talker: Sendable, Hashable {
            /// The participant's call id (the REST API's participant `id`).
            public var callID: String
            /// The user who placed that call.
            public var userID: String

            public init(callID: String, userID: String) {
                self.callID = callID
                self.userID = userID
            }

            init(_ reader: FieldReader) throws(SignalingError) {
                callID = try reader.string("id", .callID)
                userID = try reader.string("user", .userID)
            }

            var json: JSONValue {
                var object = JSONObject()
                object.append("id", callID)
                object.append("user", userID)
                return .object(object)
            }
        }

        /// The receiving device's own call (its seat in the room).
        public var callID: String
        /// The talkers now, loudest first; empty when nobody talks. At most
        /// `SignalingLimits.maxTalkers`.
        public var talking: [Talker]

        public init(callID: String, talking: [Talker]) {
            self.callID = callID
            self.talking = talking
        }

        init(_ reader: FieldReader) throws(SignalingError) {
            callID = try reader.callIDField()
            // Required, and may be empty: "nobody talks" is news too.
            guard reader.value("talking") != nil else { throw reader.failure("talking", "is required") }
            var talking: [Talker] = []
            for element in try reader.objectArray("talking", maxCount: SignalingLimits.maxTalkers) {
                talking.append(try Talker(element))
            }
            self.talking = talking
        }

        func append(to object: inout JSONObject) {
            object.append("callId", callID)
            object.append("talking", .array(talking.map(\.json)))
        }
    }
}
