import ParleySignaling

/// Why a call ended; `.none` while it has not.
public enum ParleyCallEndCause: String, Sendable, Hashable, CaseIterable {
    /// The call has not ended.
    case none
    /// Nobody answered a ringing device in time, or the call reached its maximum length.
    case timeout
    /// The callee declined.
    case denied
    /// No callee device acknowledged the call in time.
    case noAnswer
    /// The call failed; `ParleyCallDetails.error` says why.
    case error
    /// A party hung up after the answer.
    case hungUp
    /// The caller hung up before the answer.
    case canceled
    /// Another device of the callee answered.
    case otherDeviceAnswered
    /// No media or connection for too long, or the session could not be resumed.
    case inactive
}

extension ParleyCallEndCause {
    /// The SDK's name for the end cause `call.ended` carries (the call model's
    /// `CallEndCause`): the one mapping between them. Every cause but `none` has one.
    init(_ cause: SignalingMessage.EndCause) {
        switch cause {
        case .timeout: self = .timeout
        case .denied: self = .denied
        case .noAnswer: self = .noAnswer
        case .error: self = .error
        case .hungUp: self = .hungUp
        case .canceled: self = .canceled
        case .otherDeviceAnswered: self = .otherDeviceAnswered
        case .inactive: self = .inactive
        }
    }
}
