public import ParleyCallModel
public import ParleyWireCore
public import ParleySignaling

/// One call on the server, sans-I/O: inputs with the time they happened in, actions
/// (notifications to parties, media instructions, record versions) and a deadline out.
///
/// States: routing -> initiating -> progressing -> ringing -> answered -> established, and
/// ended from any of them (docs/calls.md). The state is one enum carrying each state's
/// data (`Phase`), so that, say, an answered call without an answering party cannot be
/// represented. The caller hears, in order and each at most once: media, progress,
/// ringing, answered, established, ended; every callee that was offered the call hears
/// exactly one `ended`. The `result` or `error` reply to a request is not the machine's
/// business: `CallRegistry` sends it before the machine's actions.
///
/// parleyd calls `handleTimeout(now:)` when `nextDeadline` passes.
public struct CallStateMachine: Sendable {
    /// Where a callee device is in the call before the answer.
    private enum CalleeStatus: Sendable, Hashable {
        /// Its leg is being created; it has not been told about the call.
        case awaitingOffer
        /// It got `call.incoming`; `acknowledged` once it sent `call.ack`.
        case offered(acknowledged: Bool)
        /// It was sent a push and has not relayed it: not connected, not told anything.
        case pushed
    }

    /// The router has not answered yet: no leg exists, nobody but the caller knows.
    private struct Routing: Sendable {
        var deadline: ContinuousClock.Instant
        var callerGrace: ContinuousClock.Instant?
    }

    /// Routed to callee devices, before the answer (initiating, progressing, ringing).
    private struct Offering: Sendable {
        /// Callee devices in the ring set, in ring order.
        var callees: [Device]
        var status: [Device: CalleeStatus]
        var callerLegConnected = false
        /// Callee legs whose ICE and DTLS are done. A device may connect its leg before it
        /// answers (it has the anchor's offer from `call.incoming`).
        var connectedCalleeLegs: Set<Device> = []
        /// Callee devices that answered the leg's offer in `call.ack` (their legs connect
        /// while they ring), with that SDP answer.
        var earlyAnswers: [Device: String] = [:]
        var ringDeadline: ContinuousClock.Instant
        /// When the caller's dropped connection runs out of time to resume.
        var callerGrace: ContinuousClock.Instant?

        mutating func remove(_ device: Device) -> CalleeStatus? {
            guard let status = status.removeValue(forKey: device) else { return nil }
            callees.removeAll { $0 == device }
            connectedCalleeLegs.remove(device)
            earlyAnswers[device] = nil
            return status
        }
    }

    /// A callee device answered; the legs are connecting.
    private struct Connecting: Sendable {
        var answerer: Device
        var callerLegConnected: Bool
        var answererLegConnected: Bool
        var setupDeadline: ContinuousClock.Instant
        /// Reconnect graces of the caller and the answerer.
        var graces: [Device: ContinuousClock.Instant]
    }

    /// Both legs connected: the parties talk.
    private struct Talking: Sendable {
        var answerer: Device
        var graces: [Device: ContinuousClock.Instant]
    }

    /// The call's state with the data that only exists in it.
    private enum Phase: Sendable {
        case routing(Routing)
        /// The caller's leg is being created; `relayedEarly` when a pushed device relayed
        /// before it was ready (the caller rings right after `call.progress`).
        case initiating(Offering, relayedEarly: Bool)
        case progressing(Offering)
        /// A callee acknowledged: the caller heard `call.ringing`.
        case ringing(Offering)
        case answered(Connecting)
        case established(Talking)
        case ended
        /// Only while an event changes the state in place (no copy of its storage).
        case modifying

        var callState: CallState {
            switch self {
            case .routing, .initiating: .initiating
            case .progressing: .progressing
            case .ringing: .ringing
            case .answered: .answered
            case .established: .established
            case .ended: .ended
            case .modifying: preconditionFailure("invalid state: a call event left the machine in .modifying")
            }
        }
    }

    /// The call's id (from `call.start`).
    public let callID: String
    /// The caller's device.
    public let caller: Device
    public let configuration: CallConfiguration
    /// The call as the store keeps it; changes are also emitted as `CallAction.record`.
    public private(set) var record: CallRecord

