import ParleyCallModel
import ParleyStore
import ParleyVoiceAPI

/// `GET /calling/v1/calls/id/{callId}`'s answer, in the Sinch Voice API's shape (docs/rest.md,
/// "Calls"): `{"from": {"type", "endpoint"}, "to": {...}, "domain", "callId", "duration",
/// "status": "ONGOING" | "FINAL", "result", "reason", "timestamp", "custom"}`.
///
/// `result` and `reason` are those of the call's DiCE (`SinchCallOutcome`), `"N/A"` while
/// the call goes on. `duration` is whole seconds since the answer (to the end, or to now
/// while the call goes on), 0 when it was never answered. `timestamp` is the call's start.
struct SinchCallInformation: Encodable, Sendable, Hashable {
    struct Endpoint: Encodable, Sendable, Hashable {
        var type: String
        var endpoint: String
    }

    var from: Endpoint
    var to: Endpoint
    var domain: String
    var callId: String
    var duration: Int64
    var status: String
    var result: String
    var reason: String
    var timestamp: String
    var custom: String

    /// The information of the stored `record` at `nowMilliseconds` (Unix), the end's side
    /// from the call's timeline (`call.hangup` events). `recorded` is the outcome its DiCE
    /// gave (the timeline's `call.outcome`), which wins once the call ended, so both say the
    /// same (a call the server answered and then connected ends `BUSY` though it was
    /// answered).
    init(record: StoredCall, hungUpBy: SinchCallOutcome.HangUpSide?, recorded: SinchCallOutcome? = nil, nowMilliseconds: Int64) {
        let fromDestination = CallEngine.destination(of: record.caller)
        let toDestination = CallEngine.destination(of: record.callee)
        from = Endpoint(type: fromDestination.kind.rawValue, endpoint: fromDestination.endpoint)
        to = Endpoint(type: toDestination.kind.rawValue, endpoint: toDestination.endpoint)
        domain = Self.domain(of: record)
        callId = record.callId
        let ended = record.state == .ended
        status = ended ? "FINAL" : "ONGOING"
        if ended, let recorded {
            result = recorded.result.rawValue
            reason = recorded.reason.rawValue
        } else if ended {
            let outcome = SinchCallOutcome(endCause: record.endCause, answered: record.details.answeredTime != nil,
                                           errorCode: record.error?.code, hungUpBy: hungUpBy)
            result = outcome.result.rawValue
            reason = outcome.reason.rawValue
        } else {
            result = DisconnectReason.notApplicable.rawValue
            reason = DisconnectReason.notApplicable.rawValue
        }
        if let answered = record.details.answeredTime {
            duration = max(0, ((record.details.endedTime ?? nowMilliseconds) - answered) / 1000)
        } else {
            duration = 0
        }
        timestamp = (try? SinchTimestamp(unixMilliseconds: record.details.startedTime))?.text ?? ""
        custom = ""
    }

    /// `pstn` when a phone number is at either end, `sip` when a SIP address is, `mxp`
    /// (Sinch's in-app calling) otherwise.
    static func domain(of record: StoredCall) -> String {
        let kinds = [record.caller.kind, record.callee.kind]
        if kinds.contains(.phone) { return CallDomain.pstn.rawValue }
        if kinds.contains(.sip) { return CallDomain.sip.rawValue }
        return CallDomain.mxp.rawValue
    }
}
