import ParleyWireCore
extension SignalingMessage {
    /// `call.dtmf` (server to device): DTMF digits the far side of a call to a phone number
    /// or SIP endpoint sent, as RFC 4733 telephone events in its media or as SIP INFO
    /// (`application/dtmf-relay`), relayed by the server in the order they arrived.
    ///
    /// The same `type` as the device's request (`CallDTMF`); this event carries no `id`,
    /// which is how a reader that does not know who sent a frame tells them apart
    /// (docs/protocol.md, "`call.dtmf` (event)").
    public struct CallDTMFReceived: Sendable, Hashable {
        /// The call's id.
        public var callID: String
        /// One to 32 of `0-9 * # A B C D`, in the order the far side sent them.
        public var digits: String
        /// When the server received the (first) digit, milliseconds since the Unix epoch
        /// (server clock).
        public var time: Int64

        public init(callID: String, digits: String, time: Int64) {
            self.callID = callID
            self.digits = digits
            self.time = time
        }

        init(_ reader: FieldReader) throws(SignalingError) {
            callID = try reader.callIDField()
            digits = try reader.string("digits", .dtmfDigits)
            time = try reader.timeField("time")
        }

        func append(to object: inout JSONObject) {
            object.append("callId", callID)
            object.append("digits", digits)
            object.append("time", time)
        }
    }
}
