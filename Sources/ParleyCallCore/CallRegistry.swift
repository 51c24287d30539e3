public import ParleyCallModel
public import ParleySignaling
public import ParleyWireCore

/// Every call on the server and the presence they need, sans-I/O: parleyd feeds it
/// connections, call requests, routing decisions, media reports and timeouts, and
/// performs the actions it returns in order (send replies, notify parties, drive media
/// legs, store records).
///
/// ```swift
/// var registry = CallRegistry()
/// registry.deviceConnected(alice, resumed: false, now: t)       // after hello.ok
/// let actions = registry.handleRequest(message, from: alice, now: t)  // call.* requests
/// registry.handleMedia(.callerLegReady(sdp: answer), callID: id, now: t)
/// if let deadline = registry.nextDeadline { ... registry.handleTimeout(now: t) }
/// ```
public struct CallRegistry: Sendable {
    public let configuration: CallConfiguration
    /// Where calls go (`PresenceRouter` unless parleyd gives another).
    public let router: any CallRouter
    /// Users and their connected devices.
    public private(set) var presence = Presence()

    private var calls: [String: CallStateMachine] = [:]
    /// Which calls each device takes part in, to route disconnections.
    private var callsByDevice: [Device: Set<String>] = [:]
    private var devicesByCall: [String: [Device]] = [:]
    private var recentlyEnded: Set<String> = []
    /// How recently ended calls ended, for a device that relays their push late.
    private var endedRecords: [String: CallRecord] = [:]
    private var recentlyEndedOrder: [String] = []
    private var deadlines = DeadlineQueue<String>()
    /// The application and calling user (nil for a call the server placed) of each call in
    /// progress, and how many calls in progress each caller and each application has, for
    /// the limits of `CallConfiguration`.
    private var countedCalls: [String: (application: String, caller: AppUser?)] = [:]
    private var callsByCaller: [AppUser: Int] = [:]
    private var callsByApplication: [String: Int] = [:]
    /// Each application's dialling settings and its calls to phone numbers
    /// (`CallRegistry+Dialling.swift`).
    public internal(set) var dialling = DiallingLimiter()

    public init(configuration: CallConfiguration = CallConfiguration(), router: any CallRouter = PresenceRouter()) {
        self.configuration = configuration
        self.router = router
    }

    // MARK: Presence

    /// Records that the application has seen this user (parleyd seeds this from its store).
    public mutating func markKnown(_ user: AppUser) {
        presence.markKnown(user)
    }

    /// A device authenticated. With `resumed` (its `hello` resumed the previous session)
    /// its calls continue; without, any call it was part of loses it (a ringing device
    /// leaves the ring set; a party's call ends with `inactive`).
    public mutating func deviceConnected(_ device: Device, resumed: Bool, now: ClockReading) -> [CallAction] {
        presence.connect(device)
        return forEachCall(of: device, now: now, resumed ? .deviceReconnected(device) : .deviceLost(device))
    }

    /// A device's connection dropped. A ringing callee device leaves the ring set at
    /// once; the caller or the answering device has `reconnectGrace` to resume before its
    /// call ends with `inactive`.
    public mutating func deviceDisconnected(_ device: Device, now: ClockReading) -> [CallAction] {
        presence.disconnect(device)
        return forEachCall(of: device, now: now, .deviceDisconnected(device))
    }

    private mutating func forEachCall(of device: Device, now: ClockReading, _ input: CallInput) -> [CallAction] {
        var actions: [CallAction] = []
        for callID in (callsByDevice[device] ?? []).sorted() {
            if let result = try? apply(input, to: callID, now: now) {
                actions += result
            }
        }
        return actions
    }

    // MARK: Requests

