public import ParleyCallModel
public import ParleyWireCore
public import ParleySignaling

/// One call on the server, sans-I/O: inputs with the time they happened in, actions
/// (notifications to parties, media instructions, record versions) and a deadline out.
///
/// States: routing -> initiating -> progressing -> ringing -> answered -> established, and
/// ended from any of them (docs/calls.md). The callees are parties: the callee user's
/// devices (the ring set), or the one SIP party of a call to a phone number or SIP
/// address, which goes through the same states on what the SIP side reports
/// (`CallInput.sip`). The state is one enum carrying each state's data (`Phase`), so
/// that, say, an answered call without an answering party cannot be represented. The
/// caller hears, in order and each at most once: media, progress, ringing, answered,
/// established, ended; every callee that was offered the call hears exactly one `ended`. The `result` or `error` reply to a request is not the machine's
/// business: `CallRegistry` sends it before the machine's actions.
///
/// parleyd calls `handleTimeout(now:)` when `nextDeadline` passes.
public struct CallStateMachine: Sendable {
    /// Where a callee party is in the call before the answer.
    private enum CalleeStatus: Sendable, Hashable {
        /// Its leg is being created; it has not been told about the call.
        case awaitingOffer
        /// It was offered the call (a device's `call.incoming`, a SIP party's INVITE);
        /// `acknowledged` once it alerts (`call.ack`, a 180 or 183).
        case offered(acknowledged: Bool)
        /// A device that was sent a push and has not relayed it: not connected, not told anything.
        case pushed
    }

    /// The router has not answered yet: no leg exists, nobody but the caller knows.
    private struct Routing: Sendable {
        var deadline: ContinuousClock.Instant
        var callerGrace: ContinuousClock.Instant?
    }

    /// Routed to callee parties, before the answer (initiating, progressing, ringing).
    private struct Offering: Sendable {
        /// Callee parties in the ring set, in ring order: devices of the callee user, or
        /// one SIP party.
        var callees: [Party]
        var status: [Party: CalleeStatus]
        var callerLegConnected = false
        /// Callee legs that are connected. A device may connect its leg before it answers
        /// (it has the anchor's offer from `call.incoming`); a SIP leg with early media too.
        var connectedCalleeLegs: Set<Party> = []
        /// Callees that answered the leg's offer before answering the call (a device in
        /// `call.ack`: its leg connects while it rings; a SIP party in a 18x: early media,
        /// bridged at once), with that SDP answer.
        var earlyAnswers: [Party: String] = [:]
        var ringDeadline: ContinuousClock.Instant
        /// When the caller's dropped connection runs out of time to resume.
        var callerGrace: ContinuousClock.Instant?

        mutating func remove(_ party: Party) -> CalleeStatus? {
            guard let status = status.removeValue(forKey: party) else { return nil }
            callees.removeAll { $0 == party }
            connectedCalleeLegs.remove(party)
            earlyAnswers[party] = nil
            return status
        }
    }

    /// A callee answered; the legs are connecting.
    private struct Connecting: Sendable {
        var answerer: Party
        var callerLegConnected: Bool
        var answererLegConnected: Bool
        var setupDeadline: ContinuousClock.Instant
        /// Reconnect graces of the caller and of an answering device (a SIP party has none).
        var graces: [Device: ContinuousClock.Instant]
    }

    /// Both legs connected: the parties talk.
    private struct Talking: Sendable {
        var answerer: Party
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
    /// Who places the call: a device, or a room calling a user out.
    public let origin: CallOrigin
    /// The caller's device; nil for a call the server places (a conference callout).
    public var caller: Device? { origin.device }
    /// Where notifications to the caller go.
    private var callerParty: Party { origin.party }
    public let configuration: CallConfiguration
    /// The call as the store keeps it; changes are also emitted as `CallAction.record`.
    public private(set) var record: CallRecord

    /// The call's state.
    public var state: CallState { phase.callState }

    private var phase: Phase
    private let headers: [String: String]
    /// The headers a callee is offered: `call.start`'s, or for a SIP party the router's
    /// (`dialSIP`), which its INVITE carries.
    private var calleeHeaders: [String: String]
    /// A SIP callee's `x-` headers from its 18x and 2xx, for the caller's `call.ringing`
    /// and `call.answered` (later responses add to earlier ones).
    private var farSideHeaders: [String: String] = [:]
    /// The name the caller asked its callees' devices to show (`call.start`'s `displayName`).
    private let callerDisplayName: String?
    private let video: Bool
    private let callerOffer: String
    private let startInstant: ContinuousClock.Instant
    private var maximumDeadline: ContinuousClock.Instant
    /// Callees that left the call (another answered, their leg failed, they dropped):
    /// history, for the error a late request of a device gets.
    private var formerCallees: Set<Party> = []
    /// The SDP answer the answering device gave in `call.ack`, if it answered media early.
    private var answererEarlyAnswer: String?
    /// The parties that hold the established call now (`call.hold`, a SIP far side's
    /// re-INVITE), by role: docs/calls.md, "Hold".
    public private(set) var holders: Set<SignalingMessage.CallHeld.Holder> = []

    private var output: [CallAction] = []

