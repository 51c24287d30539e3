import ParleySDK
/// The softphone's logic, sans-I/O: SDK callbacks, typed lines, Ctrl-C and clock ticks go
/// in (with the time), output lines and SDK requests come out. The shell
/// (`SoftphoneRunner`) only carries the actions out, so every rule here (what is printed
/// when, when to answer, hang up, give up and with which exit status) is tested without a
/// server.
struct SoftphoneController {
    enum Input: Equatable {
        case clientStarted
        case clientFailed(message: String)
        /// `callUser` returned this call (outgoing), or failed.
        case callPlaced(callID: String)
        case callFailedToStart(message: String)
        case incomingCall(callID: String, caller: String, headers: [String: String], displayName: String? = nil)
        case progressed(callID: String)
        /// `responseHeaders`: the call's far-side headers so far (`ParleyCall.responseHeaders`).
        case rang(callID: String, responseHeaders: [String: String] = [:])
        case answered(callID: String, responseHeaders: [String: String] = [:])
        case established(callID: String)
        /// The far side sent DTMF digits (`call(_:didReceiveDTMF:)`).
        case dtmfReceived(callID: String, digits: String)
        /// In a conference room, the users talking now changed (`call(_:didChangeTalkers:)`).
        case talkersChanged(callID: String, userIDs: [String])
        /// The call's hold changed: this side's (`held`) or the other party's (`remoteHeld`).
        case holdChanged(callID: String, held: Bool, remoteHeld: Bool)
        /// The server refused this side's hold or resume; the call goes on.
        case holdRefused(callID: String, held: Bool, message: String)
        case ended(callID: String, cause: ParleyCallEndCause, errorCode: String?, errorMessage: String?, statistics: SoftphoneStatistics)
        /// A line typed on standard input (without its newline).
        case inputLine(String)
        /// Standard input reached its end: nobody will type any more.
        case inputClosed
        case interrupt
        /// The clock moved; `statistics` are the active call's, read just now.
        case tick(statistics: SoftphoneStatistics?)
        /// `--push-token`: the server holds it (or already held it, unchanged).
        case pushRegistered(alreadyRegistered: Bool)
        case pushRegistrationFailed(message: String)
        /// `--relay-push`: the push was reported to the system and its relay queued.
        case pushRelayed(callID: String, caller: String)
        /// `--relay-push`: genuine, but its call is over (its ring time passed).
        case pushExpired(callID: String, caller: String)
        /// `--relay-push`: not a Parley call push for this device, or the system refused it.
        case pushRefused(message: String)
    }

    enum Action: Equatable {
        /// A finished line for standard output.
        case print(String)
        /// The live statistics text: a terminal rewrites one status line with it.
        case status(String)
        /// A line for standard error.
        case error(String)
        case startClient
        /// Place the call: to a user, a phone number or a SIP address as `kind` says.
        case placeCall(callee: String, headers: [String: String], kind: ParleyCallRemoteKind = .user)
        case answer(callID: String)
        case hangUp(callID: String)
        /// Send DTMF tones in the call (`--dtmf`, once it is established).
        case sendDTMF(callID: String, tones: String)
        /// Hold (`held` true) or resume the call, as the user tapping Hold on the system's screen.
        case setHeld(callID: String, held: Bool)
        /// Sign out (hang up what is left, close the WebSocket).
        case terminateClient
        case exit(SoftphoneExitCode)
    }

    /// The call this device is in (one at a time).
    private struct ActiveCall {
        let id: String
        let remoteUserID: String
        let outgoing: Bool
        var establishedAtMs: Int64?
        var nextStatisticsAtMs: Int64?
        var answerAtMs: Int64?
        var hangUpAtMs: Int64?
        var hangUpSentAtMs: Int64?
        var answerSent = false
        var statistics = SoftphoneStatistics()
        /// The far side's response headers already printed.
        var responseHeaders: [String: String] = [:]
        /// This side's and the other party's hold, as last reported.
        var held = false
        var remoteHeld = false
    }

    private enum Phase: Equatable { case idle, connecting, ready, finished }

    let options: SoftphoneOptions
    let formatter: SoftphoneFormatter
    let isTerminal: Bool
    /// How long the server may take to end a call after this side hung up.
    static let hangUpGrace: Int64 = 10_000

