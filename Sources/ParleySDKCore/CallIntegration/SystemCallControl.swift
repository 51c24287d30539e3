import Foundation

/// What the system-call service needs from the client: a seam so the service's logic
/// can be driven in tests with recorded calls. `ParleyClient` is the real one.
protocol SystemCallControl: AnyObject, Sendable {
    func answerCall(_ callID: String)
    func hangupCall(_ callID: String)
    /// Places a call to `address`, a user id, phone number or SIP address as `kind` says.
    func placeCall(to address: String, kind: ParleyCallRemoteKind, headers: [String: String]) -> Result<ParleyCall, any Error>
    func queryPush(_ payload: [AnyHashable: Any]) -> ParleyNotificationResult
    func relayPush(_ payload: [AnyHashable: Any]) -> Result<ParleyNotificationResult, any Error>
    /// Relays the push and declines its call on arrival (the system refused to show it).
    func declinePush(_ payload: [AnyHashable: Any]) -> Result<ParleyNotificationResult, any Error>
    func setAudioSessionActive(_ active: Bool)
    /// Holds or resumes the call; `completion` hears nil once the server accepted it.
    func setHeld(_ call: ParleyCall, held: Bool, completion: @escaping @Sendable ((any Error)?) -> Void)
    /// Mutes or unmutes the microphone (the client's audio controller).
    func setMuted(_ muted: Bool)
}

/// `ParleyClient` as the service's control; outgoing calls go through the mediator so
/// every observer follows them.
final class ClientCallControl: SystemCallControl, @unchecked Sendable {
    // @unchecked: both references are only read; the client and mediator are thread-safe.
    private weak var client: ParleyClient?
    private let mediator: ParleyCallMediator

    init(client: ParleyClient, mediator: ParleyCallMediator) {
        self.client = client
        self.mediator = mediator
    }

    func answerCall(_ callID: String) { client?.answer(callID) }
    func hangupCall(_ callID: String) { client?.hangup(callID) }
    func placeCall(to address: String, kind: ParleyCallRemoteKind, headers: [String: String]) -> Result<ParleyCall, any Error> {
        switch kind {
        case .user: mediator.callUser(withId: address, headers: headers)
        case .phone: mediator.callPhoneNumber(address, headers: headers)
        case .sip: mediator.callSIP(address, headers: headers)
        case .conference: mediator.callConference(withId: address, headers: headers)
        }
    }
    func queryPush(_ payload: [AnyHashable: Any]) -> ParleyNotificationResult {
        client?.queryPushNotificationPayload(payload) ?? ParleyNotificationResult(isCall: false, isValid: false, callResult: nil)
    }
    func relayPush(_ payload: [AnyHashable: Any]) -> Result<ParleyNotificationResult, any Error> {
        client?.relayPushNotification(withUserInfo: payload) ?? .failure(ParleyClientError(code: "not_started", message: "the client is gone"))
    }
    func declinePush(_ payload: [AnyHashable: Any]) -> Result<ParleyNotificationResult, any Error> {
        client?.declinePushNotification(withUserInfo: payload) ?? .failure(ParleyClientError(code: "not_started", message: "the client is gone"))
    }
    func setAudioSessionActive(_ active: Bool) { client?.audioController.setSystemAudioSessionActive(active) }
    func setHeld(_ call: ParleyCall, held: Bool, completion: @escaping @Sendable ((any Error)?) -> Void) {
        call.setHeld(held, completion: completion)
    }
    func setMuted(_ muted: Bool) {
        guard let audio = client?.audioController else { return }
        if muted { audio.mute() } else { audio.unmute() }
    }
}