    /// Starts a call accepted from `call.start` (the registry has checked the call id and
    /// headers with `checkHeaders`) to the user `callee`, with the router's `decision` if
    /// it answered at once. Without one the machine waits in its routing state for
    /// `.routed(decision)` until `routingTimeout`. The actions end with the first record.
    public static func start(
        _ request: SignalingMessage.CallStart, from caller: Device, to callee: AppUser, decision: RoutingDecision?,
        now: ClockReading, configuration: CallConfiguration = CallConfiguration()
    ) -> (machine: CallStateMachine, actions: [CallAction]) {
        start(request, from: caller, callee: .user(callee.userID), decision: decision, now: now, configuration: configuration)
    }

    /// Starts a call accepted from `call.start` to its destination (`request.to`: a user, a
    /// phone number, a SIP address), which its record names as the callee; otherwise as
    /// `start(_:from:to:decision:now:configuration:)`.
    public static func start(
        _ request: SignalingMessage.CallStart, from caller: Device, decision: RoutingDecision?,
        now: ClockReading, configuration: CallConfiguration = CallConfiguration()
    ) -> (machine: CallStateMachine, actions: [CallAction]) {
        start(request, from: caller, callee: request.to, decision: decision, now: now, configuration: configuration)
    }

    private static func start(
        _ request: SignalingMessage.CallStart, from caller: Device, callee: PartyAddress, decision: RoutingDecision?,
        now: ClockReading, configuration: CallConfiguration
    ) -> (machine: CallStateMachine, actions: [CallAction]) {
        var machine = CallStateMachine(request, from: caller, to: callee, now: now, configuration: configuration)
        if let decision { machine.routed(decision, now: now) }
        let actions = machine.flush(nil)
        return (machine, actions)
    }

    private init(_ request: SignalingMessage.CallStart, from caller: Device, to callee: PartyAddress, now: ClockReading, configuration: CallConfiguration) {
        self.init(
            callID: request.callID, origin: .device(caller), offer: request.sdp, headers: request.headers, video: request.video,
            displayName: request.displayName, now: now, configuration: configuration,
            record: CallRecord(
                callID: request.callID, from: caller, to: callee, headers: request.headers, video: request.video,
                startedTime: now.unixMilliseconds))
    }

    private init(
        callID: String, origin: CallOrigin, offer: String, headers: [String: String], video: Bool, displayName: String?,
        now: ClockReading, configuration: CallConfiguration, record: CallRecord
    ) {
        self.callID = callID
        self.origin = origin
        self.configuration = configuration
        self.headers = headers
        self.calleeHeaders = headers
        self.callerDisplayName = displayName
        self.video = video
        self.callerOffer = offer
        self.startInstant = now.instant
        self.maximumDeadline = now.instant.advanced(by: configuration.maximumCallLength)
        self.phase = .routing(Routing(deadline: now.instant.advanced(by: configuration.routingTimeout)))
        self.record = record
    }

    /// Starts a conference callout: the room `room` of application `applicationKey` calls
    /// the user `callee` to bring them in (REST `conferenceCallout`). The callee's devices
    /// ring (or are pushed) as for any call, per `decision` (`ringDevices`, `pushDevices` or
    /// `reject`; the registry decides from presence); the device that answers has its leg
    /// seated in the room's mixer, and the call is established once that leg connects.
    /// The record's caller is the room (direction `conferenceToApp`). `displayName` is what
    /// the callee's devices show (the push's `name`, `call.incoming`'s `displayName`).
    public static func callout(
        callID: String, room: String, applicationKey: String, to callee: AppUser, headers: [String: String], displayName: String?,
        decision: RoutingDecision, now: ClockReading, configuration: CallConfiguration = CallConfiguration()
    ) -> (machine: CallStateMachine, actions: [CallAction]) {
        let record = CallRecord(
            callID: callID, applicationKey: applicationKey, direction: .conferenceToApp, caller: .conference(room), callerDeviceID: nil,
            callee: .user(callee.userID), headers: headers, video: false, startedTime: now.unixMilliseconds)
        var machine = CallStateMachine(
            callID: callID, origin: .room(RoomParty(callID: callID, room: room)), offer: "", headers: headers, video: false,
            displayName: displayName, now: now, configuration: configuration, record: record)
        machine.routed(decision, now: now)
        let actions = machine.flush(nil)
        return (machine, actions)
    }

