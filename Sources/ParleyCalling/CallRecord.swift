public import ParleyCallModel
public import ParleySignaling

/// What the store keeps about a call: its parties, its times and how it ended.
///
/// Times are wall-clock milliseconds since the Unix epoch. The engine emits a new version
/// (`CallAction.record`) whenever one of these fields changes; the last one has
/// `state == .ended`, an `endCause` and an `endedTime`. The JSON form (`Codable`) spells
/// ids as the protocol does (`callId`, `callerDeviceId`, `answeredDeviceId`; users as
/// `{"applicationKey": ..., "userId": ...}`), other members by their names, the state and
/// end cause as their strings, absent values omitted.
public struct CallRecord: Sendable, Hashable, Codable {
    /// The call's id (a lower-case UUID).
    public var callID: String
    /// The caller's user and application.
    public var caller: AppUser
    /// The caller's device.
    public var callerDeviceID: String
    /// The callee (same application as the caller).
    public var callee: AppUser
    /// The callee device that answered, once one did.
    public var answeredDeviceID: String?
    /// Custom headers of `call.start`.
    public var headers: [String: String]
    /// Whether the caller offered video.
    public var video: Bool
    /// Where the call is; `.ended` in the last version.
    public var state: CallState
    /// When the server accepted `call.start`.
    public var startedTime: Int64
    /// When the caller got `call.progress`.
    public var progressedTime: Int64?
    /// When the caller got `call.ringing` (the first `call.ack`).
    public var rungTime: Int64?
    /// When a callee device answered.
    public var answeredTime: Int64?
    /// When both media legs were connected.
    public var establishedTime: Int64?
    /// When the call ended.
    public var endedTime: Int64?
    /// Why it ended; nil while in progress.
    public var endCause: SignalingMessage.EndCause?
    /// For `endCause == .error`: the error code, e.g. `destination_not_found`.
    public var errorCode: String?
    /// For `endCause == .error`: the error text, e.g. `destination user not found`.
    public var errorMessage: String?

    enum CodingKeys: String, CodingKey {
        case callID = "callId", caller, callerDeviceID = "callerDeviceId", callee
        case answeredDeviceID = "answeredDeviceId", headers, video, state
        case startedTime, progressedTime, rungTime, answeredTime, establishedTime, endedTime
        case endCause, errorCode, errorMessage
    }

    /// A record of a call just started (state `initiating`).
    public init(
        callID: String, caller: AppUser, callerDeviceID: String, callee: AppUser,
        headers: [String: String], video: Bool, startedTime: Int64
    ) {
        self.callID = callID
        self.caller = caller
        self.callerDeviceID = callerDeviceID
        self.callee = callee
        self.headers = headers
        self.video = video
        self.state = .initiating
        self.startedTime = startedTime
    }

    /// Talk time in milliseconds: from establishment to the end (0 if never established).
    public var durationMillis: Int64? {
        guard let endedTime else { return nil }
        guard let establishedTime else { return 0 }
        return max(0, endedTime - establishedTime)
    }
}