    /// The call's state.
    public var state: CallState { phase.callState }

    private var phase: Phase
    private let destination: SignalingMessage.Address
    private let headers: [String: String]
    /// The name the caller asked its callees' devices to show (`call.start`'s `displayName`).
    private let callerDisplayName: String?
    private let video: Bool
    private let callerOffer: String
    private let startInstant: ContinuousClock.Instant
    private let maximumDeadline: ContinuousClock.Instant
    /// Callee devices that left the call (another answered, their leg failed, they
    /// dropped): history, for the error a late request of theirs gets.
    private var formerCallees: Set<Device> = []
    /// The SDP answer the answering device gave in `call.ack`, if it answered media early.
    private var answererEarlyAnswer: String?

    private var output: [CallAction] = []

    /// Starts a call accepted from `call.start` (the registry has checked the call id and
    /// headers with `checkHeaders`) to the user `callee`, with the router's `decision` if
    /// it answered at once. Without one the machine waits in its routing state for
    /// `.routed(decision)` until `routingTimeout`. The actions end with the first record.
    public static func start(
        _ request: SignalingMessage.CallStart, from caller: Device, to callee: AppUser, decision: RoutingDecision?,
        now: ClockReading, configuration: CallConfiguration = CallConfiguration()
    ) -> (machine: CallStateMachine, actions: [CallAction]) {
        var machine = CallStateMachine(request, from: caller, to: callee, now: now, configuration: configuration)
        if let decision { machine.routed(decision, now: now) }
        let actions = machine.flush(nil)
        return (machine, actions)
    }

    private init(_ request: SignalingMessage.CallStart, from caller: Device, to callee: AppUser, now: ClockReading, configuration: CallConfiguration) {
        self.callID = request.callID
        self.caller = caller
        self.configuration = configuration
        self.destination = request.to
        self.headers = request.headers
        self.callerDisplayName = request.displayName
        self.video = request.video
        self.callerOffer = request.sdp
        self.startInstant = now.instant
        self.maximumDeadline = now.instant.advanced(by: configuration.maximumCallLength)
        self.phase = .routing(Routing(deadline: now.instant.advanced(by: configuration.routingTimeout)))
        self.record = CallRecord(
            callID: request.callID, from: caller, to: callee, headers: request.headers, video: request.video,
            startedTime: now.unixMilliseconds)
    }

    static func milliseconds(_ duration: Duration) -> Int64 { duration.wholeMilliseconds }

    /// Checks custom headers against the configured limits (1024 bytes of names plus
    /// values, 64 headers): `too_large` on field `headers` otherwise.
    public static func checkHeaders(_ headers: [String: String], callID: String?, configuration: CallConfiguration = CallConfiguration()) throws(CallingError) {
        if headers.count > configuration.maxHeaderCount {
            throw CallingError(.tooLarge, callID: callID, field: "headers", "\(headers.count) headers exceeds the limit of \(configuration.maxHeaderCount)")
        }
        var total = 0
        for (name, value) in headers {
            total += name.utf8.count + value.utf8.count
        }
        if total > configuration.maxHeadersBytes {
            throw CallingError(.tooLarge, callID: callID, field: "headers", "headers total size \(total) bytes exceeds \(configuration.maxHeadersBytes)")
        }
    }

    /// Every device taking part now: the caller and the callee devices still in the call.
    public var devices: [Device] {
        switch phase {
        case .initiating(let offering, _), .progressing(let offering), .ringing(let offering): [caller] + offering.callees
        case .answered(let connecting): [caller, connecting.answerer]
        case .established(let talking): [caller, talking.answerer]
        case .routing, .ended, .modifying: [caller]
        }
    }

    /// The callee device that answered, once one did (nil after the end).
    private var answerer: Device? {
        switch phase {
        case .answered(let connecting): connecting.answerer
        case .established(let talking): talking.answerer
        default: nil
        }
    }

