import ParleyWireCore
extension SignalingMessage {
    /// `hello.ok` (server to device): authentication succeeded; the session is open.
    public struct HelloOK: Sendable, Hashable {
        /// The `hello`'s request id.
        public var replyTo: String
        /// This connection's session id; pass it as `resumeSessionId` when reconnecting.
        public var sessionID: String
        /// The authenticated user (the token's subject).
        public var userID: String
        /// The server's version, printable ASCII.
        public var serverVersion: String
        /// How often the device should send `ping`, in milliseconds (1000 to 600000). The
        /// server closes a connection that sent nothing for twice this long.
        public var heartbeatInterval: Int64
        /// The server's clock, milliseconds since the Unix epoch, to relate event times to the device's clock.
        public var time: Int64
        /// Whether `resumeSessionId` was honoured: the calls of that session continue here.
        public var resumed: Bool
        /// Media configuration for the device's peer connections.
        public var media: MediaHints

        public init(replyTo: String, sessionID: String, userID: String, serverVersion: String, heartbeatInterval: Int64, time: Int64, resumed: Bool = false, media: MediaHints = MediaHints()) {
            self.replyTo = replyTo
            self.sessionID = sessionID
            self.userID = userID
            self.serverVersion = serverVersion
            self.heartbeatInterval = heartbeatInterval
            self.time = time
            self.resumed = resumed
            self.media = media
        }

        init(_ reader: FieldReader) throws(SignalingError) {
            replyTo = try reader.replyToField()
            sessionID = try reader.string("sessionId", .requestID)
            userID = try reader.string("userId", .userID)
            serverVersion = try reader.string("serverVersion", .shortVisibleASCII)
            heartbeatInterval = try reader.integer("heartbeatMs", in: 1000...600_000)
            time = try reader.timeField("time")
            resumed = try reader.bool("resumed", default: false)
            media = try reader.optionalObject("media").map { reader throws(SignalingError) in try MediaHints(reader) } ?? MediaHints()
        }

        func append(to object: inout JSONObject) {
            object.append("re", replyTo)
            object.append("sessionId", sessionID)
            object.append("userId", userID)
            object.append("serverVersion", serverVersion)
            object.append("heartbeatMs", heartbeatInterval)
            object.append("time", time)
            object.append("resumed", resumed)
            object.append("media", media.json)
        }
    }

    /// Media configuration the server gives a device in `hello.ok`.
    public struct MediaHints: Sendable, Hashable {
        /// Codecs the server accepts, preferred first, as `name/clock rate[/channels]`: `opus/48000/2`.
        public var codecs: [String]
        /// STUN/TURN servers for networks where UDP to the server is blocked (e.g. coturn).
        public var iceServers: [ICEServer]

        public init(codecs: [String] = [], iceServers: [ICEServer] = []) {
            self.codecs = codecs
            self.iceServers = iceServers
        }

        init(_ reader: FieldReader) throws(SignalingError) {
            codecs = try reader.stringArray("codecs", maxCount: SignalingLimits.maxListCount, .shortVisibleASCII)
            var servers: [ICEServer] = []
            for server in try reader.objectArray("iceServers", maxCount: SignalingLimits.maxListCount) {
                servers.append(try ICEServer(server))
            }
            iceServers = servers
        }

        var json: JSONValue {
            var object = JSONObject()
            object.append("codecs", .array(codecs.map { .string($0) }))
            object.append("iceServers", .array(iceServers.map(\.json)))
            return .object(object)
        }
    }

    /// One STUN or TURN server, shaped like WebRTC's `RTCIceServer`.
    public struct ICEServer: Sendable, Hashable {
        /// `stun:`, `stuns:`, `turn:` or `turns:` URLs of the same server.
        public var urls: [String]
        /// TURN user name.
        public var username: String?
        /// TURN password.
        public var credential: String?

        public init(urls: [String], username: String? = nil, credential: String? = nil) {
            self.urls = urls
            self.username = username
            self.credential = credential
        }

        init(_ reader: FieldReader) throws(SignalingError) {
            urls = try reader.stringArray("urls", maxCount: SignalingLimits.maxListCount, .iceServerURL, required: true)
            username = try reader.optionalString("username", .credential)
            credential = try reader.optionalString("credential", .credential)
        }

        var json: JSONValue {
            var object = JSONObject()
            object.append("urls", .array(urls.map { .string($0) }))
            object.append("username", ifPresent: username)
            object.append("credential", ifPresent: credential)
            return .object(object)
        }
    }
}
