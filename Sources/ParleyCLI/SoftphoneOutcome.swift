import ParleySDK
/// Turns how calls ended into exit statuses.
enum SoftphoneOutcome {
    /// The status for one call that ended with `cause`.
    ///
    /// For `call`, only an established call that ended `hungUp` is a success. For
    /// `listen`, a call that never reached this device's hands is normal too: declined
    /// (`denied`), given up by the caller (`canceled`), or taken by another device of the
    /// same user (`otherDeviceAnswered`).
    static func exitCode(cause: ParleyCallEndCause, wasEstablished: Bool, outgoing: Bool) -> SoftphoneExitCode {
        switch cause {
        case .hungUp: return wasEstablished ? .success : .notEstablished
        case .denied: return outgoing ? .denied : .success
        case .canceled: return outgoing ? .canceled : .success
        case .otherDeviceAnswered: return outgoing ? .otherDeviceAnswered : .success
        case .noAnswer: return .noAnswer
        case .timeout: return .timeout
        case .inactive: return .inactive
        case .error, .none: return .callError
        }
    }

    /// `listen`'s status after several calls: the first that was not a success, else success.
    static func combined(_ codes: [SoftphoneExitCode]) -> SoftphoneExitCode {
        codes.first { $0 != .success } ?? .success
    }
}