    /// When `handleTimeout(now:)` must run next; nil once the call ended.
    public var nextDeadline: ContinuousClock.Instant? {
        var earliest = maximumDeadline
        func consider(_ deadline: ContinuousClock.Instant?) {
            if let deadline, deadline < earliest { earliest = deadline }
        }
        switch phase {
        case .ended, .modifying: return nil
        case .routing(let routing):
            consider(routing.deadline)
            consider(routing.callerGrace)
        case .initiating(let offering, _), .progressing(let offering), .ringing(let offering):
            consider(offering.ringDeadline)
            consider(offering.callerGrace)
        case .answered(let connecting):
            consider(connecting.setupDeadline)
            for deadline in connecting.graces.values { consider(deadline) }
        case .established(let talking):
            for deadline in talking.graces.values { consider(deadline) }
        }
        return earliest
    }

    /// Applies one input. Throws (and changes nothing) when the input does not fit the
    /// call: `invalid_state` (answering an answered call, ...) or `call_not_found` (a
    /// device that is not part of the call). Media reports and routing decisions that no
    /// longer matter are ignored.
    public mutating func handle(_ input: CallInput, now: ClockReading) throws(CallingError) -> [CallAction] {
        let before = record
        output = []
        switch input {
        case .routed(let decision): routed(decision, now: now)
        case .acknowledged(let device, let earlyAnswer): try acknowledge(device, earlyAnswer: earlyAnswer, now: now)
        case .answered(let device, let sdp): try answer(device, sdp: sdp, now: now)
        case .declined(let device): try decline(device, now: now)
        case .hungUp(let device): try hangUp(device, now: now)
        case .serverHangup:
            try requireNotEnded("hang up")
            end(isAnswered ? .hungUp : .canceled, now: now)
        case .dtmf(let device, let digits): try sendDTMF(from: device, digits: digits)
        case .pushRelayed(let device): try pushRelayed(device, now: now)
        case .media(let event): handleMedia(event, now: now)
        case .deviceDisconnected(let device): disconnected(device, now: now)
        case .deviceLost(let device): lost(device, now: now)
        case .deviceReconnected(let device): setGrace(of: device, to: nil)
        case .failed(let error):
            if state != .ended { end(.error, error: error, now: now) }
        }
        return flush(before)
    }

    /// Fires the timers that are due at `now`: maximum length (`timeout`), routing
    /// (`error` `destination_unavailable`), ring timeout (`noAnswer` or `timeout`), media
    /// setup (`error` `media_failed`), reconnect grace (`inactive`).
    public mutating func handleTimeout(now: ClockReading) -> [CallAction] {
        let before = record
        output = []
        let due = { (deadline: ContinuousClock.Instant?) in deadline.map { $0 <= now.instant } ?? false }
        switch phase {
        case .ended, .modifying: break
        case _ where maximumDeadline <= now.instant:
            end(.timeout, now: now)
        case .routing(let routing):
            if due(routing.deadline) {
                end(.error, error: .init(code: .destinationUnavailable, message: "no routing decision within \(configuration.routingTimeout)"), now: now)
            } else if due(routing.callerGrace) {
                end(.inactive, now: now)
            }
        case .initiating(let offering, _), .progressing(let offering), .ringing(let offering):
            if due(offering.ringDeadline) {
                end(state == .ringing ? .timeout : .noAnswer, now: now)
            } else if due(offering.callerGrace) {
                end(.inactive, now: now)
            }
        case .answered(let connecting):
            if due(connecting.setupDeadline) {
                end(.error, error: .init(code: .mediaFailed, message: "media not established within \(configuration.mediaSetupTimeout)"), now: now)
            } else if connecting.graces.values.contains(where: { $0 <= now.instant }) {
                end(.inactive, now: now)
            }
        case .established(let talking):
            if talking.graces.values.contains(where: { $0 <= now.instant }) { end(.inactive, now: now) }
        }
        return flush(before)
    }

    // MARK: Routing

