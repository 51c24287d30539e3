public import ParleyCallModel

/// A stored call: who, when, how it ended, and its media legs.
///
/// Both ends are addresses and `direction` names their kinds (`direction.fits(caller:callee:)`
/// holds for every stored call): an app-to-app call joins two users.
///
/// JSON (`Codable`, the body of `GET /v1/calls/{id}`): camelCase members; `caller` and
/// `callee` are the addresses' text (user ids for app-to-app calls), their kinds following
/// from `direction`; times are integer milliseconds since the Unix epoch, as everywhere in
/// docs/protocol.md, and `details` has exactly the members of `call.ended`'s `details`.
/// Optional members are omitted when absent:
///
/// ```json
/// {"callId":"6f1c...","applicationKey":"3f6c...","caller":"alice","callee":"bob",
///  "direction":"appToApp","state":"ended",
///  "details":{"startedTime":1764421201200,"answeredTime":1764421205980,"endedTime":1764421318400},
///  "endCause":"hungUp","durationMs":112420,
///  "legs":[{"role":"caller","userId":"alice","updatedTime":1764421318400,"statistics":{"packetsSent":5600,...}}]}
/// ```
public struct StoredCall: Sendable, Hashable, Codable {
    /// The call id (a lower-case UUID).
    public var callId: String
    public var applicationKey: String
    /// Who called.
    public var caller: PartyAddress
    /// Who was called.
    public var callee: PartyAddress
    public var direction: CallDirection
    public var state: CallState
    public var details: CallTimes
    /// Set once the call ended.
    public var endCause: CallEndCause?
    /// Set when `endCause` is `error`.
    public var error: CallError?
    /// Once ended: milliseconds from the answer to the end, 0 when never answered.
    public var durationMs: Int64?
    /// The legs whose statistics were recorded, caller first.
    public var legs: [CallLeg]
    /// For a call to a phone number or SIP address: the Call-ID of the gateway's INVITE.
    public var sipCallId: String?
    /// For a call to a phone number or SIP address: the status of the INVITE's final
    /// response (200 when answered, 486 when busy...); nil when none came (cancelled,
    /// no route, timed out before any).
    public var sipStatus: Int?

    public init(
        callId: String, applicationKey: String, caller: PartyAddress, callee: PartyAddress, direction: CallDirection,
        state: CallState, details: CallTimes, endCause: CallEndCause? = nil, error: CallError? = nil,
        durationMs: Int64? = nil, legs: [CallLeg] = []
    ) {
        self.callId = callId
        self.applicationKey = applicationKey
        self.caller = caller
        self.callee = callee
        self.direction = direction
        self.state = state
        self.details = details
        self.endCause = endCause
        self.error = error
        self.durationMs = durationMs
        self.legs = legs
    }

    /// A call between `caller` and `callee`, given by their text: the addresses of the
    /// kinds `direction` joins (users, for an app-to-app call).
    public init(
        callId: String, applicationKey: String, caller: String, callee: String, direction: CallDirection,
        state: CallState, details: CallTimes, endCause: CallEndCause? = nil, error: CallError? = nil,
        durationMs: Int64? = nil, legs: [CallLeg] = []
    ) {
        self.init(
            callId: callId, applicationKey: applicationKey, caller: PartyAddress(kind: direction.callerKind, address: caller),
            callee: PartyAddress(kind: direction.calleeKind, address: callee), direction: direction, state: state,
            details: details, endCause: endCause, error: error, durationMs: durationMs, legs: legs)
    }

    private enum CodingKeys: String, CodingKey {
        case callId, applicationKey, caller, callee, direction, state, details, endCause, error, durationMs, legs, sipCallId, sipStatus
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            callId: try container.decode(String.self, forKey: .callId),
            applicationKey: try container.decode(String.self, forKey: .applicationKey),
            caller: try container.decode(String.self, forKey: .caller),
            callee: try container.decode(String.self, forKey: .callee),
            direction: try container.decode(CallDirection.self, forKey: .direction),
            state: try container.decode(CallState.self, forKey: .state),
            details: try container.decode(CallTimes.self, forKey: .details),
            endCause: try container.decodeIfPresent(CallEndCause.self, forKey: .endCause),
            error: try container.decodeIfPresent(CallError.self, forKey: .error),
            durationMs: try container.decodeIfPresent(Int64.self, forKey: .durationMs),
            legs: try container.decode([CallLeg].self, forKey: .legs))
        sipCallId = try container.decodeIfPresent(String.self, forKey: .sipCallId)
        sipStatus = try container.decodeIfPresent(Int.self, forKey: .sipStatus)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(callId, forKey: .callId)
        try container.encode(applicationKey, forKey: .applicationKey)
        try container.encode(caller.address, forKey: .caller)
        try container.encode(callee.address, forKey: .callee)
        try container.encode(direction, forKey: .direction)
        try container.encode(state, forKey: .state)
        try container.encode(details, forKey: .details)
        try container.encodeIfPresent(endCause, forKey: .endCause)
        try container.encodeIfPresent(error, forKey: .error)
        try container.encodeIfPresent(durationMs, forKey: .durationMs)
        try container.encode(legs, forKey: .legs)
        try container.encodeIfPresent(sipCallId, forKey: .sipCallId)
        try container.encodeIfPresent(sipStatus, forKey: .sipStatus)
    }
}