    private var phase = Phase.idle
    private var connectDeadlineMs: Int64 = 0
    private var active: ActiveCall?
    /// Incoming calls refused because another call was active; their events are ignored.
    private var refusedCallIDs: Set<String> = []
    private var callCodes: [SoftphoneExitCode] = []
    private var interrupted = false
    private var callPlaced = false

    init(options: SoftphoneOptions, formatter: SoftphoneFormatter, isTerminal: Bool) {
        self.options = options
        self.formatter = formatter
        self.isTerminal = isTerminal
    }

    var isFinished: Bool { phase == .finished }

    /// Seconds between statistics lines.
    var statisticsInterval: Double { options.statisticsInterval ?? (isTerminal && !options.json ? 1 : 5) }

    /// Begins: connect to the server.
    mutating func start(nowMs: Int64) -> [Action] {
        guard phase == .idle else { return [] }
        phase = .connecting
        connectDeadlineMs = nowMs + Self.milliseconds(options.connectTimeout)
        return [emit(.connecting(server: options.serverURL, userID: options.userID), nowMs), .startClient]
    }

    mutating func handle(_ input: Input, nowMs: Int64) -> [Action] {
        guard phase != .finished, phase != .idle else { return [] }
        switch input {
        case .clientStarted:
            guard phase == .connecting else { return [] }
            phase = .ready
            var actions = [emit(.signedIn(userID: options.userID), nowMs)]
            switch options.mode {
            case .call(let callee, let kind):
                actions.append(.placeCall(callee: callee, headers: options.headers, kind: kind))
            case .listen:
                actions.append(emit(.listening(answerPolicy: options.answerPolicy), nowMs))
            }
            return actions

        case .clientFailed(let message):
            if phase == .connecting {
                return finish(.usage, error: "cannot sign in to \(options.serverURL): \(message)")
            }
            return finish(.connectionLost, error: "connection to \(options.serverURL) lost: \(message)")

        case .callPlaced(let callID):
            guard case .call(let callee, let kind) = options.mode, !callPlaced else { return [] }
            callPlaced = true
            active = ActiveCall(id: callID, remoteUserID: callee, outgoing: true)
            var actions = [emit(.calling(callee: callee, headers: options.headers, kind: kind), nowMs, callID: callID)]
            if interrupted { actions += hangUp(reason: "interrupted", nowMs: nowMs) }
            return actions

        case .callFailedToStart(let message):
            return finish(.callError, error: "cannot place the call: \(message)")

        case .incomingCall(let callID, let caller, let headers, let displayName):
            guard options.mode == .listen else {
                refusedCallIDs.insert(callID)
                return [.hangUp(callID: callID)]
            }
            var actions = [emit(.incoming(caller: caller, headers: headers, displayName: displayName), nowMs, callID: callID)]
            if active != nil {
                // One call at a time: a second one is declined as busy and not counted.
                refusedCallIDs.insert(callID)
                actions.append(emit(.hangingUp(reason: "busy with another call"), nowMs, callID: callID))
                actions.append(.hangUp(callID: callID))
                return actions
            }
            active = ActiveCall(id: callID, remoteUserID: caller, outgoing: false)
            switch options.answerPolicy {
            case .interactive: break
            case .answer(let delay):
                if delay == 0 { actions += answer(nowMs: nowMs) } else { active?.answerAtMs = nowMs + Self.milliseconds(delay) }
            case .decline:
                actions.append(emit(.declining, nowMs, callID: callID))
                actions += sendHangUp(nowMs: nowMs)
            }
            return actions

        case .progressed(let callID): return callEvent(callID, .progressing, nowMs)
        case .rang(let callID, let headers): return callEvent(callID, .ringing, nowMs) + responseHeaders(callID, headers, nowMs)
        case .answered(let callID, let headers):
            if active?.id == callID { active?.answerAtMs = nil }
            return callEvent(callID, .answered, nowMs) + responseHeaders(callID, headers, nowMs)
        case .dtmfReceived(let callID, let digits): return callEvent(callID, .dtmfReceived(digits: digits), nowMs)
        case .talkersChanged(let callID, let users): return callEvent(callID, .talking(userIDs: users), nowMs)
        case .holdChanged(let callID, let held, let remoteHeld):
            guard let call = active, call.id == callID else { return [] }
            var actions: [Action] = []
            if held != call.held { actions.append(emit(held ? .held : .resumed, nowMs, callID: callID)) }
            if remoteHeld != call.remoteHeld { actions.append(emit(remoteHeld ? .remoteHeld : .remoteResumed, nowMs, callID: callID)) }
            active?.held = held
            active?.remoteHeld = remoteHeld
            return actions
        case .holdRefused(let callID, let held, let message):
            guard active?.id == callID else { return [] }
            return [.error("call \(callID): the server refused to \(held ? "hold" : "resume") it: \(message)")]
        case .established(let callID):
            guard active?.id == callID, active?.establishedAtMs == nil else { return [] }
            active?.establishedAtMs = nowMs
            let interval = Self.milliseconds(statisticsInterval)
            active?.nextStatisticsAtMs = nowMs + interval
            if let duration = options.duration {
                let hangUpAt = nowMs + Self.milliseconds(duration)
                active?.hangUpAtMs = hangUpAt
            }
            let dtmf = options.dtmf.map { [Action.sendDTMF(callID: callID, tones: $0)] } ?? []
            return [emit(.established, nowMs, callID: callID)] + dtmf

        case .ended(let callID, let cause, let errorCode, let errorMessage, let statistics):
            if refusedCallIDs.remove(callID) != nil { return [] }
            guard let call = active, call.id == callID else { return [] }
            active = nil
            let wasEstablished = call.establishedAtMs != nil
            let code = SoftphoneOutcome.exitCode(cause: cause, wasEstablished: wasEstablished, outgoing: call.outgoing)
            let summary = SoftphoneCallSummary(
                callID: callID, remoteUserID: call.remoteUserID, outgoing: call.outgoing, cause: cause,
                errorCode: errorCode, errorMessage: errorMessage, wasEstablished: wasEstablished,
                duration: call.establishedAtMs.map { Double(nowMs - $0) / 1000 } ?? 0,
                statistics: statistics, exitCode: code)
            var actions = [
                emit(.ended(cause: cause, errorCode: errorCode, errorMessage: errorMessage), nowMs, callID: callID),
                .print(formatter.summary(summary, timeMs: nowMs)),
            ]
            if let failure = SoftphoneFormatter.failureMessage(summary) { actions.append(.error(failure)) }
            callCodes.append(code)
            let done: Bool
            switch options.mode {
            case .call: done = true
            case .listen: done = interrupted || (options.callCount > 0 && callCodes.count >= options.callCount)
            }
            if done { actions += finish(SoftphoneOutcome.combined(callCodes)) }
            return actions

        case .inputLine(let line):
            guard let call = active else { return [] }
            let command = line.trimmingSpaces().lowercased()
            // `hold` and `resume` during an established call, in `call` and `listen` alike.
            if call.establishedAtMs != nil, call.hangUpSentAtMs == nil, command == "hold" || command == "resume" {
                return [.setHeld(callID: call.id, held: command == "hold")]
            }
            guard options.mode == .listen, !call.outgoing else { return [] }
            if call.establishedAtMs == nil && !call.answerSent && call.hangUpSentAtMs == nil {
                if command.isEmpty || command == "a" { return answer(nowMs: nowMs) }
                if command == "d" {
                    return [emit(.declining, nowMs, callID: call.id)] + sendHangUp(nowMs: nowMs)
                }
            } else if command == "h" {
                return hangUp(reason: "asked", nowMs: nowMs)
            }
            return []

        case .inputClosed:
            return []

        case .interrupt:
            if interrupted || active == nil {
                // A second Ctrl-C, or nothing to hang up: leave now.
                // A listener between calls stops as asked; anything else was cut short.
                let stopsBetweenCalls = options.mode == .listen && active == nil
                return finish(stopsBetweenCalls ? SoftphoneOutcome.combined(callCodes) : .interrupted)
            }
            interrupted = true
            return hangUp(reason: "interrupted", nowMs: nowMs)

        case .pushRegistered(let already):
            guard let push = options.pushToken else { return [] }
            return [emit(.pushRegistered(pushType: push.service.rawValue, alreadyRegistered: already), nowMs)]

        case .pushRegistrationFailed(let message):
            return finish(.usage, error: "cannot register the push token: \(message)")

        case .pushRelayed(let callID, let caller):
            return [emit(.pushRelayed(caller: caller), nowMs, callID: callID)]

        case .pushExpired(let callID, let caller):
            // Nothing will ring: the call it announced is over. Like a missed call's timeout.
            return [emit(.pushExpired(caller: caller), nowMs, callID: callID)]
                + finish(.timeout, error: "the push expired: a missed call from \(caller)")

        case .pushRefused(let message):
            return finish(.usage, error: "cannot relay the push: \(message)")

        case .tick(let statistics):
            if phase == .connecting && nowMs >= connectDeadlineMs {
                return finish(.usage, error: "server unreachable: \(options.serverURL) did not accept the sign-in within \(fixed(options.connectTimeout, 1)) s")
            }
            guard var call = active else { return [] }
            if let statistics { call.statistics = statistics }
            active = call
            var actions: [Action] = []
            if let answerAt = call.answerAtMs, nowMs >= answerAt {
                actions += answer(nowMs: nowMs)
            }
            if let established = call.establishedAtMs, let next = call.nextStatisticsAtMs, nowMs >= next {
                let interval = Self.milliseconds(statisticsInterval)
                active?.nextStatisticsAtMs = next + interval
                let elapsed = Double(nowMs - established) / 1000
                if isTerminal && !options.json {
                    actions.append(.status(formatter.statisticsText(elapsed: elapsed, call.statistics)))
                } else {
                    actions.append(emit(.statistics(elapsed: elapsed, call.statistics), nowMs, callID: call.id))
                }
            }
            if let hangUpAt = call.hangUpAtMs, nowMs >= hangUpAt {
                actions += hangUp(reason: "duration \(fixed(options.duration ?? 0, 1)) s", nowMs: nowMs)
            }
            if let sentAt = active?.hangUpSentAtMs, nowMs >= sentAt + Self.hangUpGrace {
                actions += finish(.callError, error: "call did not end within \(Self.hangUpGrace / 1000) s of hanging up")
            }
            return actions
        }
    }