    private mutating func routed(_ decision: RoutingDecision, now: ClockReading) {
        guard case .routing(let routing) = phase else { return }
        switch decision {
        case .reject(let error):
            end(.error, error: error, now: now)
        case .dialNumber, .dialSIP, .joinRoom:
            let kind = decision.unbuiltKind?.rawValue ?? "this"
            end(.error, error: .init(code: .notImplemented, message: "calls to \(kind) addresses are not implemented yet"), now: now)
        case .ringDevices(let devices), .pushDevices(let devices):
            let pushed: Bool
            if case .pushDevices = decision { pushed = true } else { pushed = false }
            var offering = Offering(callees: [], status: [:], ringDeadline: startInstant.advanced(by: configuration.ringTimeout),
                                    callerGrace: routing.callerGrace)
            for device in devices where device != caller && offering.status[device] == nil {
                offering.callees.append(device)
                offering.status[device] = pushed ? .pushed : .awaitingOffer
            }
            guard !offering.callees.isEmpty else {
                end(.error, error: .init(code: .destinationUnavailable, message: "destination user has no connected device"), now: now)
                return
            }
            phase = .initiating(offering, relayedEarly: false)
            output.append(.media(.answerCaller(callID: callID, offer: callerOffer)))
            if pushed {
                output.append(.push(PushInstruction(
                    callID: callID, devices: offering.callees, caller: caller.user, headers: headers,
                    video: video, issuedTime: now.unixMilliseconds,
                    expiresTime: record.times.startedTime + Self.milliseconds(configuration.ringTimeout),
                    callerDisplayName: callerDisplayName)))
            }
        }
    }

    // MARK: Requests

    private var isAnswered: Bool { answerer != nil }

    private func requireNotEnded(_ what: String) throws(CallingError) {
        if case .ended = phase {
            throw CallingError(.invalidState, callID: callID, "cannot \(what): the call ended")
        }
    }

    /// The status of a callee device that may act on the call, or the error for one that
    /// may not. The answerer counts as offered (and acknowledged).
    private func calleeStatus(of device: Device, to what: String) throws(CallingError) -> CalleeStatus {
        try requireNotEnded(what)
        switch phase {
        case .initiating(let offering, _), .progressing(let offering), .ringing(let offering):
            if let status = offering.status[device] { return status }
        case .answered, .established:
            if device == answerer { return .offered(acknowledged: true) }
        case .routing, .ended, .modifying:
            break
        }
        if formerCallees.contains(device) {
            throw CallingError(.invalidState, callID: callID, "cannot \(what): the call ended for this device")
        }
        throw CallingError(.callNotFound, callID: callID, "device \(device.deviceID) is not a callee of this call")
    }

    /// Runs `body` on the offering data of a call before the answer, in place.
    private mutating func modifyOffering<Result>(_ body: (inout Offering) -> Result) -> Result? {
        switch phase {
        case .initiating(var offering, let relayedEarly):
            phase = .modifying
            let result = body(&offering)
            phase = .initiating(offering, relayedEarly: relayedEarly)
            return result
        case .progressing(var offering):
            phase = .modifying
            let result = body(&offering)
            phase = .progressing(offering)
            return result
        case .ringing(var offering):
            phase = .modifying
            let result = body(&offering)
            phase = .ringing(offering)
            return result
        default:
            return nil
        }
    }

    private mutating func acknowledge(_ device: Device, earlyAnswer: String?, now: ClockReading) throws(CallingError) {
        guard case .offered(let acknowledged) = try calleeStatus(of: device, to: "acknowledge") else {
            throw CallingError(.invalidState, callID: callID, "cannot acknowledge: call.incoming not sent yet")
        }
        if let earlyAnswer { try answerMediaEarly(device, sdp: earlyAnswer) }
        if acknowledged || isAnswered { return }
        modifyOffering { $0.status[device] = .offered(acknowledged: true) }
        ringCaller(now: now)
    }

