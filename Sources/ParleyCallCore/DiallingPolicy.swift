public import ParleyCallModel

/// The rules of an application's `DiallingSettings` that do not count anything: where it
/// may call, and with which calling line identity. How many calls it may place is
/// `DiallingLimiter`'s; both run on every routing decision that dials.
public enum DiallingPolicy {
    /// What a dialling decision becomes under `settings`.
    public enum Verdict: Sendable, Hashable {
        /// Place this: the decision, with a phone route's missing CLI filled in from the
        /// application's default.
        case place(RoutingDecision)
        /// Do not dial; the caller is told `message`.
        case refuse(DiallingRefusal.Reason, message: String)
    }

    /// Checks a `dialNumber` or `dialSIP` decision: a number must start with an allowed
    /// prefix and have a CLI (the router's, which `PresenceRouter` takes from
    /// `call.start`, else `defaultCLI`); a SIP address needs `allowsSIPAddresses`. Any
    /// other decision is returned as it is.
    public static func check(_ decision: RoutingDecision, under settings: DiallingSettings) -> Verdict {
        switch decision {
        case .dialNumber(var route):
            guard settings.allowsNumber(route.number) else {
                let message = settings.allowedNumberPrefixes.isEmpty
                    ? "the application may not call phone numbers (its dialling settings allow no prefix)"
                    : "the application may not call \(route.number.prefix(16)): no allowed prefix of its dialling settings matches it"
                return .refuse(.numberNotAllowed, message: message)
            }
            if route.callerID == nil { route.callerID = settings.defaultCLI }
            guard route.callerID != nil else { return .refuse(.noCLI, message: CallStateMachine.missingCLI) }
            return .place(.dialNumber(route))
        case .dialSIP:
            guard settings.allowsSIPAddresses else {
                return .refuse(.sipNotAllowed, message: "the application may not call SIP addresses (its dialling settings do not allow them)")
            }
            return .place(decision)
        case .ringDevices, .pushDevices, .joinRoom, .reject:
            return .place(decision)
        }
    }
}
