public import Foundation
import ParleySignaling

/// A call's times and, once it ended, why. Times are the server's clock where the server
/// reported them (event `time` members and `call.ended` details), else this device's.
public struct ParleyCallDetails: Sendable, Hashable {
    /// When the call was placed (outgoing: `callUser`; incoming: the server's start time).
    public var startedTime: Date?
    /// When the server began reaching the callee (`call.progress`).
    public var progressedTime: Date?
    /// When a callee device began ringing (`call.ringing`).
    public var rungTime: Date?
    /// When the call was answered.
    public var answeredTime: Date?
    /// When media began to flow both ways.
    public var establishedTime: Date?
    /// When the call ended.
    public var endedTime: Date?
    /// Why it ended; `.none` until then.
    public var endCause: ParleyCallEndCause
    /// Set when `endCause` is `.error`.
    public var error: ParleyCallError?
    /// Whether the caller offered video (`call.incoming`'s `video`, or the push's claim).
    /// Calls carry audio only for now, so an offered video is never sent or shown; an app
    /// reports it to CallKit (`hasVideo`) as the integration guides do.
    public var isVideoOffered: Bool

    /// Details with the given values (all absent by default).
    public init(startedTime: Date? = nil, progressedTime: Date? = nil, rungTime: Date? = nil, answeredTime: Date? = nil,
                establishedTime: Date? = nil, endedTime: Date? = nil, endCause: ParleyCallEndCause = .none,
                error: ParleyCallError? = nil, isVideoOffered: Bool = false) {
        self.startedTime = startedTime
        self.progressedTime = progressedTime
        self.rungTime = rungTime
        self.answeredTime = answeredTime
        self.establishedTime = establishedTime
        self.endedTime = endedTime
        self.endCause = endCause
        self.error = error
        self.isVideoOffered = isVideoOffered
    }

    /// Seconds from established to ended; 0 if the call never was established or has not ended.
    public var duration: TimeInterval {
        guard let establishedTime, let endedTime else { return 0 }
        return max(0, endedTime.timeIntervalSince(establishedTime))
    }
}

extension ParleyCallDetails {
    /// Takes the times the server reported in `call.ended` (the call model's `CallTimes`)
    /// that this device had not seen yet; a time already set (from an event) stays.
    /// `endedTime` is left to the caller, which also ends calls the server never timed.
    mutating func takeMissingTimes(from times: SignalingMessage.CallDetails) {
        func date(_ milliseconds: Int64?) -> Date? { milliseconds.map(ClientSessionCore.date) }
        startedTime = startedTime ?? date(times.startedTime)
        progressedTime = progressedTime ?? date(times.progressedTime)
        rungTime = rungTime ?? date(times.rungTime)
        answeredTime = answeredTime ?? date(times.answeredTime)
        establishedTime = establishedTime ?? date(times.establishedTime)
    }
}
