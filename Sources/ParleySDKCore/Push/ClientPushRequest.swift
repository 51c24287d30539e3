import ParleySignaling

/// A push token as the core registers it: what `push.register` carries.
struct PushDevice: Sendable, Hashable {
    var pushType: ParleyPushType
    var token: String
    var environment: ParleyPushEnvironment
    var appID: String
}

/// A push request, built into a frame (with a fresh id) when it is sent, so it can wait
/// for a connection or be sent again after a drop.
enum PushRequest: Sendable, Hashable {
    case register(PushDevice)
    case unregister(token: String?)
    /// `push.relay` of the push announcing `callID`.
    case relay(callID: String, payload: String)

    var isUnregister: Bool { if case .unregister = self { true } else { false } }

    var typeName: String {
        switch self {
        case .register: "push.register"
        case .unregister: "push.unregister"
        case .relay: "push.relay"
        }
    }

    func message(id: String) -> SignalingMessage {
        switch self {
        case .register(let device):
            .pushRegister(.init(requestID: id, pushType: device.pushType == .apnsVoip ? .apnsVoip : .fcm, token: device.token,
                                environment: device.environment == .sandbox ? .sandbox : .production, appID: device.appID))
        case .unregister(let token):
            .pushUnregister(.init(requestID: id, token: token))
        case .relay(_, let payload):
            .pushRelay(.init(requestID: id, payload: payload))
        }
    }
}
