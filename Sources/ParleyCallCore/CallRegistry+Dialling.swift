public import ParleyCallModel
import ParleySignaling
public import ParleyWireCore

/// Per-application dialling settings (docs/calls.md, "Dialling policy"): what the shell
/// gives the registry, and how a routing decision that dials is admitted.
extension CallRegistry {
    /// Turns the dialling policy on, with each application's settings by key: from now on
    /// every decision to dial a phone number or SIP address is checked against its
    /// application's settings (the defaults, which dial nothing, for an application not
    /// in `settings`). parleyd turns it on at start with the store's settings.
    public mutating func enforceDiallingSettings(_ settings: [String: DiallingSettings]) {
        dialling.enforce(settings)
    }

    /// Replaces every application's settings (parleyd's periodic reread of the store).
    public mutating func replaceDiallingSettings(_ settings: [String: DiallingSettings]) {
        dialling.replaceSettings(settings)
    }

    /// Sets one application's settings (as a `hello` read them with the application).
    public mutating func setDiallingSettings(_ settings: DiallingSettings, forApplication applicationKey: String) {
        dialling.setSettings(settings, forApplication: applicationKey)
    }

    /// The calls the dialling policy refused since the last call, oldest first: parleyd
    /// counts them by reason and logs them after every input.
    public mutating func takeDiallingRefusals() -> [DiallingRefusal] {
        dialling.takeRefusals()
    }

    /// The decision a new call is placed with, and its length cap, or the `error` reply
    /// refusing `call.start`. A decision of a kind the server does not place is left to the
    /// `not_implemented` refusal.
    mutating func admitDialling(
        _ decision: RoutingDecision?, callID: String, caller: Device, now: ClockReading
    ) throws(CallingError) -> (decision: RoutingDecision?, maximumLength: Duration?) {
        guard let decision else { return (nil, nil) }
        switch admitDialling(decision, callID: callID, caller: caller, now: now) {
        case .success(let admission): return (admission.decision, admission.maximumLength)
        case .failure(let refusal): throw refusal.callingError
        }
    }

    /// The decision a call in routing is placed with, and its length cap, or the refusal
    /// that ends it.
    mutating func admitDialling(
        _ decision: RoutingDecision, callID: String, caller: Device, now: ClockReading
    ) -> Result<DiallingLimiter.Admission, DiallingRefusal> {
        if decision.refusedKind(sipDialling: configuration.sipDialling) != nil {
            return .success(DiallingLimiter.Admission(decision: decision, maximumLength: nil))
        }
        return dialling.admit(decision, applicationKey: caller.user.applicationKey, callID: callID, now: now.instant)
    }

    /// The decision a call in over SIP is bridged to a phone number or SIP address with,
    /// and its length cap, or the refusal (nothing starts; the caller gets a final failure).
    /// A phone number presents `cli`, else the caller's number when it called from one,
    /// else the application's default CLI (filled in by its dialling settings): a bridge
    /// passes the caller's identity on, as a carrier would. Refused `not_implemented` where
    /// SIP dialling is off, `bad_request` for an address of the wrong format, and as the
    /// dialling settings refuse an app call's (`DiallingRefusal`).
    mutating func admitBridge(
        to target: PartyAddress, from caller: SIPParty, applicationKey: String, headers: [String: String], cli: String?,
        callID: String, now: ClockReading
    ) throws(CallingError) -> (decision: RoutingDecision, maximumLength: Duration?) {
        if let problem = target.formatProblem {
            throw CallingError(.badRequest, callID: callID, field: "destination", "\(target.kind.rawValue) address \(problem)")
        }
        if let cli, let problem = PartyAddress.phone(cli).formatProblem {
            throw CallingError(.badRequest, callID: callID, field: "cli", "cli \(problem)")
        }
        let decision: RoutingDecision
        switch target {
        case .phone(let number):
            let callerNumber: String? = if case .phone(let route) = caller.destination { route.number } else { nil }
            decision = .dialNumber(PhoneRoute(number: number, callerID: cli ?? callerNumber))
        case .sip(let uri):
            decision = .dialSIP(uri: uri, headers: headers)
        case .user, .conference:
            throw CallingError(.badRequest, callID: callID, field: "destination", "a bridge goes to a phone number or a SIP address")
        }
        if let kind = decision.refusedKind(sipDialling: configuration.sipDialling) {
            throw CallingError(.notImplemented, callID: callID, field: "destination", RoutingDecision.unplacedMessage(kind))
        }
        switch dialling.admit(decision, applicationKey: applicationKey, callID: callID, now: now.instant) {
        case .success(let admission):
            // Without a CLI the settings refused it (`noCLI`); the machine would too.
            return (admission.decision, admission.maximumLength)
        case .failure(let refusal):
            throw refusal.callingError
        }
    }

    /// Admits a callout the server places itself (REST `ttsCallout`, `customCallout`) to a
    /// phone number or SIP address, as any call out is admitted: refused `not_implemented`
    /// where SIP dialling is off, `bad_request` for an address of the wrong format, and as
    /// the application's dialling settings refuse an app call's (allowed prefixes, SIP
    /// addresses, the CLI, calls in progress and per minute). A phone number presents
    /// `cli`, else the application's default CLI. Once admitted, a call to a phone number
    /// counts against the limits until `calloutEnded(_:)`.
    /// - Returns: the SIP party to call, the CLI it presents (nil for a SIP address without
    ///   one) and the application's maximum call length, if any.
    public mutating func admitCallout(
        to target: PartyAddress, applicationKey: String, cli: String?, callID: String, now: ClockReading
    ) throws(CallingError) -> (party: SIPParty, cli: String?, maximumLength: Duration?) {
        if let problem = target.formatProblem {
            throw CallingError(.badRequest, callID: callID, field: "destination", "\(target.kind.rawValue) address \(problem)")
        }
        if let cli, let problem = PartyAddress.phone(cli).formatProblem {
            throw CallingError(.badRequest, callID: callID, field: "cli", "cli \(problem)")
        }
        let decision: RoutingDecision
        switch target {
        case .phone(let number): decision = .dialNumber(PhoneRoute(number: number, callerID: cli))
        case .sip(let uri): decision = .dialSIP(uri: uri, headers: [:])
        case .user, .conference:
            throw CallingError(.badRequest, callID: callID, field: "destination", "a callout goes to a phone number or a SIP address")
        }
        if let kind = decision.refusedKind(sipDialling: configuration.sipDialling) {
            throw CallingError(.notImplemented, callID: callID, field: "destination", RoutingDecision.unplacedMessage(kind))
        }
        switch dialling.admit(decision, applicationKey: applicationKey, callID: callID, now: now.instant) {
        case .success(let admission):
            switch admission.decision {
            case .dialNumber(let route):
                guard let presented = route.callerID else {
                    dialling.callEnded(callID)
                    throw CallingError(.badRequest, callID: callID, field: "cli", CallStateMachine.missingCLI)
                }
                return (SIPParty(callID: callID, destination: .phone(route)), presented, admission.maximumLength)
            case .dialSIP(let uri, _):
                return (SIPParty(callID: callID, destination: .uri(uri)), cli ?? dialling.settings(of: applicationKey).defaultCLI,
                        admission.maximumLength)
            default:
                throw CallingError(.badRequest, callID: callID, field: "destination", "a callout goes to a phone number or a SIP address")
            }
        case .failure(let refusal):
            throw refusal.callingError
        }
    }

    /// A callout admitted by `admitCallout` ended (in any way): a call to a phone number
    /// frees its place in its application's limits.
    public mutating func calloutEnded(_ callID: String) {
        dialling.callEnded(callID)
    }
}