    /// A ringing device answered its leg's offer in `call.ack`: the leg connects now and
    /// carries audio only once this device answers the call. The same answer again (a
    /// request resent after a reconnect) changes nothing; a different one is refused.
    private mutating func answerMediaEarly(_ device: Device, sdp: String) throws(CallingError) {
        let given: String??
        switch phase {
        case .progressing(let offering), .ringing(let offering): given = .some(offering.earlyAnswers[device])
        default: given = .none
        }
        guard let given else {
            if device == answerer, sdp == answererEarlyAnswer { return }
            throw CallingError(.invalidState, callID: callID, "cannot answer media in call.ack: the call was answered")
        }
        if let given {
            if given == sdp { return }
            throw CallingError(.invalidState, callID: callID, "cannot answer media twice: this device's call.ack already had an SDP answer")
        }
        _ = modifyOffering { $0.earlyAnswers[device] = sdp }
        output.append(.media(.acceptAnswer(callID: callID, party: .device(device), answer: sdp)))
    }

    /// The first callee acknowledged: the caller hears `ringing` (only from progressing).
    private mutating func ringCaller(now: ClockReading) {
        guard case .progressing(let offering) = phase else { return }
        phase = .ringing(offering)
        record.times.rungTime = now.unixMilliseconds
        notify(caller, .ringing(callID: callID, time: now.unixMilliseconds))
    }

    /// A pushed device relayed its payload: it now waits for its leg like a connected
    /// callee, and counts as acknowledged (the caller hears `call.ringing`). Relaying
    /// again, or after `call.incoming`, changes nothing.
    private mutating func pushRelayed(_ device: Device, now: ClockReading) throws(CallingError) {
        guard case .pushed = try calleeStatus(of: device, to: "relay a push for") else { return }
        modifyOffering { $0.status[device] = .awaitingOffer }
        // Before the caller's leg is ready, `callerLegReady` offers every waiting device
        // and rings the caller (its events keep their order: media, progress, ringing).
        if case .initiating(let offering, _) = phase {
            phase = .initiating(offering, relayedEarly: true)
            return
        }
        output.append(.media(.offerCallee(callID: callID, party: .device(device))))
        ringCaller(now: now)
    }

    /// The cause a device that is no longer in this (live) call is told when it relays a
    /// push late: another device answered, or it left the ring set.
    public var causeForFormerCallee: CallEndCause { isAnswered ? .otherDeviceAnswered : .inactive }

    /// Whether `device` was a callee of this call and left it.
    public func isFormerCallee(_ device: Device) -> Bool { formerCallees.contains(device) }

    /// The call's times as a callee device that relays a push late sees them.
    public func detailsForLateRelay(_ device: Device, at time: Int64) -> CallTimes {
        details(for: device, answerer: answerer, endedAt: time)
    }

    private mutating func answer(_ device: Device, sdp: String?, now: ClockReading) throws(CallingError) {
        let status = try calleeStatus(of: device, to: "answer")
        if isAnswered {
            throw CallingError(.invalidState, callID: callID, "cannot answer: already answered")
        }
        guard case .offered = status else {
            throw CallingError(.invalidState, callID: callID, "cannot answer: call.incoming not sent yet")
        }
        let offering: Offering
        switch phase {
        case .progressing(let current), .ringing(let current): offering = current
        default: preconditionFailure("invalid transition: answer by an offered device in state \(state)")
        }
        let earlyAnswer = offering.earlyAnswers[device]
        switch (sdp, earlyAnswer) {
        case (nil, nil):
            throw CallingError(.badRequest, callID: callID, "cannot answer without sdp: this device gave no SDP answer in call.ack")
        case (let sdp?, let early?) where sdp != early:
            throw CallingError(.invalidState, callID: callID, "cannot answer with a new sdp: this device's call.ack already had an SDP answer")
        default:
            break
        }
        var graces: [Device: ContinuousClock.Instant] = [:]
        graces[caller] = offering.callerGrace
        phase = .answered(Connecting(
            answerer: device, callerLegConnected: offering.callerLegConnected,
            answererLegConnected: offering.connectedCalleeLegs.contains(device),
            setupDeadline: now.instant.advanced(by: configuration.mediaSetupTimeout), graces: graces))
        record.answeredDeviceID = device.deviceID
        record.times.answeredTime = now.unixMilliseconds
        notify(caller, .answered(callID: callID, time: now.unixMilliseconds))
        notify(device, .answered(callID: callID, time: now.unixMilliseconds))
        for other in offering.callees where other != device {
            formerCallees.insert(other)
            leaveCall(other, status: offering.status[other], cause: .otherDeviceAnswered, now: now)
        }
        if earlyAnswer == nil, let sdp {
            output.append(.media(.acceptAnswer(callID: callID, party: .device(device), answer: sdp)))
        }
        answererEarlyAnswer = earlyAnswer
        output.append(.media(.bridge(callID: callID, party: .device(device))))
        checkEstablished(now: now)
    }