    /// Handles a call request from an authenticated device: `call.start`, `call.ack`,
    /// `call.answer`, `call.decline`, `call.hangup`, `call.dtmf`, `call.hold`, `ice.candidate`. Returns
    /// the reply first (`result`, or `error` with the code docs/protocol.md gives), then
    /// the call's actions. Other messages get `error` `not_implemented` (parleyd handles
    /// `hello`, `ping` and push itself).
    public mutating func handleRequest(_ message: SignalingMessage, from device: Device, now: ClockReading) -> [CallAction] {
        let requestID = message.requestID
        do throws(CallingError) {
            let actions: [CallAction]
            switch message {
            case .callStart(let start): actions = try startCall(start, from: device, now: now)
            case .callAck(let request): actions = try apply(.acknowledged(device, earlyAnswer: request.sdp), to: request.callID, now: now)
            case .callAnswer(let answer): actions = try apply(.answered(device, sdp: answer.sdp), to: answer.callID, now: now)
            case .callDecline(let request): actions = try apply(.declined(device), to: request.callID, now: now)
            case .callHangup(let request): actions = try apply(.hungUp(device), to: request.callID, now: now)
            case .callDTMF(let dtmf): actions = try apply(.dtmf(device, digits: dtmf.digits), to: dtmf.callID, now: now)
            case .callHold(let hold): actions = try apply(.hold(device, held: hold.held), to: hold.callID, now: now)
            case .callStats(let stats): actions = try recordPlayout(stats, from: device, now: now)
            case .iceCandidate(let candidate):
                // The anchor is ICE-lite: it learns addresses from checks, so a trickled
                // candidate only needs to name a call of this device.
                guard calls[candidate.callID]?.devices.contains(device) == true else {
                    throw notFound(candidate.callID, device: device)
                }
                actions = []
            default:
                throw CallingError(.notImplemented, callID: message.callID, "\(message.type.rawValue) is not a call request")
            }
            guard let requestID else { return actions }
            return [.send(device, .result(.init(replyTo: requestID)))] + actions
        } catch {
            return [.send(device, error.errorReply(to: requestID))]
        }
    }

    /// Accepts a `call.stats` from the caller's device or the callee device that answered,
    /// during the call or up to `statsGrace` after it ended; the counters go to that
    /// party's leg of the record.
    private func recordPlayout(_ stats: SignalingMessage.CallStats, from device: Device, now: ClockReading) throws(CallingError) -> [CallAction] {
        let record: CallRecord
        if let machine = calls[stats.callID] {
            record = machine.record
        } else if let ended = endedRecords[stats.callID] {
            let graceMilliseconds = configuration.statsGrace.components.seconds * 1000
                + configuration.statsGrace.components.attoseconds / 1_000_000_000_000_000
            if let endedTime = ended.times.endedTime, now.unixMilliseconds - endedTime > graceMilliseconds {
                throw CallingError(.invalidState, callID: stats.callID, "the call ended too long ago for call.stats")
            }
            record = ended
        } else {
            throw CallingError(.callNotFound, callID: stats.callID, "no such call")
        }
        let role: CallLegRole
        if record.caller == .user(device.user.userID), record.applicationKey == device.user.applicationKey,
           record.callerDeviceID == device.deviceID {
            role = .caller
        } else if record.isCallee(device.user), record.answeredDeviceID == device.deviceID {
            role = .callee
        } else {
            throw CallingError(.callNotFound, callID: stats.callID, "no such call for device \(device.deviceID)")
        }
        return [.recordPlayout(callID: stats.callID, role: role, CallLegPlayout(counters: stats.playout, reportedTime: now.unixMilliseconds))]
    }