    private mutating func callEvent(_ callID: String, _ event: SoftphoneEvent, _ nowMs: Int64) -> [Action] {
        guard active?.id == callID else { return [] }
        return [emit(event, nowMs, callID: callID)]
    }

    /// A line for the far side's response headers when they grew since the last one.
    private mutating func responseHeaders(_ callID: String, _ headers: [String: String], _ nowMs: Int64) -> [Action] {
        guard let call = active, call.id == callID, headers != call.responseHeaders, !headers.isEmpty else { return [] }
        active?.responseHeaders = headers
        return [emit(.responseHeaders(headers), nowMs, callID: callID)]
    }

    private mutating func answer(nowMs: Int64) -> [Action] {
        guard let call = active, !call.answerSent, call.hangUpSentAtMs == nil else { return [] }
        active?.answerSent = true
        active?.answerAtMs = nil
        return [emit(.answering, nowMs, callID: call.id), .answer(callID: call.id)]
    }

    private mutating func hangUp(reason: String, nowMs: Int64) -> [Action] {
        guard let call = active, call.hangUpSentAtMs == nil else { return [] }
        return [emit(.hangingUp(reason: reason), nowMs, callID: call.id)] + sendHangUp(nowMs: nowMs)
    }

    private mutating func sendHangUp(nowMs: Int64) -> [Action] {
        guard let call = active, call.hangUpSentAtMs == nil else { return [] }
        active?.hangUpSentAtMs = nowMs
        active?.hangUpAtMs = nil
        active?.answerAtMs = nil
        return [.hangUp(callID: call.id)]
    }

    private mutating func finish(_ code: SoftphoneExitCode, error: String? = nil) -> [Action] {
        phase = .finished
        var actions: [Action] = []
        if let error { actions.append(.error(error)) }
        return actions + [.terminateClient, .exit(code)]
    }

    private func emit(_ event: SoftphoneEvent, _ nowMs: Int64, callID: String? = nil) -> Action {
        .print(formatter.line(event, callID: callID, timeMs: nowMs))
    }

    private static func milliseconds(_ seconds: Double) -> Int64 { Int64((seconds * 1000).rounded()) }
}

extension String {
    /// Without leading and trailing spaces, tabs and carriage returns (a line typed on a
    /// terminal, or piped from a file with CRLF endings).
    func trimmingSpaces() -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(self[first...last])
    }
}
