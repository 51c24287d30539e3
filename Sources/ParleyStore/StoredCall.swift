public import ParleyCallModel

/// A stored call: who, when, how it ended, and its media legs.
///
/// JSON (`Encodable`, the body of `GET /v1/calls/{id}`): camelCase members; times are
/// integer milliseconds since the Unix epoch, as everywhere in docs/protocol.md, and
/// `details` has exactly the members of `call.ended`'s `details`. Optional members are
/// omitted when absent:
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
    /// The calling user's id.
    public var caller: String
    /// The called user's id.
    public var callee: String
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

    public init(
        callId: String, applicationKey: String, caller: String, callee: String, direction: CallDirection,
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
}
