public import ParleySignaling

/// A call to a phone number or SIP address that an application's dialling settings
/// refused (`DiallingLimiter`): nothing was dialled. The caller heard the `error` (or
/// `call.ended` `error`) of `code`; parleyd counts it by `reason` and logs it.
public struct DiallingRefusal: Error, Sendable, Hashable, CustomStringConvertible {
    /// Why, as the `reason` label of parleyd's `parley_dialling_refusals_total`.
    public enum Reason: String, Sendable, Hashable, CaseIterable {
        /// The number matches none of the application's allowed prefixes.
        case numberNotAllowed = "number_not_allowed"
        /// The application may not call SIP addresses.
        case sipNotAllowed = "sip_not_allowed"
        /// A phone call with no CLI: none in `call.start`, no default for the application.
        case noCLI = "no_cli"
        /// The application has `maxConcurrentPhoneCalls` calls to phone numbers in progress.
        case concurrentLimit = "concurrent_limit"
        /// The application placed `maxPhoneCallsPerMinute` calls to phone numbers in the
        /// last 60 seconds.
        case perMinuteLimit = "per_minute_limit"

        /// The protocol's error code for it: `destination_not_allowed` for what may never
        /// be called, `too_many_calls` for the limits, `bad_request` (field `cli`) without a CLI.
        public var code: SignalingErrorCode {
            switch self {
            case .numberNotAllowed, .sipNotAllowed: .destinationNotAllowed
            case .noCLI: .badRequest
            case .concurrentLimit, .perMinuteLimit: .tooManyCalls
            }
        }

        /// The request member at fault, for the `error` reply.
        public var field: String? {
            switch self {
            case .numberNotAllowed, .sipNotAllowed: "to.address"
            case .noCLI: "cli"
            case .concurrentLimit, .perMinuteLimit: nil
            }
        }
    }

    public var reason: Reason
    public var applicationKey: String
    public var callID: String
    /// The number or SIP address that was not dialled.
    public var destination: String
    /// What the caller is told, e.g. "the application has 10 calls to phone numbers in
    /// progress, the most its dialling settings allow (maxConcurrentPhoneCalls)".
    public var message: String

    public init(reason: Reason, applicationKey: String, callID: String, destination: String, message: String) {
        self.reason = reason
        self.applicationKey = applicationKey
        self.callID = callID
        self.destination = destination
        self.message = message
    }

    public var description: String { "call \(callID): \(reason.rawValue): \(message)" }

    /// The error a call refused after it was accepted ends with (`call.ended` `error`).
    public var callError: SignalingMessage.CallError {
        .init(code: reason.code, message: message.prefixUTF8(1024))
    }

    /// The `error` reply refusing `call.start`.
    var callingError: CallingError {
        let code: CallingError.Code =
            switch reason {
            case .numberNotAllowed, .sipNotAllowed: .destinationNotAllowed
            case .noCLI: .badRequest
            case .concurrentLimit, .perMinuteLimit: .tooManyCalls
            }
        return CallingError(code, callID: callID, field: reason.field, message)
    }
}
