import ParleyWireCore
extension SignalingMessage {
    /// `call.held` (server to device): the other party of an established call put it on
    /// hold, or took it off hold: an app user through `call.hold`, or a SIP far side
    /// through a re-INVITE (or UPDATE) whose offer stops (`sendonly`, `inactive`) or
    /// restarts (`sendrecv`, `recvonly`) its audio toward us.
    public struct CallHeld: Sendable, Hashable {
        /// Which party of the call holds: the one that placed it, or the one that answered.
        public enum Holder: String, Sendable, Hashable, CaseIterable {
            case caller
            case callee
        }

        /// The call's id.
        public var callID: String
        /// True when the call is now held by `by`, false when `by` resumed it.
        public var held: Bool
        /// Who changed the hold: always the other party than the receiving device's.
        public var by: Holder
        /// When the server took the change, milliseconds since the Unix epoch.
        public var time: Int64

        public init(callID: String, held: Bool, by: Holder, time: Int64) {
            self.callID = callID
            self.held = held
            self.by = by
            self.time = time
        }

        init(_ reader: FieldReader) throws(SignalingError) {
            callID = try reader.callIDField()
            held = try reader.requiredBool("held")
            by = try reader.enumeration("by", as: Holder.self)
            time = try reader.timeField("time")
        }

        func append(to object: inout JSONObject) {
            object.append("callId", callID)
            object.append("held", held)
            object.append("by", by.rawValue)
            object.append("time", time)
        }
    }
}
