import ParleyWireCore
extension SignalingMessage {
    /// `hello` (device to server): the first frame of a connection, authenticating the
    /// device's user with a token. Answered by `hello.ok` or by `error` and a close.
    public struct Hello: Sendable, Hashable {
        /// Request id, echoed as `re` in the reply.
        public var requestID: String
        /// The application key the SDK was created with; the token must belong to it.
        public var appKey: String
        /// The user token: a JWT (HS256) minted by the application's backend.
        public var token: String
        /// Stable id of this installation, so that a reconnect replaces the old connection.
        public var deviceID: String
        /// The client software.
        public var sdk: SDKInfo
        /// Optional features the device supports, e.g. `audio`, `dtmf`, `pushRelay`.
        public var capabilities: [String]
        /// The `sessionId` of a previous connection, to keep its calls after a network drop.
        public var resumeSessionID: String?

        public init(requestID: String, appKey: String, token: String, deviceID: String, sdk: SDKInfo, capabilities: [String] = [], resumeSessionID: String? = nil) {
            self.requestID = requestID
            self.appKey = appKey
            self.token = token
            self.deviceID = deviceID
            self.sdk = sdk
            self.capabilities = capabilities
            self.resumeSessionID = resumeSessionID
        }

        init(_ reader: FieldReader) throws(SignalingError) {
            requestID = try reader.requestIDField()
            appKey = try reader.string("appKey", .appKey)
            token = try reader.string("token", .jwt)
            deviceID = try reader.string("deviceId", .deviceID)
            sdk = try SDKInfo(try reader.object("sdk"))
            capabilities = try reader.stringArray("capabilities", maxCount: SignalingLimits.maxListCount, .requestID)
            resumeSessionID = try reader.optionalString("resumeSessionId", .requestID)
        }

        func append(to object: inout JSONObject) {
            object.append("id", requestID)
            object.append("appKey", appKey)
            object.append("token", token)
            object.append("deviceId", deviceID)
            object.append("sdk", sdk.json)
            object.append("capabilities", .array(capabilities.map { .string($0) }))
            object.append("resumeSessionId", ifPresent: resumeSessionID)
        }
    }

    /// The client software named in `hello`.
    public struct SDKInfo: Sendable, Hashable {
        /// Identifier of the client library, e.g. `parley-swift`, `parley-cli`, `my-python-client`.
        public var name: String
        /// Its version, printable ASCII, e.g. `0.1.0`.
        public var version: String
        /// Free text about the platform, e.g. `iOS 17.4` or `Linux x86_64`.
        public var platform: String?

        public init(name: String, version: String, platform: String? = nil) {
            self.name = name
            self.version = version
            self.platform = platform
        }

        init(_ reader: FieldReader) throws(SignalingError) {
            name = try reader.string("name", .requestID)
            version = try reader.string("version", .shortVisibleASCII)
            platform = try reader.optionalString("platform", .platform)
        }

        var json: JSONValue {
            var object = JSONObject()
            object.append("name", name)
            object.append("version", version)
            object.append("platform", ifPresent: platform)
            return .object(object)
        }
    }
}