    /// Accepts a `call.start` and asks the router where it goes. A decision the router
    /// gives at once that needs a party kind not built yet, or not enabled (phone and SIP
    /// without `sipDialling`), is refused here with `not_implemented` (field `to.kind`), one
    /// the application's dialling settings refuse with the refusal's code
    /// (`DiallingRefusal`), and one to a phone number without a CLI with `bad_request`
    /// (field `cli`); none creates a call.
    private mutating func startCall(_ start: SignalingMessage.CallStart, from device: Device, now: ClockReading) throws(CallingError) -> [CallAction] {
        guard CallID.isValid(start.callID) else {
            throw CallingError(.badRequest, callID: nil, field: "callId", "call id is not a lower-case UUID")
        }
        if calls[start.callID] != nil || recentlyEnded.contains(start.callID) {
            throw CallingError(.callExists, callID: start.callID, field: "callId", "call id already in use")
        }
        try CallStateMachine.checkHeaders(start.headers, callID: start.callID, configuration: configuration)
        let started = callsByCaller[device.user] ?? 0
        guard started < configuration.maxCallsPerUser else {
            throw CallingError(.tooManyCalls, callID: start.callID,
                               "user \(device.user.userID) has \(started) calls in progress, the most this server allows")
        }
        let inApplication = callsByApplication[device.user.applicationKey] ?? 0
        guard inApplication < configuration.maxCallsPerApplication else {
            throw CallingError(.tooManyCalls, callID: start.callID,
                               "the application has \(inApplication) calls in progress, the most this server allows")
        }
        try checkDestination(start)
        let request = RouteRequest(
            callID: start.callID, caller: device, destination: start.to, headers: start.headers, video: start.video, cli: start.cli)
        let decision = router.route(request, presence: presence)
        if let kind = decision?.refusedKind(sipDialling: configuration.sipDialling) {
            throw CallingError(.notImplemented, callID: start.callID, field: "to.kind", RoutingDecision.unplacedMessage(kind))
        }
        let (admitted, maximumLength) = try admitDialling(decision, callID: start.callID, caller: device, now: now)
        if case .dialNumber(let route)? = admitted, route.callerID == nil {
            throw CallingError(.badRequest, callID: start.callID, field: "cli", CallStateMachine.missingCLI)
        }
        // The record names the callee by the destination's address, with the direction of
        // its kind (docs/calls.md).
        var (machine, actions) = CallStateMachine.start(start, from: device, decision: admitted, now: now, configuration: configuration)
        if let maximumLength { machine.capLength(at: now.instant.advanced(by: maximumLength)) }
        countedCalls[start.callID] = (device.user.applicationKey, device.user)
        callsByCaller[device.user, default: 0] += 1
        callsByApplication[device.user.applicationKey, default: 0] += 1
        store(machine)
        return actions
    }

    /// Starts a conference callout (REST `conferenceCallout`): the room `room` of the
    /// application calls `callee` to bring them in. The user's connected devices ring; a
    /// user with none but with push tokens is pushed; the call's answered leg is seated in
    /// the room's mixer. Refused (nothing starts) when `callID` is not a fresh lower-case
    /// UUID (`bad_request`, `call_exists`), the headers are too large (`too_large`), the
    /// application has its most calls (`too_many_calls`), the application never saw the
    /// user (`destination_not_found`), or the user has no device to reach
    /// (`destination_unavailable`).
    public mutating func startCallout(
        callID: String, room: String, to callee: AppUser, headers: [String: String] = [:], displayName: String? = nil, now: ClockReading
    ) throws(CallingError) -> [CallAction] {
        guard CallID.isValid(callID) else {
            throw CallingError(.badRequest, callID: nil, field: "callId", "call id is not a lower-case UUID")
        }
        if calls[callID] != nil || recentlyEnded.contains(callID) {
            throw CallingError(.callExists, callID: callID, field: "callId", "call id already in use")
        }
        try CallStateMachine.checkHeaders(headers, callID: callID, configuration: configuration)
        let inApplication = callsByApplication[callee.applicationKey] ?? 0
        guard inApplication < configuration.maxCallsPerApplication else {
            throw CallingError(.tooManyCalls, callID: callID,
                               "the application has \(inApplication) calls in progress, the most this server allows")
        }
        // A callout is the application's own request, not a call to route.
        let decision = try reach(callee, callID: callID)
        let (machine, actions) = CallStateMachine.callout(
            callID: callID, room: room, applicationKey: callee.applicationKey, to: callee, headers: headers, displayName: displayName,
            decision: decision, now: now, configuration: configuration)
        countedCalls[callID] = (callee.applicationKey, nil)
        callsByApplication[callee.applicationKey, default: 0] += 1
        store(machine)
        return actions
    }

