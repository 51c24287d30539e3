import ParleyWireCore
public import ParleySignaling

/// One call on the server, sans-I/O: inputs with the time they happened in, actions
/// (messages to devices, media instructions, record versions) and a deadline out.
///
/// States: initiating -> progressing -> ringing -> answered -> established, and ended
/// from any of them (docs/calls.md). The caller's events go out in the protocol's order
/// (`call.media`, `call.progress`, `call.ringing`, `call.answered`, `call.established`,
/// `call.ended`, each at most once); every callee device that got `call.incoming` gets
/// exactly one `call.ended`. The `result` or `error` reply to a request is not the
/// machine's business: `CallRegistry` sends it before the machine's actions.
///
/// parleyd calls `handleTimeout(now:)` when `nextDeadline` passes.
public struct CallStateMachine: Sendable {
    /// Where a callee device is in the call.
    private enum CalleeStatus: Sendable, Hashable {
        /// Its leg is being created; it has not been told about the call.
        case awaitingOffer
        /// It got `call.incoming`; `acknowledged` once it sent `call.ack`.
        case offered(acknowledged: Bool)
        /// It was sent a push and has not relayed it: not connected, not told anything.
        case pushed
    }

    /// The call's id (from `call.start`).
    public let callID: String
    /// The caller's device.
    public let caller: Device
    public let configuration: CallConfiguration
    /// The call as the store keeps it; changes are also emitted as `CallAction.record`.
    public private(set) var record: CallRecord

    /// The call's state.
    public var state: CallState { record.state }

    private let headers: [String: String]
    private let video: Bool
    private let callerOffer: String
    /// Callee devices still in the call, in ring order; after the answer only the answering one.
    private var callees: [Device] = []
    private var calleeStatus: [Device: CalleeStatus] = [:]
    /// Callee devices that left the call (another answered, their leg failed, they dropped).
    private var formerCallees: Set<Device> = []
    private var answeredDevice: Device?
    private var anyAcknowledged = false
    /// A pushed device relayed before the caller's leg was ready.
    private var relayedBeforeProgress = false
    private var legsRequested = false
    private var callerLegConnected = false
    /// Callee legs whose ICE and DTLS are done. A device may connect its leg before it
    /// answers (it has the anchor's offer from `call.incoming`).
    private var connectedCalleeLegs: Set<Device> = []

    private var ringDeadline: ContinuousClock.Instant?
    private var setupDeadline: ContinuousClock.Instant?
    private var maximumDeadline: ContinuousClock.Instant?
    private var graceDeadlines: [Device: ContinuousClock.Instant] = [:]

    private var output: [CallAction] = []

    private init(callID: String, caller: Device, callee: AppUser, start: SignalingMessage.CallStart, now: CallTime, configuration: CallConfiguration) {
        self.callID = callID
        self.caller = caller
        self.configuration = configuration
        self.headers = start.headers
        self.video = start.video
        self.callerOffer = start.sdp
        self.record = CallRecord(
            callID: callID, caller: caller.user, callerDeviceID: caller.deviceID, callee: callee,
            headers: start.headers, video: start.video, startedTime: now.unixMillis
        )
    }

