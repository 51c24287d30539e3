public import ParleyCallModel

/// Every application's dialling settings and what its calls to phone numbers use of them,
/// sans-I/O: the calls in progress and the instants calls were placed in the last 60
/// seconds. `CallRegistry` asks it about every routing decision that dials (`admit`) and
/// tells it when such a call ends (`callEnded`); time comes in with each question.
///
/// Off until `enforce(_:)`: a registry that was never given settings places phone and SIP
/// decisions as its router and `CallConfiguration.sipDialling` say, as before settings
/// existed. Once on, an application without settings gets `DiallingSettings()`, which
/// dials nothing.
public struct DiallingLimiter: Sendable {
    /// What `admit` lets through: the decision to place, and when the call must end at the
    /// latest.
    public struct Admission: Sendable, Hashable {
        public var decision: RoutingDecision
        /// The application's maximum call duration, for a decision that dials; nil otherwise.
        public var maximumLength: Duration?
    }

    /// How far back `maxPhoneCallsPerMinute` looks.
    public static let window: Duration = .seconds(60)
    /// Refusals kept for `takeRefusals()` at most; older ones are dropped (parleyd takes
    /// them after every input, so only a shell that never asks reaches it).
    public static let maxPendingRefusals = 1024

    /// Whether decisions that dial are checked at all.
    public private(set) var isEnforced = false
    private var settingsByApplication: [String: DiallingSettings] = [:]
    /// The application of each call to a phone number in progress.
    private var phoneCalls: [String: String] = [:]
    private var phoneCallCounts: [String: Int] = [:]
    private var recentPhoneCalls: [String: RecentInstants] = [:]
    private var pendingRefusals: [DiallingRefusal] = []

    public init() {}

    /// Turns checking on, with these settings by application key (those of applications
    /// not in it are the defaults).
    public mutating func enforce(_ settings: [String: DiallingSettings]) {
        isEnforced = true
        settingsByApplication = settings
    }

    /// Replaces every application's settings (a refresh from the store). Calls in
    /// progress keep counting; the new limits apply to the next decisions.
    public mutating func replaceSettings(_ settings: [String: DiallingSettings]) {
        settingsByApplication = settings
    }

    /// Sets one application's settings; nil forgets them (the defaults apply).
    public mutating func setSettings(_ settings: DiallingSettings?, forApplication applicationKey: String) {
        settingsByApplication[applicationKey] = settings
    }

    /// The settings in force for an application.
    public func settings(of applicationKey: String) -> DiallingSettings {
        settingsByApplication[applicationKey] ?? DiallingSettings()
    }

    /// Calls to phone numbers in progress in an application.
    public func phoneCallsInProgress(of applicationKey: String) -> Int {
        phoneCallCounts[applicationKey] ?? 0
    }

    /// Calls to phone numbers an application placed within `window` up to `now`.
    public func phoneCallsInLastMinute(of applicationKey: String, at now: ContinuousClock.Instant) -> Int {
        recentPhoneCalls[applicationKey]?.count(after: now.advanced(by: .zero - Self.window)) ?? 0
    }

    /// Whether call `callID` of `applicationKey` may be placed as `decision` says at `now`.
    /// A decision that does not dial passes unchanged; one that dials passes the
    /// application's `DiallingPolicy` and, for a phone number, its two limits, and is then
    /// counted (the call is in progress until `callEnded`, and placed at `now`). A refusal
    /// is kept for `takeRefusals()` and nothing is counted.
    public mutating func admit(
        _ decision: RoutingDecision, applicationKey: String, callID: String, now: ContinuousClock.Instant
    ) -> Result<Admission, DiallingRefusal> {
        let destination: String
        switch decision {
        case .dialNumber(let route): destination = route.number
        case .dialSIP(let uri, _): destination = uri
        case .ringDevices, .pushDevices, .joinRoom, .reject: return .success(Admission(decision: decision, maximumLength: nil))
        }
        guard isEnforced else { return .success(Admission(decision: decision, maximumLength: nil)) }
        let settings = settings(of: applicationKey)
        func refuse(_ reason: DiallingRefusal.Reason, _ message: String) -> Result<Admission, DiallingRefusal> {
            let refusal = DiallingRefusal(reason: reason, applicationKey: applicationKey, callID: callID,
                                          destination: destination, message: message)
            if pendingRefusals.count >= Self.maxPendingRefusals { pendingRefusals.removeFirst() }
            pendingRefusals.append(refusal)
            return .failure(refusal)
        }
        let placed: RoutingDecision
        switch DiallingPolicy.check(decision, under: settings) {
        case .refuse(let reason, let message): return refuse(reason, message)
        case .place(let checked): placed = checked
        }
        if case .dialNumber = placed {
            let inProgress = phoneCallsInProgress(of: applicationKey)
            guard inProgress < settings.maxConcurrentPhoneCalls else {
                return refuse(.concurrentLimit, """
                    the application has \(inProgress) calls to phone numbers in progress, the most its dialling settings \
                    allow (maxConcurrentPhoneCalls)
                    """)
            }
            var recent = recentPhoneCalls[applicationKey] ?? RecentInstants()
            recent.forget(before: now.advanced(by: .zero - Self.window))
            guard recent.count < settings.maxPhoneCallsPerMinute else {
                recentPhoneCalls[applicationKey] = recent.isEmpty ? nil : recent
                return refuse(.perMinuteLimit, """
                    the application placed \(recent.count) calls to phone numbers in the last minute, the most its \
                    dialling settings allow (maxPhoneCallsPerMinute)
                    """)
            }
            recent.append(now)
            recentPhoneCalls[applicationKey] = recent
            phoneCalls[callID] = applicationKey
            phoneCallCounts[applicationKey] = inProgress + 1
        }
        return .success(Admission(decision: placed, maximumLength: settings.maxCallDuration))
    }

    /// Call `callID` ended (in any way): a call to a phone number frees its place. Any
    /// other call is ignored.
    public mutating func callEnded(_ callID: String) {
        guard let applicationKey = phoneCalls.removeValue(forKey: callID) else { return }
        let remaining = (phoneCallCounts[applicationKey] ?? 1) - 1
        phoneCallCounts[applicationKey] = remaining > 0 ? remaining : nil
    }

    /// The refusals since the last call, oldest first (for metrics and logs).
    public mutating func takeRefusals() -> [DiallingRefusal] {
        guard !pendingRefusals.isEmpty else { return [] }
        defer { pendingRefusals = [] }
        return pendingRefusals
    }
}

/// Instants in ascending order, oldest dropped from the front in O(1) amortized.
private struct RecentInstants: Sendable {
    private var instants: [ContinuousClock.Instant] = []
    private var start = 0

    var count: Int { instants.count - start }
    var isEmpty: Bool { count == 0 }

    mutating func append(_ instant: ContinuousClock.Instant) {
        instants.append(instant)
    }

    /// Drops the instants at or before `cutoff`: a call placed exactly `window` ago no
    /// longer counts.
    mutating func forget(before cutoff: ContinuousClock.Instant) {
        while start < instants.count, instants[start] <= cutoff { start += 1 }
        if start > 32, start * 2 > instants.count {
            instants.removeFirst(start)
            start = 0
        }
    }

    func count(after cutoff: ContinuousClock.Instant) -> Int {
        instants[start...].reduce(0) { $0 + ($1 > cutoff ? 1 : 0) }
    }
}