    /// Starts a call that came in over SIP (`CallStateMachine.inbound`): `caller` is the far
    /// side (its address the number or SIP address it calls from), `offer` its INVITE's SDP,
    /// `target` the application's user or conference room the call goes to (as the number's
    /// routing rule or the application's backend said). A user's connected devices ring; a
    /// user with none but with push tokens is pushed. Refused (nothing starts; the SIP side
    /// answers with a final failure) as `startCallout` refuses.
    ///
    /// A `phone` or `sip` target bridges the call to a call out (`admitBridge`): the
    /// application's dialling settings apply as to its app calls, and a phone number is
    /// dialled presenting `cli`, else the caller's own number, else the application's
    /// default CLI. `headers` (the INVITE's `x-` headers, with the backend's) go on the
    /// call out's INVITE. `maximumLength` (a backend's `maxDuration`) ends the call with
    /// `timeout` that long after it started, if the dialling settings' cap is not sooner;
    /// `ringTimeout` (a backend's `dialTimeout`) ends it unanswered that long after it
    /// started, if `CallConfiguration.ringTimeout` is not sooner.
    public mutating func startInbound(
        callID: String, from caller: SIPParty, applicationKey: String, to target: PartyAddress, offer: String,
        headers: [String: String] = [:], displayName: String? = nil, cli: String? = nil, maximumLength: Duration? = nil,
        ringTimeout: Duration? = nil, now: ClockReading
    ) throws(CallingError) -> [CallAction] {
        guard CallID.isValid(callID) else {
            throw CallingError(.badRequest, callID: nil, field: "callId", "call id is not a lower-case UUID")
        }
        if calls[callID] != nil || recentlyEnded.contains(callID) {
            throw CallingError(.callExists, callID: callID, field: "callId", "call id already in use")
        }
        try CallStateMachine.checkHeaders(headers, callID: callID, configuration: configuration)
        let inApplication = callsByApplication[applicationKey] ?? 0
        guard inApplication < configuration.maxCallsPerApplication else {
            throw CallingError(.tooManyCalls, callID: callID,
                               "the application has \(inApplication) calls in progress, the most this server allows")
        }
        let decision: RoutingDecision
        var admittedLength: Duration?
        switch target {
        case .user(let userID):
            decision = try reach(AppUser(applicationKey: applicationKey, userID: userID), callID: callID)
        case .conference(let room):
            decision = .joinRoom(room)
        case .phone, .sip:
            (decision, admittedLength) = try admitBridge(to: target, from: caller, applicationKey: applicationKey, headers: headers,
                                                        cli: cli, callID: callID, now: now)
        }
        var (machine, actions) = CallStateMachine.inbound(
            callID: callID, from: caller, applicationKey: applicationKey, to: target, offer: offer, headers: headers,
            displayName: displayName, decision: decision, now: now, configuration: configuration)
        for length in [admittedLength, maximumLength].compactMap(\.self) { machine.capLength(at: now.instant.advanced(by: length)) }
        if let ringTimeout { machine.capRinging(at: now.instant.advanced(by: ringTimeout)) }
        countedCalls[callID] = (applicationKey, nil)
        callsByApplication[applicationKey, default: 0] += 1
        store(machine)
        return actions
    }

    /// How a call the server places reaches an app user: the local router's rule (ring the
    /// connected devices, else push), whatever router places app calls; an unknown user or
    /// one with no device to reach is refused.
    private func reach(_ user: AppUser, callID: String) throws(CallingError) -> RoutingDecision {
        let decision = PresenceRouter().route(
            RouteRequest(callID: callID, caller: Device(user: user, deviceID: ""), destination: .user(user.userID), headers: [:], video: false),
            presence: presence) ?? .reject(.init(code: .destinationUnavailable, message: "destination user has no connected device"))
        if case .reject(let error) = decision {
            let code: CallingError.Code = error.code == .destinationNotFound ? .destinationNotFound : .destinationUnavailable
            throw CallingError(code, callID: callID, field: "destination", error.message)
        }
        return decision
    }

    /// Checks what `call.start` says about a phone or SIP destination: `cli` only for a
    /// phone number, in E.164; a phone number or SIP address in its kind's format (the
    /// protocol reader's rule, for a request built in code); and, where SIP dialling is on, only `x-`
    /// headers toward a SIP address, since they travel as SIP headers on its INVITE. With
    /// dialling off a phone or SIP destination is refused `not_implemented` after routing,
    /// as before dialling existed, whatever its headers.
    private func checkDestination(_ start: SignalingMessage.CallStart) throws(CallingError) {
        if let cli = start.cli {
            guard start.to.kind == .phone else {
                throw CallingError(.badRequest, callID: start.callID, field: "cli", "cli is only for calls to phone numbers")
            }
            if let problem = PartyAddress.phone(cli).formatProblem {
                throw CallingError(.badRequest, callID: start.callID, field: "cli", "cli \(problem)")
            }
        }
        if start.to.kind == .phone || start.to.kind == .sip, let problem = start.to.formatProblem {
            throw CallingError(.badRequest, callID: start.callID, field: "to.address", "\(start.to.kind.rawValue) address \(problem)")
        }
        if configuration.sipDialling, start.to.kind == .sip,
           let name = start.headers.keys.sorted().first(where: { !$0.lowercased().hasPrefix("x-") }) {
            throw CallingError(.badRequest, callID: start.callID, field: "headers",
                               "header \(name): a call to a SIP address carries only x- headers (they go on its INVITE)")
        }
    }