    /// Starts a call accepted from `call.start` (the registry has checked the call id and
    /// headers with `checkHeaders`). For a reachable callee the first action asks the
    /// media layer for the caller's leg; otherwise the call ends at once with `error`.
    public static func start(
        _ request: SignalingMessage.CallStart, from caller: Device, to callee: AppUser, reach: CalleeReach,
        now: CallTime, configuration: CallConfiguration = CallConfiguration()
    ) -> (machine: CallStateMachine, actions: [CallAction]) {
        var machine = CallStateMachine(callID: request.callID, caller: caller, callee: callee, start: request, now: now, configuration: configuration)
        machine.maximumDeadline = now.instant.advanced(by: configuration.maximumCallLength)
        switch reach {
        case .unknownUser:
            machine.end(.error, error: .init(code: .destinationNotFound, message: "destination user not found"), now: now)
        case .unavailable, .devices([]), .push([]):
            machine.end(.error, error: .init(code: .destinationUnavailable, message: "destination user has no connected device"), now: now)
        case .push(let devices):
            for device in devices where device != caller && machine.calleeStatus[device] == nil {
                machine.callees.append(device)
                machine.calleeStatus[device] = .pushed
            }
            if machine.callees.isEmpty {
                machine.end(.error, error: .init(code: .destinationUnavailable, message: "destination user has no connected device"), now: now)
            } else {
                let ringDeadline = now.instant.advanced(by: configuration.ringTimeout)
                machine.ringDeadline = ringDeadline
                machine.legsRequested = true
                machine.output.append(.media(.answerCaller(callID: request.callID, offer: request.sdp)))
                machine.output.append(.push(PushInstruction(
                    callID: request.callID, devices: machine.callees, caller: caller.user, headers: request.headers,
                    video: request.video, issuedTime: now.unixMillis,
                    expiresTime: now.unixMillis + Self.milliseconds(configuration.ringTimeout))))
            }
        case .devices(let devices):
            for device in devices where device != caller && machine.calleeStatus[device] == nil {
                machine.callees.append(device)
                machine.calleeStatus[device] = .awaitingOffer
            }
            if machine.callees.isEmpty {
                machine.end(.error, error: .init(code: .destinationUnavailable, message: "destination user has no connected device"), now: now)
            } else {
                machine.ringDeadline = now.instant.advanced(by: configuration.ringTimeout)
                machine.legsRequested = true
                machine.output.append(.media(.answerCaller(callID: request.callID, offer: request.sdp)))
            }
        }
        machine.output.append(.record(machine.record))
        let actions = machine.output
        machine.output = []
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
    public var devices: [Device] { [caller] + callees }

    /// When `handleTimeout(now:)` must run next; nil once the call ended.
    public var nextDeadline: ContinuousClock.Instant? {
        guard state != .ended else { return nil }
        var earliest = maximumDeadline
        func consider(_ deadline: ContinuousClock.Instant?) {
            guard let deadline else { return }
            if earliest.map({ deadline < $0 }) ?? true { earliest = deadline }
        }
        consider(ringDeadline)
        consider(setupDeadline)
        for deadline in graceDeadlines.values { consider(deadline) }
        return earliest
    }

    /// Applies one input. Throws (and changes nothing) when the input does not fit the
    /// call: `invalid_state` (answering an answered call, ...) or `call_not_found` (a
    /// device that is not part of the call). Media reports that no longer matter are ignored.
    public mutating func handle(_ input: CallInput, now: CallTime) throws(CallingError) -> [CallAction] {
        let before = record
        output = []
        switch input {
        case .acknowledged(let device): try acknowledge(device, now: now)
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
        case .deviceReconnected(let device): graceDeadlines[device] = nil
        case .failed(let error):
            if state != .ended { end(.error, error: error, now: now) }
        }
        return flush(before)
    }

    /// Fires the timers that are due at `now`: maximum length (`timeout`), ring timeout
    /// (`noAnswer` or `timeout`), media setup (`error` `media_failed`), reconnect grace (`inactive`).
    public mutating func handleTimeout(now: CallTime) -> [CallAction] {
        let before = record
        output = []
        if state != .ended {
            if let deadline = maximumDeadline, deadline <= now.instant {
                end(.timeout, now: now)
            } else if let deadline = ringDeadline, deadline <= now.instant {
                end(anyAcknowledged ? .timeout : .noAnswer, now: now)
            } else if let deadline = setupDeadline, deadline <= now.instant {
                end(.error, error: .init(code: .mediaFailed, message: "media not established within \(configuration.mediaSetupTimeout)"), now: now)
            } else if graceDeadlines.values.contains(where: { $0 <= now.instant }) {
                end(.inactive, now: now)
            }
        }
        return flush(before)
    }

    // MARK: Requests

    private var isAnswered: Bool { state == .answered || state == .established }

    private func requireNotEnded(_ what: String) throws(CallingError) {
        if state == .ended {
            throw CallingError(.invalidState, callID: callID, "cannot \(what): the call ended")
        }
    }

    /// The status of a callee device that may act on the call, or the error for one that may not.
    private func calleeStatus(of device: Device, to what: String) throws(CallingError) -> CalleeStatus {
        try requireNotEnded(what)
        if let status = calleeStatus[device] { return status }
        if formerCallees.contains(device) {
            throw CallingError(.invalidState, callID: callID, "cannot \(what): the call ended for this device")
        }
        throw CallingError(.callNotFound, callID: callID, "device \(device.deviceID) is not a callee of this call")
    }

    private mutating func acknowledge(_ device: Device, now: CallTime) throws(CallingError) {
        guard case .offered(let acknowledged) = try calleeStatus(of: device, to: "acknowledge") else {
            throw CallingError(.invalidState, callID: callID, "cannot acknowledge: call.incoming not sent yet")
        }
        if acknowledged { return }
        calleeStatus[device] = .offered(acknowledged: true)
        guard !anyAcknowledged, !isAnswered else { return }
        anyAcknowledged = true
        record.rungTime = now.unixMillis
        record.state = .ringing
        output.append(.send(caller, .callRinging(.init(callID: callID, time: now.unixMillis))))
    }

    /// A pushed device relayed its payload: it now waits for its leg like a connected
    /// callee, and counts as acknowledged (the caller hears `call.ringing`). Relaying
    /// again, or after `call.incoming`, changes nothing.
    private mutating func pushRelayed(_ device: Device, now: CallTime) throws(CallingError) {
        guard case .pushed = try calleeStatus(of: device, to: "relay a push for") else { return }
        calleeStatus[device] = .awaitingOffer
        // Before the caller's leg is ready, `callerLegReady` offers every waiting device
        // and rings the caller (its events keep their order: media, progress, ringing).
        guard state != .initiating else {
            relayedBeforeProgress = true
            return
        }
        output.append(.media(.offerCallee(callID: callID, device: device)))
        ringCallerForRelay(now: now)
    }

    private mutating func ringCallerForRelay(now: CallTime) {
        guard !anyAcknowledged, !isAnswered else { return }
        anyAcknowledged = true
        record.rungTime = now.unixMillis
        record.state = .ringing
        output.append(.send(caller, .callRinging(.init(callID: callID, time: now.unixMillis))))
    }

    /// The cause a device that is no longer in this (live) call is told when it relays a
    /// push late: another device answered, or it left the ring set.
    public var causeForFormerCallee: SignalingMessage.EndCause { isAnswered ? .otherDeviceAnswered : .inactive }

    /// Whether `device` was a callee of this call and left it.
    public func isFormerCallee(_ device: Device) -> Bool { formerCallees.contains(device) }

    /// The call's times as a callee device that relays a push late sees them.
    public func detailsForLateRelay(_ device: Device, at time: Int64) -> SignalingMessage.CallDetails {
        details(for: device, endedAt: time)
    }

    private mutating func answer(_ device: Device, sdp: String, now: CallTime) throws(CallingError) {
        let status = try calleeStatus(of: device, to: "answer")
        if isAnswered {
            throw CallingError(.invalidState, callID: callID, "cannot answer: already answered")
        }
        guard case .offered = status else {
            throw CallingError(.invalidState, callID: callID, "cannot answer: call.incoming not sent yet")
        }
        answeredDevice = device
        record.answeredDeviceID = device.deviceID
        record.answeredTime = now.unixMillis
        record.state = .answered
        ringDeadline = nil
        setupDeadline = now.instant.advanced(by: configuration.mediaSetupTimeout)
        let event = SignalingMessage.CallEvent(callID: callID, time: now.unixMillis)
        output.append(.send(caller, .callAnswered(event)))
        output.append(.send(device, .callAnswered(event)))
        for other in callees where other != device {
            removeCallee(other, cause: .otherDeviceAnswered, now: now)
        }
        output.append(.media(.acceptAnswer(callID: callID, device: device, answer: sdp)))
        output.append(.media(.bridge(callID: callID, device: device)))
        checkEstablished(now: now)
    }

    private mutating func decline(_ device: Device, now: CallTime) throws(CallingError) {
        let status = try calleeStatus(of: device, to: "decline")
        if isAnswered {
            throw CallingError(.invalidState, callID: callID, "cannot decline: already answered (use call.hangup)")
        }
        guard case .offered = status else {
            throw CallingError(.invalidState, callID: callID, "cannot decline: call.incoming not sent yet")
        }
        end(.denied, now: now)
    }

    private mutating func hangUp(_ device: Device, now: CallTime) throws(CallingError) {
        if device == caller {
            try requireNotEnded("hang up")
            end(isAnswered ? .hungUp : .canceled, now: now)
            return
        }
        let status = try calleeStatus(of: device, to: "hang up")
        if device == answeredDevice {
            end(.hungUp, now: now)
        } else if case .offered = status, !isAnswered {
            end(.denied, now: now)
        } else {
            throw CallingError(.invalidState, callID: callID, "cannot hang up: call.incoming not sent yet")
        }
    }

    private mutating func sendDTMF(from device: Device, digits: String) throws(CallingError) {
        try requireNotEnded("send DTMF")
        guard device == caller || device == answeredDevice else {
            _ = try calleeStatus(of: device, to: "send DTMF")
            throw CallingError(.invalidState, callID: callID, "cannot send DTMF: the call is not established")
        }
        guard state == .established, let answeredDevice else {
            throw CallingError(.invalidState, callID: callID, "cannot send DTMF: the call is not established")
        }
        let leg: MediaLeg = device == caller ? .callee(answeredDevice) : .caller
        output.append(.media(.sendDTMF(callID: callID, leg: leg, digits: digits)))
    }

    // MARK: Media and connections

    private mutating func handleMedia(_ event: MediaEvent, now: CallTime) {
        guard state != .ended else { return }
        switch event {
        case .callerLegReady(let sdp):
            guard state == .initiating else { return }
            output.append(.send(caller, .callMedia(.init(callID: callID, sdp: sdp))))
            record.state = .progressing
            record.progressedTime = now.unixMillis
            output.append(.send(caller, .callProgress(.init(callID: callID, time: now.unixMillis))))
            for device in callees where calleeStatus[device] == .awaitingOffer {
                output.append(.media(.offerCallee(callID: callID, device: device)))
            }
            if relayedBeforeProgress { ringCallerForRelay(now: now) }
        case .calleeLegReady(let device, let sdp):
            guard calleeStatus[device] == .awaitingOffer, !isAnswered else { return }
            calleeStatus[device] = .offered(acknowledged: false)
            let incoming = SignalingMessage.CallIncoming(
                callID: callID, from: .user(caller.user.userID), headers: headers, video: video,
                time: record.startedTime, sdp: sdp
            )
            output.append(.send(device, .callIncoming(incoming)))
        case .legConnected(let leg):
            switch leg {
            case .caller: callerLegConnected = true
            case .callee(let device):
                guard calleeStatus[device] != nil else { return }
                connectedCalleeLegs.insert(device)
            }
            checkEstablished(now: now)
        case .legFailed(let leg, let reason):
            if isPartyLeg(leg) {
                if state == .established {
                    end(.inactive, now: now)
                } else {
                    end(.error, error: .init(code: .mediaFailed, message: "\(leg) media leg failed: \(reason)".prefixUTF8(1024)), now: now)
                }
            } else if case .callee(let device) = leg, calleeStatus[device] != nil {
                removeCallee(device, cause: .error, error: .init(code: .mediaFailed, message: "media leg failed: \(reason)".prefixUTF8(1024)), now: now)
                endIfNoCallees(code: .mediaFailed, message: "no callee device could be offered the call", now: now)
            }
        case .legInactive(let leg):
            if isPartyLeg(leg) { end(.inactive, now: now) }
        }
    }

    /// The caller's leg, or the answering device's: the legs whose loss ends the call.
    private func isPartyLeg(_ leg: MediaLeg) -> Bool {
        switch leg {
        case .caller: true
        case .callee(let device): device == answeredDevice
        }
    }

    private mutating func disconnected(_ device: Device, now: CallTime) {
        guard state != .ended else { return }
        if device == caller || device == answeredDevice {
            if graceDeadlines[device] == nil {
                graceDeadlines[device] = now.instant.advanced(by: configuration.reconnectGrace)
            }
        } else if calleeStatus[device] == .pushed {
            // A device woken by push connects (a new session: "lost") before it relays.
            return
        } else if calleeStatus[device] != nil {
            // A ringing device that drops leaves the ring set; the others keep ringing.
            removeCallee(device, cause: .inactive, now: now)
            endIfNoCallees(code: .destinationUnavailable, message: "every callee device disconnected", now: now)
        }
    }

    private mutating func lost(_ device: Device, now: CallTime) {
        guard state != .ended else { return }
        if device == caller || device == answeredDevice {
            end(.inactive, now: now)
        } else {
            disconnected(device, now: now)
        }
    }

    private mutating func checkEstablished(now: CallTime) {
        guard state == .answered, callerLegConnected, let answeredDevice, connectedCalleeLegs.contains(answeredDevice) else { return }
        record.state = .established
        record.establishedTime = now.unixMillis
        setupDeadline = nil
        let event = SignalingMessage.CallEvent(callID: callID, time: now.unixMillis)
        output.append(.send(caller, .callEstablished(event)))
        output.append(.send(answeredDevice, .callEstablished(event)))
    }

    // MARK: Ending

    /// Takes one callee device out of the call: `call.ended` to it if it knew of the call,
    /// and its leg closed.
    private mutating func removeCallee(_ device: Device, cause: SignalingMessage.EndCause, error: SignalingMessage.CallError? = nil, now: CallTime) {
        guard let status = calleeStatus.removeValue(forKey: device) else { return }
        callees.removeAll { $0 == device }
        formerCallees.insert(device)
        connectedCalleeLegs.remove(device)
        graceDeadlines[device] = nil
        if case .offered = status {
            output.append(.send(device, .callEnded(.init(callID: callID, cause: cause, error: error, details: details(for: device, endedAt: now.unixMillis)))))
        }
        output.append(.media(.closeLeg(callID: callID, leg: .callee(device))))
    }

    private mutating func endIfNoCallees(code: SignalingErrorCode, message: String, now: CallTime) {
        if callees.isEmpty, !isAnswered {
            end(.error, error: .init(code: code, message: message), now: now)
        }
    }

    /// Ends the call: `call.ended` to the caller, then to each callee device that knew of
    /// it, then the media layer closes every leg.
    private mutating func end(_ cause: SignalingMessage.EndCause, error: SignalingMessage.CallError? = nil, now: CallTime) {
        guard state != .ended else { return }
        record.state = .ended
        record.endedTime = now.unixMillis
        record.endCause = cause
        record.errorCode = error?.code.rawValue
        record.errorMessage = error?.message
        ringDeadline = nil
        setupDeadline = nil
        graceDeadlines = [:]
        output.append(.send(caller, .callEnded(.init(callID: callID, cause: cause, error: error, details: details(for: caller, endedAt: now.unixMillis)))))
        for device in callees {
            if case .offered = calleeStatus[device] {
                output.append(.send(device, .callEnded(.init(callID: callID, cause: cause, error: error, details: details(for: device, endedAt: now.unixMillis)))))
            }
            formerCallees.insert(device)
        }
        callees = []
        calleeStatus = [:]
        if legsRequested {
            output.append(.media(.closeAll(callID: callID)))
        }
    }

    /// The call's times as `device` saw them: the caller saw every step; a callee device
    /// saw the start, and the answer and establishment only if it answered.
    private func details(for device: Device, endedAt ended: Int64) -> SignalingMessage.CallDetails {
        if device == caller {
            return .init(
                startedTime: record.startedTime, progressedTime: record.progressedTime, rungTime: record.rungTime,
                answeredTime: record.answeredTime, establishedTime: record.establishedTime, endedTime: ended
            )
        }
        let answered = device == answeredDevice
        return .init(
            startedTime: record.startedTime,
            answeredTime: answered ? record.answeredTime : nil,
            establishedTime: answered ? record.establishedTime : nil,
            endedTime: ended
        )
    }

    private mutating func flush(_ before: CallRecord) -> [CallAction] {
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