    private mutating func decline(_ device: Device, now: ClockReading) throws(CallingError) {
        let status = try calleeStatus(of: device, to: "decline")
        if isAnswered {
            throw CallingError(.invalidState, callID: callID, "cannot decline: already answered (use call.hangup)")
        }
        guard case .offered = status else {
            throw CallingError(.invalidState, callID: callID, "cannot decline: call.incoming not sent yet")
        }
        end(.denied, now: now)
    }

    private mutating func hangUp(_ device: Device, now: ClockReading) throws(CallingError) {
        if device == caller {
            try requireNotEnded("hang up")
            end(isAnswered ? .hungUp : .canceled, now: now)
            return
        }
        let status = try calleeStatus(of: device, to: "hang up")
        if device == answerer {
            end(.hungUp, now: now)
        } else if case .offered = status, !isAnswered {
            end(.denied, now: now)
        } else {
            throw CallingError(.invalidState, callID: callID, "cannot hang up: call.incoming not sent yet")
        }
    }

    private mutating func sendDTMF(from device: Device, digits: String) throws(CallingError) {
        try requireNotEnded("send DTMF")
        guard device == caller || device == answerer else {
            _ = try calleeStatus(of: device, to: "send DTMF")
            throw CallingError(.invalidState, callID: callID, "cannot send DTMF: the call is not established")
        }
        guard case .established(let talking) = phase else {
            throw CallingError(.invalidState, callID: callID, "cannot send DTMF: the call is not established")
        }
        let leg: CallLegID = device == caller ? .callee(.device(talking.answerer)) : .caller
        output.append(.media(.sendDTMF(callID: callID, leg: leg, digits: digits)))
    }

    // MARK: Media and connections

    private mutating func handleMedia(_ event: MediaEvent, now: ClockReading) {
        switch phase {
        case .routing, .ended, .modifying: return
        default: break
        }
        switch event {
        case .callerLegReady(let sdp):
            guard case .initiating(let offering, let relayedEarly) = phase else { return }
            phase = .progressing(offering)
            record.times.progressedTime = now.unixMilliseconds
            notify(caller, .mediaReady(callID: callID, sdp: sdp))
            notify(caller, .progress(callID: callID, time: now.unixMilliseconds))
            for device in offering.callees where offering.status[device] == .awaitingOffer {
                output.append(.media(.offerCallee(callID: callID, party: .device(device))))
            }
            if relayedEarly { ringCaller(now: now) }
        case .calleeLegReady(let party, let sdp):
            // Offers are asked for only once the caller's leg is ready (progressing).
            guard let device = party.device, state == .progressing || state == .ringing else { return }
            let offered = modifyOffering { offering -> Bool in
                guard offering.status[device] == .awaitingOffer else { return false }
                offering.status[device] = .offered(acknowledged: false)
                return true
            }
            guard offered == true else { return }
            notify(device, .offered(CallOffer(
                callID: callID, from: record.caller, headers: headers, video: video,
                time: record.times.startedTime, sdp: sdp, displayName: callerDisplayName)))
        case .legConnected(let leg):
            legConnected(leg, now: now)
        case .legFailed(let leg, let reason):
            if isPartyLeg(leg) {
                if state == .established {
                    end(.inactive, now: now)
                } else {
                    end(.error, error: .init(code: .mediaFailed, message: "\(leg) media leg failed: \(reason)".prefixUTF8(1024)), now: now)
                }
            } else if case .callee(let party) = leg, let device = party.device {
                guard let status = modifyOffering({ $0.remove(device) }) ?? nil else { return }
                formerCallees.insert(device)
                leaveCall(device, status: status, cause: .error,
                          error: .init(code: .mediaFailed, message: "media leg failed: \(reason)".prefixUTF8(1024)), now: now)
                endIfNoCallees(code: .mediaFailed, message: "no callee device could be offered the call", now: now)
            }
        case .legInactive(let leg):
            if isPartyLeg(leg) { end(.inactive, now: now) }
        }
    }