    /// A device relayed the push of call `callID` (parleyd verified the payload's
    /// signature, app, device and expiry first). Returns `result` to `requestID`, then:
    /// for a live call, the device joins the ring set (its `call.incoming` follows once
    /// its leg is ready); for a call that ended, or that this device is no longer part of,
    /// `call.ended` with the cause (`canceled` when the caller hung up during the push).
    public mutating func relayPush(callID: String, requestID: String, from device: Device, now: ClockReading) -> [CallAction] {
        let result = CallAction.send(device, .result(.init(replyTo: requestID)))
        if let record = endedRecords[callID], record.isCallee(device.user) {
            let details = CallTimes(startedTime: record.times.startedTime, endedTime: record.times.endedTime ?? now.unixMilliseconds)
            var cause = record.endCause ?? .canceled
            if let answered = record.answeredDeviceID, answered != device.deviceID { cause = .otherDeviceAnswered }
            var error: SignalingMessage.CallError?
            if cause == .error {
                error = SignalingMessage.CallError(record.error ?? CallError(code: "internal_error", message: ""))
            }
            return [result, .notify(.device(device), .ended(callID: callID, cause: cause, error: error, details: details))]
        }
        guard let machine = calls[callID], machine.record.isCallee(device.user) else {
            return [.send(device, CallingError(.callNotFound, callID: callID, "no such call").errorReply(to: requestID))]
        }
        if machine.isFormerCallee(device) {
            return [result, .notify(.device(device), .ended(
                callID: callID, cause: machine.causeForFormerCallee, error: nil, details: machine.detailsForLateRelay(device, at: now.unixMilliseconds)))]
        }
        do throws(CallingError) {
            return [result] + (try apply(.pushRelayed(device), to: callID, now: now))
        } catch {
            return [.send(device, error.errorReply(to: requestID))]
        }
    }

    /// Sets which of a user's devices have push tokens (see `Presence.setPushDevices`).
    public mutating func setPushDevices(_ user: AppUser, deviceIDs: Set<String>) {
        presence.setPushDevices(user, deviceIDs: deviceIDs)
    }

    /// Hangs up a call on behalf of the application (REST `DELETE /v1/calls/{id}`):
    /// `canceled` before the answer, `hungUp` after. Throws `call_not_found` or `invalid_state`.
    public mutating func hangUp(callID: String, now: ClockReading) throws(CallingError) -> [CallAction] {
        try apply(.serverHangup, to: callID, now: now)
    }

    /// Ends every call with `error` (e.g. `internal_error`, "server shutting down").
    public mutating func endAll(_ error: SignalingMessage.CallError, now: ClockReading) -> [CallAction] {
        var actions: [CallAction] = []
        for callID in calls.keys.sorted() {
            if let result = try? apply(.failed(error), to: callID, now: now) {
                actions += result
            }
        }
        return actions
    }

    // MARK: Routing, media and time

    /// The router's decision for call `callID`, delivered after `call.start` (a router
    /// that returned nil). A decision for a call already routed, ended or unknown is
    /// ignored; one that needs a party kind not built yet ends the call with `error`
    /// `not_implemented`; one the application's dialling settings refuse ends it with the
    /// refusal's error.
    public mutating func handleRouting(_ decision: RoutingDecision, callID: String, now: ClockReading) -> [CallAction] {
        var input = CallInput.routed(decision)
        if let caller = calls[callID]?.caller, calls[callID]?.isRouting == true {
            switch admitDialling(decision, callID: callID, caller: caller, now: now) {
            case .success(let admission):
                input = .routed(admission.decision)
                if let limit = admission.maximumLength { calls[callID]?.capLength(at: now.instant.advanced(by: limit)) }
            case .failure(let refusal):
                input = .failed(refusal.callError)
            }
        }
        return (try? apply(input, to: callID, now: now)) ?? []
    }

    /// What the SIP side reports about a call's SIP party (the answers to its INVITE, the
    /// far side's BYE). Reports about calls that ended, or that no longer fit, are ignored.
    public mutating func handleSIP(_ event: SIPCallEvent, from party: SIPParty, now: ClockReading) -> [CallAction] {
        (try? apply(.sip(party, event), to: party.callID, now: now)) ?? []
    }

