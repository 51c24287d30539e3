import ParleyWireCore
extension SignalingMessage {
    /// `ice.candidate` (device to server): a trickled ICE candidate of the device (RFC 8838),
    /// or end of candidates. Optional: the server is ICE-lite and learns the device's
    /// address from its connectivity checks, so candidates in the SDP are enough.
    public struct ICECandidate: Sendable, Hashable {
        /// Request id, echoed as `re` in the reply.
        public var requestID: String
        /// The call's id.
        public var callID: String
        /// An `a=candidate` attribute value without `a=` (`candidate:...`), or empty for end of candidates.
        public var candidate: String
        /// The media section's `a=mid`, if the device has one.
        public var mid: String?

        public init(requestID: String, callID: String, candidate: String, mid: String? = nil) {
            self.requestID = requestID
            self.callID = callID
            self.candidate = candidate
            self.mid = mid
        }

        init(_ reader: FieldReader) throws(SignalingError) {
            requestID = try reader.requestIDField()
            callID = try reader.callIDField()
            candidate = try reader.string("candidate", .iceCandidate)
            mid = try reader.optionalString("mid", .mid)
        }

        func append(to object: inout JSONObject) {
            object.append("id", requestID)
            object.append("callId", callID)
            object.append("candidate", candidate)
            object.append("mid", ifPresent: mid)
        }
    }
}
