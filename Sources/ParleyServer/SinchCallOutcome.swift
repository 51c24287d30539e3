import ParleyCallCore
import ParleyCallModel
import ParleySignaling
import ParleyVoiceAPI

/// How a call ended, in the Sinch Voice API's words: the `result` and `reason` of a DiCE
/// callback and of `GET /calling/v1/calls/id/{callId}`. One mapping for both, so a backend
/// reads the same words in the callback and in the REST answer.
struct SinchCallOutcome: Sendable, Hashable {
    var result: DisconnectResult
    var reason: DisconnectReason

    /// Who ended an answered call by hanging up, as the engine saw it (the `by` of the
    /// timeline's `call.hangup` event).
    enum HangUpSide: String, Sendable, Hashable {
        /// The caller's device sent `call.hangup`, or a SIP caller sent BYE or CANCEL.
        case caller
        /// The callee's device, or the SIP far end of a call out.
        case callee
        /// The REST API (`DELETE /v1/calls/{id}`, a PATCH with `hangup`, a conference kick).
        case api
    }

    init(result: DisconnectResult, reason: DisconnectReason) {
        self.result = result
        self.reason = reason
    }

    /// The outcome a call's DiCE gave, as its timeline keeps it (`CallRecorder.recordOutcome`);
    /// nil when `detail` is not one.
    init?(recorded detail: [String: String]) {
        guard let result = detail["result"].flatMap(DisconnectResult.init(rawValue:)),
              let reason = detail["reason"].flatMap(DisconnectReason.init(rawValue:)) else { return nil }
        self.init(result: result, reason: reason)
    }

    /// The outcome of the ended `record` (the engine's DiCE).
    init(ended record: CallRecord, hungUpBy: HangUpSide?, refusal: DisconnectReason? = nil) {
        self.init(endCause: record.endCause, answered: record.times.answeredTime != nil, errorCode: record.error?.code,
                  hungUpBy: hungUpBy, refusal: refusal)
    }

    /// The outcome of a call that ended `endCause`.
    /// - Parameters:
    ///   - answered: whether it was answered.
    ///   - errorCode: the signaling error code of an `error` end.
    ///   - hungUpBy: who hung up, when known; a hang-up whose side is unknown counts as the callee's.
    ///   - refusal: the reason the backend's answer gave the call's end (a `hangup` action,
    ///     a callback that failed), which wins over the record's error.
    init(endCause: CallEndCause?, answered: Bool, errorCode: String?, hungUpBy: HangUpSide?, refusal: DisconnectReason? = nil) {
        switch endCause {
        case .hungUp?:
            result = .answered
            switch hungUpBy {
            case .caller?: reason = .callerHangup
            case .api?: reason = .managerHangup
            case .callee?, nil: reason = .calleeHangup
            }
        case .denied?: (result, reason) = (.busy, .calleeHangup)
        case .noAnswer?, .timeout?: (result, reason) = (answered ? .answered : .noAnswer, .timeout)
        case .canceled?: (result, reason) = (.noAnswer, .cancel)
        case .error? where refusal != nil: (result, reason) = (.failed, refusal ?? .generalError)
        case .error? where errorCode == SignalingErrorCode.destinationNotFound.rawValue: (result, reason) = (.failed, .userNotFound)
        default: (result, reason) = (answered ? .answered : .failed, .generalError)
        }
    }
}