    /// A report of the media layer about one of a call's legs. Reports about calls that
    /// ended are ignored.
    public mutating func handleMedia(_ event: MediaEvent, callID: String, now: ClockReading) -> [CallAction] {
        (try? apply(.media(event), to: callID, now: now)) ?? []
    }

    /// The earliest deadline of any call; call `handleTimeout(now:)` when it passes.
    public var nextDeadline: ContinuousClock.Instant? {
        deadlines.earliest
    }

    /// Fires every call timer due at `now`.
    public mutating func handleTimeout(now: ClockReading) -> [CallAction] {
        var actions: [CallAction] = []
        var fired: Set<String> = []
        while let next = deadlines.next, next.deadline <= now.instant, fired.insert(next.key).inserted {
            guard var machine = calls.removeValue(forKey: next.key) else {
                deadlines.set(next.key, to: nil)
                continue
            }
            actions += machine.handleTimeout(now: now)
            store(machine)
        }
        return actions
    }

    // MARK: Queries

    /// The current record of a call in progress.
    public func record(of callID: String) -> CallRecord? {
        calls[callID]?.record
    }

    /// The calls in progress.
    public var activeCalls: [CallRecord] {
        calls.values.map(\.record)
    }

    /// The ids of the calls a device takes part in.
    public func callIDs(of device: Device) -> Set<String> {
        callsByDevice[device] ?? []
    }

    // MARK: Bookkeeping

    private func notFound(_ callID: String, device: Device) -> CallingError {
        if recentlyEnded.contains(callID) {
            return CallingError(.invalidState, callID: callID, "the call ended")
        }
        return CallingError(.callNotFound, callID: callID, "no such call for device \(device.deviceID)")
    }

    private mutating func apply(_ input: CallInput, to callID: String, now: ClockReading) throws(CallingError) -> [CallAction] {
        guard var machine = calls[callID] else {
            if recentlyEnded.contains(callID) {
                throw CallingError(.invalidState, callID: callID, "the call ended")
            }
            throw CallingError(.callNotFound, callID: callID, "no such call")
        }
        // Taken out while it changes, so that its storage is not copied (copy on write).
        calls[callID] = nil
        do throws(CallingError) {
            let actions = try machine.handle(input, now: now)
            store(machine)
            return actions
        } catch {
            calls[callID] = machine
            throw error
        }
    }

    /// Saves a machine after it changed, keeps the device index true, and forgets ended calls.
    private mutating func store(_ machine: CallStateMachine) {
        let callID = machine.callID
        for device in devicesByCall[callID] ?? [] {
            callsByDevice[device]?.remove(callID)
            if callsByDevice[device]?.isEmpty == true { callsByDevice[device] = nil }
        }
        deadlines.set(callID, to: machine.nextDeadline)
        if machine.state == .ended {
            calls[callID] = nil
            devicesByCall[callID] = nil
            dialling.callEnded(callID)
            if let counted = countedCalls.removeValue(forKey: callID) {
                if let caller = counted.caller {
                    let byCaller = (callsByCaller[caller] ?? 1) - 1
                    callsByCaller[caller] = byCaller > 0 ? byCaller : nil
                }
                let byApplication = (callsByApplication[counted.application] ?? 1) - 1
                callsByApplication[counted.application] = byApplication > 0 ? byApplication : nil
            }
            rememberEnded(callID, machine.record)
            return
        }
        calls[callID] = machine
        let devices = machine.devices
        devicesByCall[callID] = devices
        for device in devices {
            callsByDevice[device, default: []].insert(callID)
        }
    }

    private mutating func rememberEnded(_ callID: String, _ record: CallRecord) {
        guard configuration.recentlyEndedCapacity > 0, recentlyEnded.insert(callID).inserted else { return }
        endedRecords[callID] = record
        recentlyEndedOrder.append(callID)
        // Trimmed in batches so that each end costs O(1) amortized.
        if recentlyEndedOrder.count > 2 * configuration.recentlyEndedCapacity {
            let excess = recentlyEndedOrder.count - configuration.recentlyEndedCapacity
            for old in recentlyEndedOrder.prefix(excess) {
                recentlyEnded.remove(old)
                endedRecords[old] = nil
            }
            recentlyEndedOrder.removeFirst(excess)
        }
    }
}
