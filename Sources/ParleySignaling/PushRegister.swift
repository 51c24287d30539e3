public import ParleyCallModel
import ParleyWireCore
extension SignalingMessage {
    /// `push.register` (device to server): the device can be woken by this push token when
    /// it is not connected. Registering again replaces the device's token of that type.
    /// Answered by `result`.
    public struct PushRegister: Sendable, Hashable {
        /// Request id, echoed as `re` in the reply.
        public var requestID: String
        /// The push service.
        public var pushType: PushType
        /// The token the push service gave the device (APNs: hex; FCM: registration token).
        public var token: String
        /// APNs environment of the token; FCM tokens use `production`.
        public var environment: PushEnvironment
        /// The iOS bundle id or Android package name the token belongs to.
        public var appID: String

        public init(requestID: String, pushType: PushType, token: String, environment: PushEnvironment = .production, appID: String) {
            self.requestID = requestID
            self.pushType = pushType
            self.token = token
            self.environment = environment
            self.appID = appID
        }

        init(_ reader: FieldReader) throws(SignalingError) {
            requestID = try reader.requestIDField()
            pushType = try reader.enumeration("pushType", as: PushType.self)
            token = try reader.string("token", .pushToken)
            environment = try reader.optionalEnumeration("environment", as: PushEnvironment.self) ?? .production
            appID = try reader.string("appId", .appID)
        }

        func append(to object: inout JSONObject) {
            object.append("id", requestID)
            object.append("pushType", pushType.rawValue)
            object.append("token", token)
            object.append("environment", environment.rawValue)
            object.append("appId", appID)
        }
    }

    /// A push service: the call model's `PushType`, which the store records too.
    public typealias PushType = ParleyCallModel.PushType

    /// Which APNs environment issued a token: the call model's `PushEnvironment`.
    public typealias PushEnvironment = ParleyCallModel.PushEnvironment
}
