public import ParleySignaling

/// The device party's adapter: renders call notifications as the signaling frames of
/// docs/protocol.md, a pure function (parleyd encodes the frame and sends it to the
/// device's session).
public enum DeviceAdapter {
    /// The frame that tells a device `notification`; nil for one a device is never told
    /// (`earlyMedia`, a SIP caller's: a device's leg carries early media as it comes).
    public static func frame(for notification: CallNotification) -> SignalingMessage? {
        switch notification {
        case .mediaReady(let callID, let sdp):
            .callMedia(.init(callID: callID, sdp: sdp))
        case .progress(let callID, let time):
            .callProgress(.init(callID: callID, time: time))
        case .ringing(let callID, let time, let headers):
            .callRinging(.init(callID: callID, time: time, headers: headers))
        case .offered(let offer):
            .callIncoming(.init(callID: offer.callID, from: offer.from, headers: offer.headers, video: offer.video,
                                time: offer.time, sdp: offer.sdp, displayName: offer.displayName))
        case .answered(let callID, let time, let headers):
            .callAnswered(.init(callID: callID, time: time, headers: headers))
        case .established(let callID, let time):
            .callEstablished(.init(callID: callID, time: time))
        case .ended(let callID, let cause, let error, let details):
            .callEnded(.init(callID: callID, cause: cause, error: error, details: details))
        case .dtmf(let callID, let digits, let time):
            .callDTMFReceived(.init(callID: callID, digits: digits, time: time))
        case .talking(let callID, let talkers):
            .callTalking(.init(callID: callID, talking: talkers))
        case .held(let callID, let held, let by, let time):
            .callHeld(.init(callID: callID, held: held, by: by, time: time))
        case .earlyMedia:
            nil
        }
    }
}
