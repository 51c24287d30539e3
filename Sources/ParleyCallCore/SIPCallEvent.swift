public import ParleyCallModel
public import ParleySignaling

/// What the SIP side reports about a call's SIP party (`SIPParty`): the answers to its
/// INVITE and the far side's BYE, by meaning rather than by status code. The SIP user
/// agent maps 100 and 181/182 to `trying`, 180 and 183 to `ringing` (with the SDP a 18x
/// carried), a 2xx to `answered`, a final 3xx-6xx to `failed`, and a BYE to `hungUp`.
public enum SIPCallEvent: Sendable, Hashable {
    /// The INVITE went out with this Call-ID (kept on the call's record). Reported once,
    /// before any answer.
    case placed(sipCallID: String)
    /// 100 Trying, or a provisional response that does not alert (181, 182): the far side
    /// works on the call. The caller heard `call.progress` when the INVITE was asked for,
    /// so nothing changes.
    case trying
    /// 180 Ringing or 183 Session Progress: the caller hears `call.ringing`. With SDP, that
    /// is early media: the first SDP is the answer to the leg's offer (RFC 3261 §13.2.1),
    /// and the leg is bridged to the caller's at once so the far side's ringback or
    /// announcements reach the caller. A later, different SDP is ignored.
    /// `headers` are the response's `x-` headers, for the caller (`call.ringing`'s `headers`).
    case ringing(earlySDP: String?, headers: [String: String] = [:])
    /// A 2xx: the far side answered, with its SDP (nil, or the same as before, when a 18x
    /// already gave the answer).
    /// `headers` are the 2xx's `x-` headers, for the caller (`call.answered`'s `headers`).
    case answered(sdp: String?, headers: [String: String] = [:])
    /// A final failure status (300-699) with its reason phrase. Before the answer it ends
    /// the call with the cause `ending(status:reason:)` gives; after the answer (a dialog
    /// that failed) with `error` `sip_error`.
    case failed(status: Int, reason: String)
    /// The far side sent BYE: `hungUp` after the answer. (A BYE before the answer is not
    /// SIP, RFC 3261 §15; it is taken as a callee hanging up before answering: `denied`.)
    case hungUp
    /// DTMF the far side sent in a SIP INFO (`application/dtmf-relay`), not as RFC 4733
    /// events in the media (those come from the media layer); for the caller to hear.
    case dtmf(digits: String)
    /// The far side of an established call put it on hold (`held` true: its re-INVITE or
    /// UPDATE offered `sendonly` or `inactive`) or took it off hold (`sendrecv` or
    /// `recvonly` again), RFC 3264 §8.4. Reported on a change only; for the device party
    /// of the call to hear (`call.held`).
    case held(Bool)

    /// How a final failure status ends a call that was not answered: 486 Busy Here, 600
    /// Busy Everywhere and 603 Decline are `denied`; 408 Request Timeout and 480
    /// Temporarily Unavailable `noAnswer`; 487 Request Terminated `canceled`; any other
    /// status `error` with code `sip_error` and the message `SIP <status> <reason>`.
    public static func ending(status: Int, reason: String) -> (cause: CallEndCause, error: SignalingMessage.CallError?) {
        switch status {
        case 486, 600, 603: (.denied, nil)
        case 408, 480: (.noAnswer, nil)
        case 487: (.canceled, nil)
        default: (.error, sipError(status: status, reason: reason))
        }
    }

    /// The `sip_error` of a failure: `SIP 503 Service Unavailable`. The reason phrase comes
    /// from the far side: control characters become spaces and the text is cut to the
    /// protocol's 1024 bytes.
    public static func sipError(status: Int, reason: String) -> SignalingMessage.CallError {
        let text = reason.isEmpty ? "SIP \(status)" : "SIP \(status) \(reason)"
        return .init(code: .sipError, message: text.prefixUTF8(1024))
    }

    /// The SIP status a `sip_error` of `sipError(status:reason:)` names (`SIP 503 ...` is
    /// 503), or nil for any other error: what a bridge passes on to its SIP caller when
    /// its call out failed.
    public static func status(of error: SignalingMessage.CallError) -> Int? {
        guard error.code == .sipError else { return nil }
        let text = error.message.utf8
        guard text.starts(with: "SIP ".utf8) else { return nil }
        let digits = text.dropFirst(4).prefix(3)
        guard digits.count == 3, digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
        let after = text.dropFirst(7).first
        guard after == nil || after == UInt8(ascii: " ") else { return nil }
        let status = digits.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
        return (100...699).contains(status) ? status : nil
    }
}
