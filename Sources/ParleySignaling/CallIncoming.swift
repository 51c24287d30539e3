import ParleyWireCore
extension SignalingMessage {
    /// `call.incoming` (server to device): a call for this device's user. Every connected
    /// device of the user gets it; the device rings, then sends `call.answer`,
    /// `call.decline`, or nothing (the call ends with `timeout`).
    public struct CallIncoming: Sendable, Hashable {
        /// The call's id.
        public var callID: String
        /// The caller.
        public var from: Address
        /// Custom headers the caller set.
        public var headers: [String: String]
        /// Whether the caller offered video.
        public var video: Bool
        /// When the call started, milliseconds since the Unix epoch (server clock).
        public var time: Int64
        /// The SDP offer of the server's media anchor for this device's leg.
        public var sdp: String
        /// The caller's display name, when the caller set one (`call.start`'s `displayName`).
        public var displayName: String?

        public init(
            callID: String, from: Address, headers: [String: String] = [:], video: Bool = false, time: Int64, sdp: String,
            displayName: String? = nil
        ) {
            self.callID = callID
            self.from = from
            self.headers = headers
            self.video = video
            self.time = time
            self.sdp = sdp
            self.displayName = displayName
        }

        init(_ reader: FieldReader) throws(SignalingError) {
            callID = try reader.callIDField()
            from = try Address(try reader.object("from"))
            headers = try reader.headersField()
            video = try reader.bool("video", default: false)
            time = try reader.timeField("time")
            sdp = try reader.string("sdp", .sdp)
            displayName = try reader.optionalString("displayName", .displayName)
        }

        func append(to object: inout JSONObject) {
            object.append("callId", callID)
            object.append("from", from.json)
            object.append("headers", headersJSON(headers))
            object.append("video", video)
            object.append("time", time)
            object.append("sdp", sdp)
            if let displayName { object.append("displayName", displayName) }
        }
    }
}