    /// Starts a call that came in over SIP (a trunk's INVITE to one of the application's
    /// numbers, a SIP peer's INVITE): `caller` is the far side, its `address` the number or
    /// SIP address it calls from; `offer` is the INVITE's SDP; `target` the app user or
    /// conference room it goes to, as routing placed it (`decision`: `ringDevices`,
    /// `pushDevices`, `joinRoom` or `reject`), or the phone number or SIP address it is
    /// bridged to (`dialNumber`, `dialSIP`: a call out, docs/calls.md "Bridged calls").
    /// The caller's plain RTP leg answers the offer (`answerSIPCaller`); the callee devices
    /// ring as for any call (or the call out's INVITE goes), and the caller hears each
    /// step through the SIP user agent (180, 183 with early media, 200 with the answer, a
    /// final failure or BYE at the end). `displayName` is what the callee's devices show
    /// for the caller.
    public static func inbound(
        callID: String, from caller: SIPParty, applicationKey: String, to target: PartyAddress, offer: String,
        headers: [String: String], displayName: String?, decision: RoutingDecision, now: ClockReading,
        configuration: CallConfiguration = CallConfiguration()
    ) -> (machine: CallStateMachine, actions: [CallAction]) {
        let direction = CallDirection(bridgedFrom: caller.address.kind, to: target.kind)
            ?? CallDirection(inboundFrom: caller.address.kind, toRoom: target.kind == .conference) ?? .sipToApp
        let record = CallRecord(
            callID: callID, applicationKey: applicationKey, direction: direction, caller: caller.address, callerDeviceID: nil,
            callee: target, headers: headers, video: false, startedTime: now.unixMilliseconds)
        var machine = CallStateMachine(
            callID: callID, origin: .sip(caller), offer: offer, headers: headers, video: false, displayName: displayName,
            now: now, configuration: configuration, record: record)
        machine.routed(decision, now: now)
        let actions = machine.flush(nil)
        return (machine, actions)
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
        case .initiating(let offering, _), .progressing(let offering), .ringing(let offering): callerDevices + offering.callees.compactMap(\.device)
        case .answered(let connecting): callerDevices + [connecting.answerer].compactMap(\.device)
        case .established(let talking): callerDevices + [talking.answerer].compactMap(\.device)
        case .routing, .ended, .modifying: callerDevices
        }
    }

    private var callerDevices: [Device] { caller.map { [$0] } ?? [] }

    /// Whether `device` is the device that started the call.
    private func isCaller(_ device: Device) -> Bool { origin == .device(device) }

    /// The callee that answered, once one did (nil after the end).
    private var answerer: Party? {
        switch phase {
        case .answered(let connecting): connecting.answerer
        case .established(let talking): talking.answerer
        default: nil
        }
    }

    /// Whether the call still waits for its router's decision.
    public var isRouting: Bool {
        if case .routing = phase { return true }
        return false
    }

    /// Brings the end of the call's maximum length forward to `deadline` (an application's
    /// maximum duration of dialled calls, `DiallingSettings`); a later one changes nothing.
    /// The call then ends with `timeout`, as at `maximumCallLength`.
    public mutating func capLength(at deadline: ContinuousClock.Instant) {
        if deadline < maximumDeadline { maximumDeadline = deadline }
    }

