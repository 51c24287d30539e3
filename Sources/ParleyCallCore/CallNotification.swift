public import ParleyCallModel
public import ParleySignaling

/// What the call state machine tells a party about a call, independent of how the party
/// is reached: a device adapter renders it as a signaling frame (`DeviceAdapter`); for a
/// SIP callee the SIP user agent sends `offered` as the INVITE and `ended` as CANCEL
/// before the answer or BYE after (nothing when the far side ended the call), and has
/// nothing to send for `answered` and `established`.
///
/// Each party hears these in the order listed, each at most once (the caller: media,
/// progress, early media (a SIP caller), ringing, answered, established, ended; a callee: offered, answered and
/// established if it answered, ended).
public enum CallNotification: Sendable, Hashable {
    /// The anchor answered the caller's offer: its SDP, so that the caller's media can
    /// start (a device's `call.media`).
    case mediaReady(callID: String, sdp: String)
    /// The call was routed and the callee side is being set up (`call.progress`).
    case progress(callID: String, time: Int64)
    /// A callee acknowledged the call: it alerts (`call.ringing`). `headers`: a SIP
    /// callee's `x-` headers of its 18x, for the caller.
    case ringing(callID: String, time: Int64, headers: [String: String] = [:])
    /// The callee's early media (its 18x's SDP) flows to the caller's leg: only for a
    /// caller that came in over SIP, whose user agent sends the anchor's answer in a 183
    /// so the caller hears it before the answer (a device's leg carries it already). At
    /// most once, after `progress` and before `ringing` or `answered`.
    case earlyMedia(callID: String, time: Int64)
    /// A callee is offered the call with the anchor's SDP offer (`call.incoming`).
    case offered(CallOffer)
    /// A callee answered (`call.answered`, to the caller and to the answering party).
    /// `headers`: a SIP callee's `x-` headers of its 2xx, for the caller.
    case answered(callID: String, time: Int64, headers: [String: String] = [:])
    /// Both media legs are connected (`call.established`).
    case established(callID: String, time: Int64)
    /// The call ended for this party: why, the error for cause `error`, and the call's
    /// times as this party saw them (`call.ended`).
    case ended(callID: String, cause: CallEndCause, error: SignalingMessage.CallError?, details: CallTimes)
    /// DTMF digits the far side of a phone or SIP call sent (RFC 4733 or SIP INFO), for
    /// the caller (the server-to-device `call.dtmf`).
    case dtmf(callID: String, digits: String, time: Int64)
    /// Who talks in the conference room the call sits in, loudest first (empty: nobody),
    /// for the participant's caller device (the server-to-device `call.talking`).
    case talking(callID: String, talkers: [SignalingMessage.CallTalking.Talker])
    /// The other party of an established call held it (`held` true) or resumed it; `by`
    /// names that party's role. A device hears `call.held`; a SIP party's user agent sends
    /// a re-INVITE offering `a=sendonly` to hold, `a=sendrecv` to resume (RFC 3264 §8.4).
    case held(callID: String, held: Bool, by: SignalingMessage.CallHeld.Holder, time: Int64)

    /// The call the notification is about.
    public var callID: String {
        switch self {
        case .mediaReady(let callID, _), .progress(let callID, _), .ringing(let callID, _, _), .answered(let callID, _, _),
             .established(let callID, _), .ended(let callID, _, _, _), .dtmf(let callID, _, _), .talking(let callID, _),
             .earlyMedia(let callID, _), .held(let callID, _, _, _):
            callID
        case .offered(let offer): offer.callID
        }
    }
}

/// A call as a callee is offered it: who calls, the caller's custom headers (for a SIP
/// callee, the headers its INVITE carries), the anchor's SDP offer for the callee's leg,
/// and for a phone number the CLI to present.
public struct CallOffer: Sendable, Hashable {
    public var callID: String
    /// Who calls.
    public var from: SignalingMessage.Address
    public var headers: [String: String]
    public var video: Bool
    /// When the call started (wall-clock ms since the epoch).
    public var time: Int64
    /// The anchor's offer for this callee's leg.
    public var sdp: String
    /// The caller's display name, when it set one.
    public var displayName: String?
    /// For a call to a phone number: the calling line identity to present (E.164), which
    /// the SIP user agent sends as From and P-Asserted-Identity. Nil for other callees.
    public var cli: String?

    public init(
        callID: String, from: SignalingMessage.Address, headers: [String: String], video: Bool, time: Int64, sdp: String,
        displayName: String? = nil, cli: String? = nil
    ) {
        self.callID = callID
        self.from = from
        self.headers = headers
        self.video = video
        self.time = time
        self.sdp = sdp
        self.displayName = displayName
        self.cli = cli
    }
}
