public import ParleyCalling
public import ParleySignaling

/// Where a call goes. Only app-to-app calls exist so far; phone, SIP and conference
/// calls add cases with their issues.
public enum CallDirection: String, Sendable, Hashable, CaseIterable, Codable {
    /// From one user of an application to another (both on the SDK).
    case appToApp
}

/// Why a call with cause `error` failed: an error code (`a-z 0-9 _`) and a one-line
/// message, as in `call.ended`'s `error` member.
public struct CallError: Sendable, Hashable, Codable {
    /// For example `destination_not_found`.
    public var code: String
    /// For example `destination user not found`.
    public var message: String

    public init(code: String, message: String) {
        self.code = code
        self.message = message
    }

    /// What `closeCallsInProgress` records by default for calls a restart found open.
    public static let serverRestarted = CallError(code: "server_restarted", message: "server restarted")
}

/// The times of a call, in milliseconds since the Unix epoch, named as in `call.ended`'s
/// `details`. Each is the first time the call reached that point; nil if it never did.
public struct CallTimes: Sendable, Hashable, Codable {
    public var startedTime: Int64
    public var progressedTime: Int64?
    public var rungTime: Int64?
    public var answeredTime: Int64?
    public var establishedTime: Int64?
    public var endedTime: Int64?

    public init(
        startedTime: Int64, progressedTime: Int64? = nil, rungTime: Int64? = nil, answeredTime: Int64? = nil,
        establishedTime: Int64? = nil, endedTime: Int64? = nil
    ) {
        self.startedTime = startedTime
        self.progressedTime = progressedTime
        self.rungTime = rungTime
        self.answeredTime = answeredTime
        self.establishedTime = establishedTime
        self.endedTime = endedTime
    }
}

/// Which side of the call a media leg serves.
public enum CallLegRole: String, Sendable, Hashable, CaseIterable, Codable {
    /// The caller's device.
    case caller
    /// The callee's device that answered.
    case callee
}

/// Media statistics of one leg (server to one device), as the media engine counts them.
/// The names follow ParleyMedia's `LegStatistics`: "inbound" is what the server received
/// from the device, "outbound" what the device reported about the server's stream.
public struct CallLegStatistics: Sendable, Hashable, Codable {
    public var packetsSent: Int64
    public var octetsSent: Int64
    public var packetsReceived: Int64
    public var octetsReceived: Int64
    /// Loss fraction of the device's stream over the last report interval (0...1).
    public var inboundFractionLost: Double
    /// Packets of the device's stream lost in all (negative when duplicates outnumber losses).
    public var inboundCumulativeLost: Int64
    /// Interarrival jitter of the device's stream, milliseconds (RFC 3550 section 6.4.1).
    public var inboundJitterMilliseconds: Double
    /// Loss fraction of the server's stream the device reported last; nil before its first report.
    public var outboundFractionLost: Double?
    /// Cumulative loss of the server's stream the device reported last.
    public var outboundCumulativeLost: Int64?
    /// Jitter of the server's stream the device reported last, milliseconds.
    public var outboundJitterMilliseconds: Double?
    /// Round-trip time from the last RTCP report that allowed measuring it, milliseconds.
    public var roundTripTimeMilliseconds: Double?

    public init(
        packetsSent: Int64 = 0, octetsSent: Int64 = 0, packetsReceived: Int64 = 0, octetsReceived: Int64 = 0,
        inboundFractionLost: Double = 0, inboundCumulativeLost: Int64 = 0, inboundJitterMilliseconds: Double = 0,
        outboundFractionLost: Double? = nil, outboundCumulativeLost: Int64? = nil,
        outboundJitterMilliseconds: Double? = nil, roundTripTimeMilliseconds: Double? = nil
    ) {
        self.packetsSent = packetsSent
        self.octetsSent = octetsSent
        self.packetsReceived = packetsReceived
        self.octetsReceived = octetsReceived
        self.inboundFractionLost = inboundFractionLost
        self.inboundCumulativeLost = inboundCumulativeLost
        self.inboundJitterMilliseconds = inboundJitterMilliseconds
        self.outboundFractionLost = outboundFractionLost
        self.outboundCumulativeLost = outboundCumulativeLost
        self.outboundJitterMilliseconds = outboundJitterMilliseconds
        self.roundTripTimeMilliseconds = roundTripTimeMilliseconds
    }

    /// Share of the device's packets that never arrived, over the whole call (0...1):
    /// cumulative lost over expected (received + lost); 0 before any packet.
    public var inboundLossRatio: Double {
        let lost = max(inboundCumulativeLost, 0)
        let expected = packetsReceived + lost
        return expected > 0 ? Double(lost) / Double(expected) : 0
    }
}

/// The media record of one leg of a call.
public struct CallLeg: Sendable, Hashable, Codable {
    public var role: CallLegRole
    /// The user on this leg (the caller, or the callee).
    public var userId: String
    /// The device, when known.
    public var deviceId: String?
    /// When these statistics were taken (Unix ms).
    public var updatedTime: Int64
    public var statistics: CallLegStatistics

    public init(role: CallLegRole, userId: String, deviceId: String? = nil, updatedTime: Int64, statistics: CallLegStatistics) {
        self.role = role
        self.userId = userId
        self.deviceId = deviceId
        self.updatedTime = updatedTime
        self.statistics = statistics
    }
}

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
    public var endCause: SignalingMessage.EndCause?
    /// Set when `endCause` is `error`.
    public var error: CallError?
    /// Once ended: milliseconds from the answer to the end, 0 when never answered.
    public var durationMs: Int64?
    /// The legs whose statistics were recorded, caller first.
    public var legs: [CallLeg]

    public init(
        callId: String, applicationKey: String, caller: String, callee: String, direction: CallDirection,
        state: CallState, details: CallTimes, endCause: SignalingMessage.EndCause? = nil, error: CallError? = nil,
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