    /// Brings the end of ringing forward to `deadline` (a backend's `dialTimeout` for the call
    /// out of a bridge); a later one, or a call no longer ringing, changes nothing. The
    /// call then ends as at `ringTimeout` (`noAnswer`, or `timeout` once it rang).
    public mutating func capRinging(at deadline: ContinuousClock.Instant) {
        _ = modifyOffering { offering in
            if deadline < offering.ringDeadline { offering.ringDeadline = deadline }
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
        case .hold(let device, let held): try hold(from: device, held: held, now: now)
        case .pushRelayed(let device): try pushRelayed(device, now: now)
        case .media(let event): handleMedia(event, now: now)
        case .deviceDisconnected(let device): disconnected(device, now: now)
        case .deviceLost(let device): lost(device, now: now)
        case .deviceReconnected(let device): setGrace(of: device, to: nil)
        case .sip(let party, let event): handleSIP(event, from: party, now: now)
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
        if let kind = decision.refusedKind(sipDialling: configuration.sipDialling) {
            end(.error, error: .init(code: .notImplemented, message: RoutingDecision.unplacedMessage(kind)), now: now)
            return
        }
        switch (origin, decision) {
        case (.room, .joinRoom), (.room, .dialNumber), (.room, .dialSIP):
            end(.error, error: .init(code: .badRequest, message: "a conference callout calls app users only"), now: now)
            return
        default:
            break
        }
        switch decision {
        case .reject(let error):
            end(.error, error: error, now: now)
        case .joinRoom(let room):
            let party = Party.room(RoomParty(callID: callID, room: room))
            let offering = Offering(callees: [party], status: [party: .awaitingOffer],
                                    ringDeadline: startInstant.advanced(by: configuration.ringTimeout), callerGrace: routing.callerGrace)
            phase = .initiating(offering, relayedEarly: false)
            if case .sip = origin {
                output.append(.media(.answerSIPCaller(callID: callID, offer: callerOffer, room: room)))
            } else {
                output.append(.media(.joinRoom(callID: callID, offer: callerOffer, room: room)))
            }
        case .dialNumber(let route):
            dial(.phone(route), headers: headers, routing: routing, now: now)
        case .dialSIP(let uri, let sipHeaders):
            dial(.uri(uri), headers: sipHeaders, routing: routing, now: now)
        case .ringDevices(let devices), .pushDevices(let devices):
            let pushed: Bool
            if case .pushDevices = decision { pushed = true } else { pushed = false }
            var offering = Offering(callees: [], status: [:], ringDeadline: startInstant.advanced(by: configuration.ringTimeout),
                                    callerGrace: routing.callerGrace)
            for device in devices where !isCaller(device) && offering.status[.device(device)] == nil {
                offering.callees.append(.device(device))
                offering.status[.device(device)] = pushed ? .pushed : .awaitingOffer
            }
            guard !offering.callees.isEmpty else {
                end(.error, error: .init(code: .destinationUnavailable, message: "destination user has no connected device"), now: now)
                return
            }
            if case .room(let room) = origin {
                // The room has no leg to make: the callees are offered the call at once, and
                // the leg of the one that answers is seated in the room's mixer.
                offering.callerLegConnected = true
                phase = .progressing(offering)
                record.times.progressedTime = now.unixMilliseconds
                output.append(.media(.seatCallout(callID: callID, room: room.room)))
                for party in offering.callees where offering.status[party] == .awaitingOffer {
                    output.append(.media(.offerCallee(callID: callID, party: party)))
                }
            } else if case .sip = origin {
                phase = .initiating(offering, relayedEarly: false)
                output.append(.media(.answerSIPCaller(callID: callID, offer: callerOffer, room: nil)))
            } else {
                phase = .initiating(offering, relayedEarly: false)
                output.append(.media(.answerCaller(callID: callID, offer: callerOffer, topology: .relay)))
            }
            if pushed {
                output.append(.push(PushInstruction(
                    callID: callID, devices: offering.callees.compactMap(\.device), from: record.caller, headers: headers,
                    video: video, issuedTime: now.unixMilliseconds,
                    expiresTime: record.times.startedTime + Self.milliseconds(configuration.ringTimeout),
                    callerDisplayName: callerDisplayName)))
            }
        }
    }

    /// What a call in over SIP routed back to its own caller is refused with.
    static let bridgeLoop = "the call would go out to the address it came in from"

    /// What a call to a phone number without a CLI is refused with.
    static let missingCLI = "a call to a phone number needs a CLI: give cli in call.start, or set the application's default CLI"

    /// Routed to a phone number or SIP address: the call's one callee is its SIP party,
    /// whose leg is asked for once the caller's is ready (as for devices). A phone call
    /// without a CLI ends at once and nothing is dialled.
    private mutating func dial(_ destination: SIPParty.Destination, headers: [String: String], routing: Routing, now: ClockReading) {
        if case .phone(let route) = destination, route.callerID == nil {
            end(.error, error: .init(code: .badRequest, message: Self.missingCLI), now: now)
            return
        }
        let callee = SIPParty(callID: callID, destination: destination)
        if case .sip(let caller) = origin, caller == callee {
            // The caller's own address: the INVITE would come straight back as a new call in.
            end(.error, error: .init(code: .badRequest, message: Self.bridgeLoop), now: now)
            return
        }
        let party = Party.sip(callee)
        calleeHeaders = headers
        let offering = Offering(callees: [party], status: [party: .awaitingOffer],
                                ringDeadline: startInstant.advanced(by: configuration.ringTimeout), callerGrace: routing.callerGrace)
        phase = .initiating(offering, relayedEarly: false)
        if case .sip = origin {
            // A bridge: the caller's plain RTP leg answers its INVITE, and the call out's
            // leg is offered once that answer chose the codec to offer first.
            output.append(.media(.answerSIPCaller(callID: callID, offer: callerOffer, room: nil)))
        } else {
            output.append(.media(.answerCaller(callID: callID, offer: callerOffer, topology: .gateway)))
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
            if let status = offering.status[.device(device)] { return status }
        case .answered, .established:
            if .device(device) == answerer { return .offered(acknowledged: true) }
        case .routing, .ended, .modifying:
            break
        }
        if formerCallees.contains(.device(device)) {
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
        modifyOffering { $0.status[.device(device)] = .offered(acknowledged: true) }
        ringCaller(now: now)
    }

    /// A ringing device answered its leg's offer in `call.ack`: the leg connects now and
    /// carries audio only once this device answers the call. The same answer again (a
    /// request resent after a reconnect) changes nothing; a different one is refused.
    private mutating func answerMediaEarly(_ device: Device, sdp: String) throws(CallingError) {
        let given: String??
        switch phase {
        case .progressing(let offering), .ringing(let offering): given = .some(offering.earlyAnswers[.device(device)])
        default: given = .none
        }
        guard let given else {
            if .device(device) == answerer, sdp == answererEarlyAnswer { return }
            throw CallingError(.invalidState, callID: callID, "cannot answer media in call.ack: the call was answered")
        }
        if let given {
            if given == sdp { return }
            throw CallingError(.invalidState, callID: callID, "cannot answer media twice: this device's call.ack already had an SDP answer")
        }
        _ = modifyOffering { $0.earlyAnswers[.device(device)] = sdp }
        output.append(.media(.acceptAnswer(callID: callID, party: .device(device), answer: sdp)))
    }

    /// The first callee acknowledged: the caller hears `ringing` (only from progressing).
    private mutating func ringCaller(now: ClockReading) {
        guard case .progressing(let offering) = phase else { return }
        phase = .ringing(offering)
        record.times.rungTime = now.unixMilliseconds
        notify(callerParty, .ringing(callID: callID, time: now.unixMilliseconds, headers: farSideHeaders))
    }

    /// A pushed device relayed its payload: it now waits for its leg like a connected
    /// callee, and counts as acknowledged (the caller hears `call.ringing`). Relaying
    /// again, or after `call.incoming`, changes nothing.
    private mutating func pushRelayed(_ device: Device, now: ClockReading) throws(CallingError) {
        guard case .pushed = try calleeStatus(of: device, to: "relay a push for") else { return }
        modifyOffering { $0.status[.device(device)] = .awaitingOffer }
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
    public func isFormerCallee(_ device: Device) -> Bool { formerCallees.contains(.device(device)) }

    /// The call's times as a callee device that relays a push late sees them.
    public func detailsForLateRelay(_ device: Device, at time: Int64) -> CallTimes {
        details(for: .device(device), answerer: answerer, endedAt: time)
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
        let earlyAnswer = offering.earlyAnswers[.device(device)]
        switch (sdp, earlyAnswer) {
        case (nil, nil):
            throw CallingError(.badRequest, callID: callID, "cannot answer without sdp: this device gave no SDP answer in call.ack")
        case (let sdp?, let early?) where sdp != early:
            throw CallingError(.invalidState, callID: callID, "cannot answer with a new sdp: this device's call.ack already had an SDP answer")
        default:
            break
        }
        take(answerFrom: .device(device), offering: offering, sdp: sdp, earlyAnswer: earlyAnswer, bridged: false, now: now)
    }

    /// A callee answered the call: it becomes the answerer (its device's graces start with
    /// the caller's), everyone hears `answered`, the other callees leave, its leg takes
    /// `sdp` unless it answered media early, and the legs are bridged unless they were
    /// already (SIP early media).
    private mutating func take(answerFrom party: Party, offering: Offering, sdp: String?, earlyAnswer: String?, bridged: Bool, now: ClockReading) {
        var graces: [Device: ContinuousClock.Instant] = [:]
        if let caller { graces[caller] = offering.callerGrace }
        phase = .answered(Connecting(
            answerer: party, callerLegConnected: offering.callerLegConnected,
            answererLegConnected: offering.connectedCalleeLegs.contains(party),
            setupDeadline: now.instant.advanced(by: configuration.mediaSetupTimeout), graces: graces))
        record.answeredDeviceID = party.device?.deviceID
        record.times.answeredTime = now.unixMilliseconds
        notify(callerParty, .answered(callID: callID, time: now.unixMilliseconds, headers: farSideHeaders))
        notify(party, .answered(callID: callID, time: now.unixMilliseconds))
        for other in offering.callees where other != party {
            formerCallees.insert(other)
            leaveCall(other, status: offering.status[other], cause: .otherDeviceAnswered, now: now)
        }
        if earlyAnswer == nil, let sdp {
            output.append(.media(.acceptAnswer(callID: callID, party: party, answer: sdp)))
        }
        answererEarlyAnswer = earlyAnswer
        if !bridged { output.append(.media(.bridge(callID: callID, party: party))) }
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
        if isCaller(device) {
            try requireNotEnded("hang up")
            end(isAnswered ? .hungUp : .canceled, now: now)
            return
        }
        let status = try calleeStatus(of: device, to: "hang up")
        if .device(device) == answerer {
            end(.hungUp, now: now)
        } else if case .offered = status, !isAnswered {
            end(.denied, now: now)
        } else {
            throw CallingError(.invalidState, callID: callID, "cannot hang up: call.incoming not sent yet")
        }
    }

    private mutating func sendDTMF(from device: Device, digits: String) throws(CallingError) {
        try requireNotEnded("send DTMF")
        guard isCaller(device) || .device(device) == answerer else {
            _ = try calleeStatus(of: device, to: "send DTMF")
            throw CallingError(.invalidState, callID: callID, "cannot send DTMF: the call is not established")
        }
        guard case .established(let talking) = phase else {
            throw CallingError(.invalidState, callID: callID, "cannot send DTMF: the call is not established")
        }
        // Toward the other party: a SIP callee gets them as RFC 4733 events on its RTP leg.
        let leg: CallLegID = isCaller(device) ? .callee(talking.answerer) : .caller
        output.append(.media(.sendDTMF(callID: callID, leg: leg, digits: digits)))
    }

    // MARK: Hold

    /// `call.hold` from the caller's device or the answering device of an established
    /// call. Holding twice (or resuming a call this party does not hold) changes nothing
    /// and is accepted. A room call (to a room, or a room's callout) cannot be held
    /// (`not_implemented`): the room's mixer has its own hold (REST), and nobody is there
    /// to be told.
    private mutating func hold(from device: Device, held: Bool, now: ClockReading) throws(CallingError) {
        let verb = held ? "hold" : "resume"
        try requireNotEnded(verb)
        guard isCaller(device) || .device(device) == answerer else {
            _ = try calleeStatus(of: device, to: verb)
            throw CallingError(.invalidState, callID: callID, "cannot \(verb): the call is not established")
        }
        guard case .established(let talking) = phase else {
            throw CallingError(.invalidState, callID: callID, "cannot \(verb): the call is not established")
        }
        if talking.answerer.room != nil || origin.party.room != nil {
            throw CallingError(.notImplemented, callID: callID, "a conference room call cannot be held (the REST API holds participants)")
        }
        setHold(held, by: isCaller(device) ? .caller : .callee, now: now)
    }

    /// Records that the party of role `holder` holds (or resumed) the call and tells the
    /// other party; the media layer hears the call's new hold when it changed.
    private mutating func setHold(_ held: Bool, by holder: SignalingMessage.CallHeld.Holder, now: ClockReading) {
        guard case .established(let talking) = phase, holders.contains(holder) != held else { return }
        let silencedBefore = isSilenced(talking)
        let heldBefore = !holders.isEmpty
        if held { holders.insert(holder) } else { holders.remove(holder) }
        let other = holder == .caller ? talking.answerer : callerParty
        notify(other, .held(callID: callID, held: held, by: holder, time: now.unixMilliseconds))
        if heldBefore != !holders.isEmpty || silencedBefore != isSilenced(talking) {
            output.append(.media(.setHold(callID: callID, held: !holders.isEmpty, silenced: isSilenced(talking))))
        }
    }

    /// Whether a device party holds the call: then a gateway sends silence both ways.
    private func isSilenced(_ talking: Talking) -> Bool {
        holders.contains { holder in
            switch holder {
            case .caller: caller != nil
            case .callee: talking.answerer.device != nil
            }
        }
    }

    // MARK: The SIP side

    /// What the SIP side reports about the call's SIP party. Before the answer: provisional
    /// responses ring the caller (a 18x's SDP is early media, bridged at once), a 2xx answers,
    /// a final failure ends the call with the cause its status maps to. After the answer:
    /// BYE hangs up, a failure of the dialog ends with `sip_error`. Reports about another
    /// party, one not yet offered (no INVITE was asked for), or that no longer fit are ignored.
    private mutating func handleSIP(_ event: SIPCallEvent, from sip: SIPParty, now: ClockReading) {
        let party = Party.sip(sip)
        if case .sip(let caller) = origin, caller == sip {
            callerReported(event, now: now)
            return
        }
        switch phase {
        case .progressing(let offering), .ringing(let offering):
            guard case .offered = offering.status[party] else { return }
            switch event {
            case .placed(let sipCallID):
                if record.sipCallID == nil { record.sipCallID = String(sipCallID.prefix(256)) }
            case .trying:
                break
            case .ringing(let earlySDP, let headers):
                farSideHeaders.merge(headers) { _, new in new }
                if let earlySDP { answerSIPMediaEarly(party, sdp: earlySDP, now: now) }
                _ = modifyOffering { $0.status[party] = .offered(acknowledged: true) }
                ringCaller(now: now)
            case .answered(let sdp, let headers):
                farSideHeaders.merge(headers) { _, new in new }
                record.sipStatus = 200
                let earlyAnswer = offering.earlyAnswers[party]
                guard earlyAnswer != nil || sdp != nil else {
                    end(.error, error: .init(code: .mediaFailed, message: "the SIP answer (2xx) carried no SDP"), now: now)
                    return
                }
                // The first SDP is the answer: a 2xx after early media keeps the 18x's.
                take(answerFrom: party, offering: offering, sdp: sdp, earlyAnswer: earlyAnswer, bridged: earlyAnswer != nil, now: now)
            case .failed(let status, let reason):
                if (100...699).contains(status) { record.sipStatus = status }
                let ending = SIPCallEvent.ending(status: status, reason: reason)
                end(ending.cause, error: ending.error, now: now)
            case .hungUp:
                end(.denied, now: now)
            case .dtmf, .held:
                break  // digits (or a hold) before the answer go nowhere: the caller's call is not established
            }
        case .answered, .established:
            guard party == answerer else { return }
            switch event {
            case .placed, .trying, .ringing, .answered:
                break  // a late provisional response, or a 2xx retransmission
            case .failed(let status, let reason):
                end(.error, error: SIPCallEvent.sipError(status: status, reason: reason), now: now)
            case .hungUp:
                end(.hungUp, now: now)
            case .held(let held):
                // Told to a device caller only: a bridge does not pass one leg's hold to the other.
                if state == .established, caller != nil { setHold(held, by: .callee, now: now) }
            case .dtmf(let digits):
                if case .sip = origin {
                    // A bridge: INFO digits go on as RFC 4733 events (the gateway carries those itself).
                    output.append(.media(.sendDTMF(callID: callID, leg: .caller, digits: digits)))
                } else {
                    dtmfReceived(digits, from: .callee(party), now: now)
                }
            }
        case .routing, .initiating, .ended, .modifying:
            break
        }
    }

    /// What the SIP side reports about the caller of a call that came in over SIP: its
    /// CANCEL or BYE ends the call (`canceled` before the answer, `hungUp` after), a failure
    /// of its dialog (no ACK to our 200) ends it with `sip_error`, and its SIP INFO digits go
    /// to the answering device. Its responses are ours to send, so nothing else comes.
    private mutating func callerReported(_ event: SIPCallEvent, now: ClockReading) {
        guard state != .ended else { return }
        switch event {
        case .hungUp:
            end(isAnswered ? .hungUp : .canceled, now: now)
        case .failed(let status, let reason):
            end(.error, error: SIPCallEvent.sipError(status: status, reason: reason), now: now)
        case .dtmf(let digits):
            guard state == .established, let answerer else { break }
            if answerer.sip != nil {
                output.append(.media(.sendDTMF(callID: callID, leg: .callee(answerer), digits: digits)))
            } else {
                dtmfReceived(digits, from: .caller, now: now)
            }
        case .held(let held):
            // Told to an answering device only: a bridge does not pass one leg's hold to the other.
            if state == .established, answerer?.device != nil { setHold(held, by: .caller, now: now) }
        case .placed, .trying, .ringing, .answered:
            break
        }
    }

    /// Digits one side of a gateway call sent (RFC 4733 or SIP INFO), for the other: the far
    /// side's go to the caller's device; the digits of a caller that came in over SIP go to
    /// the answering device. A device's own digits are on their way through the gateway.
    private mutating func dtmfReceived(_ digits: String, from leg: CallLegID, now: ClockReading) {
        switch leg {
        case .callee:
            notify(callerParty, .dtmf(callID: callID, digits: digits, time: now.unixMilliseconds))
        case .caller:
            guard case .sip = origin, let answerer, answerer.device != nil else { return }
            notify(answerer, .dtmf(callID: callID, digits: digits, time: now.unixMilliseconds))
        }
    }

    /// The first SDP of the SIP side (in a 180 or 183) answers its leg's offer; the leg is
    /// bridged at once so the caller hears the far side before the answer. Later SDPs are
    /// ignored (RFC 3261 §13.2.1: the first is the answer).
    private mutating func answerSIPMediaEarly(_ party: Party, sdp: String, now: ClockReading) {
        let first = modifyOffering { offering -> Bool in
            guard offering.earlyAnswers[party] == nil else { return false }
            offering.earlyAnswers[party] = sdp
            return true
        }
        guard first == true else { return }
        output.append(.media(.acceptAnswer(callID: callID, party: party, answer: sdp)))
        output.append(.media(.bridge(callID: callID, party: party)))
        // A caller that came in over SIP hears the far side only once it has our SDP: its
        // user agent sends it in a 183 now, not in the 200.
        if case .sip = origin { notify(callerParty, .earlyMedia(callID: callID, time: now.unixMilliseconds)) }
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
            notify(callerParty, .mediaReady(callID: callID, sdp: sdp))
            notify(callerParty, .progress(callID: callID, time: now.unixMilliseconds))
            if let room = offering.callees.first(where: { $0.room != nil }) {
                // A room answers as soon as the caller's leg is in its mixer: nothing rings,
                // and it has no leg of its own to connect (established once the caller's is).
                var joined = offering
                joined.status[room] = .offered(acknowledged: true)
                joined.connectedCalleeLegs.insert(room)
                take(answerFrom: room, offering: joined, sdp: nil, earlyAnswer: nil, bridged: true, now: now)
                return
            }
            for party in offering.callees where offering.status[party] == .awaitingOffer {
                output.append(.media(.offerCallee(callID: callID, party: party)))
            }
            if relayedEarly { ringCaller(now: now) }
        case .calleeLegReady(let party, let sdp):
            // Offers are asked for only once the caller's leg is ready (progressing).
            guard state == .progressing || state == .ringing else { return }
            let offered = modifyOffering { offering -> Bool in
                guard offering.status[party] == .awaitingOffer else { return false }
                offering.status[party] = .offered(acknowledged: false)
                return true
            }
            guard offered == true else { return }
            notify(party, .offered(CallOffer(
                callID: callID, from: record.caller, headers: calleeHeaders, video: video,
                time: record.times.startedTime, sdp: sdp, displayName: callerDisplayName, cli: party.sip?.cli)))
        case .legConnected(let leg):
            legConnected(leg, now: now)
        case .legFailed(let leg, let reason):
            if isPartyLeg(leg) {
                if state == .established {
                    end(.inactive, now: now)
                } else {
                    end(.error, error: .init(code: .mediaFailed, message: "\(leg) media leg failed: \(reason)".prefixUTF8(1024)), now: now)
                }
            } else if case .callee(let party) = leg {
                guard let status = modifyOffering({ $0.remove(party) }) ?? nil else { return }
                formerCallees.insert(party)
                leaveCall(party, status: status, cause: .error,
                          error: .init(code: .mediaFailed, message: "media leg failed: \(reason)".prefixUTF8(1024)), now: now)
                let message = party.sip == nil ? "no callee device could be offered the call" : "the SIP leg could not be set up: \(reason)"
                endIfNoCallees(code: .mediaFailed, message: message.prefixUTF8(1024), now: now)
            }
        case .legInactive(let leg):
            if isPartyLeg(leg) { end(.inactive, now: now) }
        case .dtmfReceived(let leg, let digits):
            // Digits go across: the far side's to the caller's device, a SIP caller's to the
            // answering device (`dtmfReceived`); a device's own are on their way already.
            if state == .established { dtmfReceived(digits, from: leg, now: now) }
        }
    }

    private mutating func legConnected(_ leg: CallLegID, now: ClockReading) {
        switch (phase, leg) {
        case (.answered(var connecting), .caller):
            connecting.callerLegConnected = true
            phase = .answered(connecting)
        case (.answered(var connecting), .callee(let party)):
            guard party == connecting.answerer else { return }
            connecting.answererLegConnected = true
            phase = .answered(connecting)
        case (_, .caller):
            _ = modifyOffering { $0.callerLegConnected = true }
        case (_, .callee(let party)):
            _ = modifyOffering { offering in
                if offering.status[party] != nil { offering.connectedCalleeLegs.insert(party) }
            }
        }
        checkEstablished(now: now)
    }

    /// The caller's leg, or the answering callee's: the legs whose loss ends the call.
    private func isPartyLeg(_ leg: CallLegID) -> Bool {
        switch leg {
        case .caller: true
        case .callee(let party): answerer != nil && party == answerer
        }
    }

    private mutating func setGrace(of device: Device, to deadline: ContinuousClock.Instant?) {
        switch phase {
        case .routing(var routing):
            guard isCaller(device) else { return }
            routing.callerGrace = deadline
            phase = .routing(routing)
        case .initiating, .progressing, .ringing:
            guard isCaller(device) else { return }
            _ = modifyOffering { $0.callerGrace = deadline }
        case .answered(var connecting):
            guard isCaller(device) || .device(device) == connecting.answerer else { return }
            connecting.graces[device] = deadline
            phase = .answered(connecting)
        case .established(var talking):
            guard isCaller(device) || .device(device) == talking.answerer else { return }
            talking.graces[device] = deadline
            phase = .established(talking)
        case .ended, .modifying:
            break
        }
    }

    private func grace(of device: Device) -> ContinuousClock.Instant? {
        switch phase {
        case .routing(let routing): isCaller(device) ? routing.callerGrace : nil
        case .initiating(let offering, _), .progressing(let offering), .ringing(let offering): isCaller(device) ? offering.callerGrace : nil
        case .answered(let connecting): connecting.graces[device]
        case .established(let talking): talking.graces[device]
        case .ended, .modifying: nil
        }
    }

    private mutating func disconnected(_ device: Device, now: ClockReading) {
        guard state != .ended else { return }
        if isCaller(device) || .device(device) == answerer {
            if grace(of: device) == nil {
                setGrace(of: device, to: now.instant.advanced(by: configuration.reconnectGrace))
            }
            return
        }
        // A device woken by push connects (a new session: "lost") before it relays.
        let party = Party.device(device)
        guard let status = modifyOffering({ offering -> CalleeStatus? in
            guard let status = offering.status[party], status != .pushed else { return nil }
            return offering.remove(party)
        }) ?? nil else { return }
        // A ringing device that drops leaves the ring set; the others keep ringing.
        formerCallees.insert(party)
        leaveCall(party, status: status, cause: .inactive, now: now)
        endIfNoCallees(code: .destinationUnavailable, message: "every callee device disconnected", now: now)
    }

    private mutating func lost(_ device: Device, now: ClockReading) {
        guard state != .ended else { return }
        if isCaller(device) || .device(device) == answerer {
            end(.inactive, now: now)
        } else {
            disconnected(device, now: now)
        }
    }

    private mutating func checkEstablished(now: ClockReading) {
        guard case .answered(let connecting) = phase, connecting.callerLegConnected, connecting.answererLegConnected else { return }
        phase = .established(Talking(answerer: connecting.answerer, graces: connecting.graces))
        record.times.establishedTime = now.unixMilliseconds
        notify(callerParty, .established(callID: callID, time: now.unixMilliseconds))
        notify(connecting.answerer, .established(callID: callID, time: now.unixMilliseconds))
    }

    // MARK: Ending

    /// A callee taken out of the ring set: `ended` to it if it knew of the call, and its
    /// leg closed.
    private mutating func leaveCall(_ party: Party, status: CalleeStatus?, cause: CallEndCause,
                                    error: SignalingMessage.CallError? = nil, now: ClockReading) {
        if case .offered = status {
            notify(party, .ended(callID: callID, cause: cause, error: error, details: details(for: party, answerer: answerer, endedAt: now.unixMilliseconds)))
        }
        output.append(.media(.closeLeg(callID: callID, leg: .callee(party))))
    }

    private mutating func endIfNoCallees(code: SignalingErrorCode, message: String, now: ClockReading) {
        guard let empty = modifyOffering({ $0.callees.isEmpty }), empty else { return }
        end(.error, error: .init(code: code, message: message), now: now)
    }

    /// Ends the call: `ended` to the caller, then to each callee that knew of it, then
    /// (once legs were asked for) the media layer closes every leg.
    private mutating func end(_ cause: CallEndCause, error: SignalingMessage.CallError? = nil, now: ClockReading) {
        let informed: [Party]
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
        for party in [callerParty] + informed {
            notify(party, .ended(callID: callID, cause: cause, error: error, details: details(for: party, answerer: answerer, endedAt: now.unixMilliseconds)))
        }
        if legsRequested {
            output.append(.media(.closeAll(callID: callID)))
        }
    }

    /// The call's times as `party` saw them: the caller saw every step; a callee saw the
    /// start, and the answer and establishment only if it answered.
    private func details(for party: Party, answerer: Party?, endedAt ended: Int64) -> CallTimes {
        if party == callerParty {
            var times = record.times
            times.endedTime = ended
            return times
        }
        let answered = party == answerer
        return CallTimes(
            startedTime: record.times.startedTime,
            answeredTime: answered ? record.times.answeredTime : nil,
            establishedTime: answered ? record.times.establishedTime : nil,
            endedTime: ended
        )
    }

    private mutating func notify(_ party: Party, _ notification: CallNotification) {
        output.append(.notify(party, notification))
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