    private mutating func legConnected(_ leg: CallLegID, now: ClockReading) {
        switch (phase, leg) {
        case (.answered(var connecting), .caller):
            connecting.callerLegConnected = true
            phase = .answered(connecting)
        case (.answered(var connecting), .callee(let party)):
            guard party.device == connecting.answerer else { return }
            connecting.answererLegConnected = true
            phase = .answered(connecting)
        case (_, .caller):
            _ = modifyOffering { $0.callerLegConnected = true }
        case (_, .callee(let party)):
            guard let device = party.device else { return }
            _ = modifyOffering { offering in
                if offering.status[device] != nil { offering.connectedCalleeLegs.insert(device) }
            }
        }
        checkEstablished(now: now)
    }

    /// The caller's leg, or the answering device's: the legs whose loss ends the call.
    private func isPartyLeg(_ leg: CallLegID) -> Bool {
        switch leg {
        case .caller: true
        case .callee(let party): answerer != nil && party.device == answerer
        }
    }

    private mutating func setGrace(of device: Device, to deadline: ContinuousClock.Instant?) {
        switch phase {
        case .routing(var routing):
            guard device == caller else { return }
            routing.callerGrace = deadline
            phase = .routing(routing)
        case .initiating, .progressing, .ringing:
            guard device == caller else { return }
            _ = modifyOffering { $0.callerGrace = deadline }
        case .answered(var connecting):
            guard device == caller || device == connecting.answerer else { return }
            connecting.graces[device] = deadline
            phase = .answered(connecting)
        case .established(var talking):
            guard device == caller || device == talking.answerer else { return }
            talking.graces[device] = deadline
            phase = .established(talking)
        case .ended, .modifying:
            break
        }
    }

    private func grace(of device: Device) -> ContinuousClock.Instant? {
        switch phase {
        case .routing(let routing): device == caller ? routing.callerGrace : nil
        case .initiating(let offering, _), .progressing(let offering), .ringing(let offering): device == caller ? offering.callerGrace : nil
        case .answered(let connecting): connecting.graces[device]
        case .established(let talking): talking.graces[device]
        case .ended, .modifying: nil
        }
    }

    private mutating func disconnected(_ device: Device, now: ClockReading) {
        guard state != .ended else { return }
        if device == caller || device == answerer {
            if grace(of: device) == nil {
                setGrace(of: device, to: now.instant.advanced(by: configuration.reconnectGrace))
            }
            return
        }
        // A device woken by push connects (a new session: "lost") before it relays.
        guard let status = modifyOffering({ offering -> CalleeStatus? in
            guard let status = offering.status[device], status != .pushed else { return nil }
            return offering.remove(device)
        }) ?? nil else { return }
        // A ringing device that drops leaves the ring set; the others keep ringing.
        formerCallees.insert(device)
        leaveCall(device, status: status, cause: .inactive, now: now)
        endIfNoCallees(code: .destinationUnavailable, message: "every callee device disconnected", now: now)
    }

    private mutating func lost(_ device: Device, now: ClockReading) {
        guard state != .ended else { return }
        if device == caller || device == answerer {
            end(.inactive, now: now)
        } else {
            disconnected(device, now: now)
        }
    }

    private mutating func checkEstablished(now: ClockReading) {
        guard case .answered(let connecting) = phase, connecting.callerLegConnected, connecting.answererLegConnected else { return }
        phase = .established(Talking(answerer: connecting.answerer, graces: connecting.graces))
        record.times.establishedTime = now.unixMilliseconds
        notify(caller, .established(callID: callID, time: now.unixMilliseconds))
        notify(connecting.answerer, .established(callID: callID, time: now.unixMilliseconds))
    }

