import ParleyWireCore
extension SignalingMessage {
    /// `call.start` (device to server): place a call. Answered by `result`; the call's
    /// progress then arrives as events (`call.media`, `call.progress`, ..., `call.ended`).
    public struct CallStart: Sendable, Hashable {
        /// Request id, echoed as `re` in the reply.
        public var requestID: String
        /// The new call's id, chosen by the device: a random (version 4) UUID in lower case,
        /// so that the SDK can hand out the call object before the server replies.
        public var callID: String
        /// The callee.
        public var to: Address
        /// Custom headers passed to the callee (at most 1024 bytes of names and values in total).
        public var headers: [String: String]
        /// Whether the caller offers video (the server carries audio only for now).
        public var video: Bool
        /// The device's SDP offer (RFC 8829 JSEP offer: ICE credentials, DTLS fingerprint, Opus).
        public var sdp: String
        /// The name the callee's devices show for the caller (the SDK's
        /// `setPushNotificationDisplayName`): carried into the callee's push and
        /// `call.incoming`. At most 255 bytes of text.
        public var displayName: String?
        /// For a call to a phone number: the calling line identity to present (E.164 with
        /// `+`), sent by the server as From and P-Asserted-Identity. Without one the
        /// application's default CLI is used; the server refuses it for other destinations.
        public var cli: String?

        public init(
            requestID: String, callID: String, to: Address, headers: [String: String] = [:], video: Bool = false, sdp: String,
            displayName: String? = nil, cli: String? = nil
        ) {
            self.requestID = requestID
            self.callID = callID
            self.to = to
            self.headers = headers
            self.video = video
            self.sdp = sdp
            self.displayName = displayName
            self.cli = cli
        }

        init(_ reader: FieldReader) throws(SignalingError) {
            requestID = try reader.requestIDField()
            callID = try reader.callIDField()
            to = try Address(try reader.object("to"))
            headers = try reader.headersField()
            video = try reader.bool("video", default: false)
            sdp = try reader.string("sdp", .sdp)
            displayName = try reader.optionalString("displayName", .displayName)
            cli = try reader.optionalString("cli", .phoneNumber)
        }

        func append(to object: inout JSONObject) {
            object.append("id", requestID)
            object.append("callId", callID)
            object.append("to", to.json)
            object.append("headers", headersJSON(headers))
            object.append("video", video)
            object.append("sdp", sdp)
            if let displayName { object.append("displayName", displayName) }
            if let cli { object.append("cli", cli) }
        }
    }
}