    // MARK: Ending

    /// A callee device taken out of the ring set: `ended` to it if it knew of the call,
    /// and its leg closed.
    private mutating func leaveCall(_ device: Device, status: CalleeStatus?, cause: CallEndCause,
                                    error: SignalingMessage.CallError? = nil, now: ClockReading) {
        if case .offered = status {
            notify(device, .ended(callID: callID, cause: cause, error: error, details: details(for: device, answerer: answerer, endedAt: now.unixMilliseconds)))
        }
        output.append(.media(.closeLeg(callID: callID, leg: .callee(.device(device)))))
    }

    private mutating func endIfNoCallees(code: SignalingErrorCode, message: String, now: ClockReading) {
        guard let empty = modifyOffering({ $0.callees.isEmpty }), empty else { return }
        end(.error, error: .init(code: code, message: message), now: now)
    }

    /// Ends the call: `ended` to the caller, then to each callee device that knew of it,
    /// then (once legs were asked for) the media layer closes every leg.
    private mutating func end(_ cause: CallEndCause, error: SignalingMessage.CallError? = nil, now: ClockReading) {
        let informed: [Device]
        let legsRequested: Bool
        let answerer = self.answerer
        switch phase {
        case .ended, .modifying: return
        case .routing:
            informed = []
            legsRequested = false
        case .initiating(let offering, _), .progressing(let offering), .ringing(let offering):
            informed = offering.callees.filter { if case .offered = offering.status[$0] { true } else { false } }
            formerCallees.formUnion(offering.callees)
            legsRequested = true
        case .answered(let connecting):
            informed = [connecting.answerer]
            formerCallees.insert(connecting.answerer)
            legsRequested = true
        case .established(let talking):
            informed = [talking.answerer]
            formerCallees.insert(talking.answerer)
            legsRequested = true
        }
        phase = .ended
        record.times.endedTime = now.unixMilliseconds
        record.endCause = cause
        record.error = error.map(CallError.init)
        for device in [caller] + informed {
            notify(device, .ended(callID: callID, cause: cause, error: error, details: details(for: device, answerer: answerer, endedAt: now.unixMilliseconds)))
        }
        if legsRequested {
            output.append(.media(.closeAll(callID: callID)))
        }
    }

    /// The call's times as `device` saw them: the caller saw every step; a callee device
    /// saw the start, and the answer and establishment only if it answered.
    private func details(for device: Device, answerer: Device?, endedAt ended: Int64) -> CallTimes {
        if device == caller {
            var times = record.times
            times.endedTime = ended
            return times
        }
        let answered = device == answerer
        return CallTimes(
            startedTime: record.times.startedTime,
            answeredTime: answered ? record.times.answeredTime : nil,
            establishedTime: answered ? record.times.establishedTime : nil,
            endedTime: ended
        )
    }

    private mutating func notify(_ device: Device, _ notification: CallNotification) {
        output.append(.notify(.device(device), notification))
    }

    /// The actions of one event, with the record's new version when it changed (always
    /// for the first, when `before` is nil).
    private mutating func flush(_ before: CallRecord?) -> [CallAction] {
        record.state = phase.callState
        if record != before { output.append(.record(record)) }
        let actions = output
        output = []
        return actions
    }
}

extension String {
    /// Protocol text: control characters (which `text` forbids) replaced by spaces, then
    /// at most `maxBytes` bytes of UTF-8, cut at a character boundary.
    func prefixUTF8(_ maxBytes: Int) -> String {
        var clean = ""
        for scalar in unicodeScalars {
            clean.unicodeScalars.append(scalar.value < 0x20 || scalar.value == 0x7F ? " " : scalar)
        }
        guard clean.utf8.count > maxBytes else { return clean }
        var result = ""
        var used = 0
        for character in clean {
            let size = character.utf8.count
            if used + size > maxBytes { break }
            result.append(character)
            used += size
        }
        return result
    }
}
