import ParleyCallCore
import ParleyCallModel
import ParleyMediaLegCore
import ParleyNetCore
import ParleySignaling
import ParleyVoiceAPI
import ParleyWireCore

/// Callouts the server places and plays to itself (REST `ttsCallout` and `customCallout`;
/// docs/rest.md, "Callouts"): an INVITE to a phone number through the trunk or to a SIP
/// address, whose media leg's other end is the server (`MediaAnchor.offerPromptCallee`,
/// a `PromptTopology`). When the callee answers, the ACE goes out if asked, then the
/// request's steps play in order (espeak-ng text, prompt files, DTMF), then the server
/// hangs up (BYE), or leaves the call up for `continue`. Such a call never enters the
/// `CallRegistry`, but is admitted by its dialling policy as any call out is
/// (`CallRegistry.admitCallout`, through `admit`), has a call record written as the
/// registry's calls have (`calloutToPhone`, `calloutToSip`), and its DiCE goes out once
/// its ended record is committed, so a `GET` after the DiCE finds it ended.
///
/// Threads: the engine's loop only, as the engine; prompt audio is made off it
/// (`PromptLibrary`) and played on the call's media loop.
final class ServerCallouts: @unchecked Sendable {
    // @unchecked: every mutable member is used on `loop`'s thread only.

    /// What runs next on a call once it is answered.
    private enum Step {
        case play([PromptLibrary.Part])
        case dtmf(String)
        case cookie(key: String, value: String)
        case end(ServerCalloutRequest.Ending)
    }

    private final class Call {
        let request: ServerCalloutRequest
        let applicationKey: String
        let party: SIPParty
        let cli: String
        var record: CallRecord
        var steps: [Step] = []
        /// The ACE's answer came (or none was asked): the steps may run.
        var released = false
        var connected = false
        var busy = false
        var waitingClip: UInt64?
        var generation = 0
        var cookies: [(key: String, value: String)] = []
        var ringTimer: TimerID?
        var lengthTimer: TimerID?
        var stepTimer: TimerID?
        /// The most the call may last once answered.
        var lengthLimit: Duration = .zero

        init(request: ServerCalloutRequest, applicationKey: String, party: SIPParty, cli: String, record: CallRecord) {
            self.request = request
            self.applicationKey = applicationKey
            self.party = party
            self.cli = cli
            self.record = record
        }

        var answered: Bool { record.times.answeredTime != nil }
    }

    /// What the engine lends the callouts.
    struct Hooks {
        /// Admits a callout as the registry's dialling policy does (`CallRegistry.admitCallout`).
        var admit: (PartyAddress, _ applicationKey: String, _ cli: String?, _ callID: String) -> Result<(party: SIPParty, cli: String?, maximumLength: Duration?), CallingError>
        /// A callout ended: its place in the dialling limits is free (`CallRegistry.calloutEnded`).
        var ended: (String) -> Void
        /// Writes a version of a call record (legs: the ended record's final figures).
        var persist: (CallRecord, [CallLeg]) -> Void
        /// Runs the body once every record write handed over so far is committed.
        var whenCommitted: (@escaping () -> Void) -> Void
        /// Keeps who hung an answered call up on its timeline (for the REST `GET`).
        var noteHangUp: (CallRecord, SinchCallOutcome.HangUpSide) -> Void
    }

    private let loop: any Scheduler
    private let anchor: MediaAnchor?
    private let sipCalls: (any SIPCallPort)?
    private let backend: BackendCallbacks?
    private let prompts: PromptLibrary
    private let log: ServerLog
    private let wallClock: @Sendable () -> Int64
    private let ringTimeout: Duration
    private let maximumCallLength: Duration
    private let hooks: Hooks
    private var calls: [String: Call] = [:]

    init(loop: any Scheduler, anchor: MediaAnchor?, sipCalls: (any SIPCallPort)?, backend: BackendCallbacks?, prompts: PromptLibrary,
         log: ServerLog, ringTimeout: Duration, maximumCallLength: Duration, hooks: Hooks, wallClock: @escaping @Sendable () -> Int64) {
        self.loop = loop
        self.anchor = anchor
        self.sipCalls = sipCalls
        self.backend = backend
        self.prompts = prompts
        self.log = log
        self.ringTimeout = ringTimeout
        self.maximumCallLength = maximumCallLength
        self.hooks = hooks
        self.wallClock = wallClock
        // The anchor has one hook for prompt events: the calls the server answered hear
        // theirs as before, these calls theirs.
        let earlier = anchor?.promptEvents
        anchor?.promptEvents = { [weak self] callID, event in
            if let self, self.handles(callID) { return self.promptEvent(event, callID: callID) }
            earlier?(callID, event)
        }
    }

    /// Whether `callID` is one of these calls.
    func handles(_ callID: String) -> Bool { calls[callID] != nil }

    /// The application `callID` belongs to, when it is one of these calls.
    func applicationKey(of callID: String) -> String? { calls[callID]?.applicationKey }

    // MARK: Entry points (the engine's loop)

    /// Places a callout of `applicationKey`: its id, or why nothing was placed.
    func place(_ request: ServerCalloutRequest, applicationKey: String, callID: String) -> CalloutOutcome {
        guard let anchor, sipCalls != nil else {
            return .refused(code: .notImplemented, message: "this server places no calls to phone numbers or SIP addresses (no SIP, or no media)")
        }
        let admitted: (party: SIPParty, cli: String?, maximumLength: Duration?)
        switch hooks.admit(request.destination, applicationKey, request.cli, callID) {
        case .success(let value): admitted = value
        case .failure(let error): return .refused(code: error.signalingCode, message: error.reason)
        }
        guard let cli = admitted.cli else {
            hooks.ended(callID)
            return .refused(code: .badRequest, message: "a callout presents a CLI: give cli, or set the application's default CLI")
        }
        let time = wallClock()
        let direction: CallDirection = request.destination.kind == .phone ? .calloutToPhone : .calloutToSIP
        var record = CallRecord(callID: callID, applicationKey: applicationKey, direction: direction, caller: .phone(cli), callerDeviceID: nil,
                                callee: request.destination, headers: request.headers, video: false, startedTime: time)
        record.state = .initiating
        let call = Call(request: request, applicationKey: applicationKey, party: admitted.party, cli: cli, record: record)
        call.steps = request.steps.compactMap(Self.step) + [.end(request.ending)]
        calls[callID] = call
        hooks.persist(record, [])
        log.info("callout.placed", ["call": callID, "method": request.method.rawValue, "app": applicationKey,
                                    "to": request.destination.kind.rawValue, "steps": String(request.steps.count)])
        let lengths = [admitted.maximumLength, request.maximumLength, maximumCallLength].compactMap { $0 }
        call.ringTimer = loop.schedule(after: request.ringTimeout.map { min($0, ringTimeout) } ?? ringTimeout) { [weak self] in
            self?.end(callID, cause: .noAnswer, error: nil, result: .noAnswer, reason: .timeout, why: "nobody answered in time")
        }
        call.lengthLimit = lengths.min() ?? maximumCallLength
        anchor.offerPromptCallee(callID: callID, party: .sip(admitted.party), applicationKey: applicationKey,
                                 now: ClockReading(instant: loop.now, unixMilliseconds: time))
        return .placed(callID: callID)
    }

    /// Hangs a callout up now (a REST `PATCH` with `hangup`): DiCE MANAGERHANGUP. False
    /// when there is no such call here.
    @discardableResult
    func hangUp(callID: String) -> Bool {
        guard let call = calls[callID] else { return false }
        if call.answered {
            hooks.noteHangUp(call.record, .api)
            end(callID, cause: .hungUp, error: nil, result: .answered, reason: .managerHangup, why: "hung up by the application")
        } else {
            end(callID, cause: .canceled, error: nil, result: .noAnswer, reason: .cancel, why: "cancelled by the application")
        }
        return true
    }

    /// What the media anchor reports of one of these calls.
    func mediaReported(_ event: MediaEvent, callID: String) {
        guard let call = calls[callID] else { return }
        switch event {
        case .calleeLegReady(_, let sdp):
            sipCalls?.tell(call.party, .offered(CallOffer(
                callID: callID, from: .phone(call.cli), headers: call.request.headers, video: false,
                time: call.record.times.startedTime, sdp: sdp, cli: call.cli)))
        case .legConnected:
            guard !call.connected, call.answered else { return }
            call.connected = true
            anchor?.withPrompts(callID: callID) { [party = call.party] in $0.playInto(.callee(.sip(party))) }
            advance(callID)
        case .legFailed(_, let reason):
            end(callID, cause: .error, error: .init(code: .mediaFailed, message: reason),
                result: call.answered ? .answered : .failed, reason: .generalError, why: "media: \(reason)")
        case .legInactive:
            end(callID, cause: .inactive, error: nil, result: .answered, reason: .generalError, why: "no media from the callee")
        case .callerLegReady, .dtmfReceived:
            break
        }
    }

    /// What the SIP user agent reports of a callee here.
    func sipReported(_ event: SIPCallEvent, callID: String) {
        guard let call = calls[callID] else { return }
        let time = wallClock()
        switch event {
        case .placed(let sipCallID):
            call.record.sipCallID = sipCallID
            hooks.persist(call.record, [])
        case .trying:
            guard call.record.state == .initiating else { return }
            call.record.state = .progressing
            call.record.times.progressedTime = time
            hooks.persist(call.record, [])
        case .ringing:
            guard call.record.state == .initiating || call.record.state == .progressing else { return }
            call.record.state = .ringing
            call.record.times.rungTime = time
            hooks.persist(call.record, [])
        case .answered(let sdp, _):
            guard !call.answered else { return }
            if let timer = call.ringTimer { _ = loop.cancel(timer) }
            call.ringTimer = nil
            guard let sdp else {
                return end(callID, cause: .error, error: .init(code: .mediaFailed, message: "the callee's answer has no SDP"),
                           result: .failed, reason: .generalError, why: "an answer without SDP")
            }
            call.record.state = .established
            call.record.times.answeredTime = time
            call.record.times.establishedTime = time
            call.record.sipStatus = 200
            hooks.persist(call.record, [])
            log.info("callout.answered", ["call": callID])
            anchor?.perform(.acceptAnswer(callID: callID, party: .sip(call.party), answer: sdp), applicationKey: call.applicationKey,
                            now: ClockReading(instant: loop.now, unixMilliseconds: time))
            call.lengthTimer = loop.schedule(after: call.lengthLimit) { [weak self] in
                self?.end(callID, cause: .timeout, error: nil, result: .answered, reason: .timeout, why: "the maximum call length passed")
            }
            sendACE(call, callID: callID)
        case .failed(let status, let reason):
            if (100...699).contains(status) { call.record.sipStatus = status }
            if call.answered {
                end(callID, cause: .error, error: SIPCallEvent.sipError(status: status, reason: reason), result: .answered,
                    reason: .generalError, why: "SIP \(status) \(reason)", tellCallee: false)
            } else {
                let ending = SIPCallEvent.ending(status: status, reason: reason)
                let (result, dice): (DisconnectResult, DisconnectReason) = switch ending.cause {
                case .denied: (.busy, .calleeHangup)
                case .noAnswer, .canceled: (.noAnswer, .timeout)
                default: (.failed, .generalError)
                }
                end(callID, cause: ending.cause, error: ending.error, result: result, reason: dice, why: "SIP \(status) \(reason)", tellCallee: false)
            }
        case .hungUp:
            if call.answered { hooks.noteHangUp(call.record, .callee) }
            end(callID, cause: call.answered ? .hungUp : .denied, error: nil, result: call.answered ? .answered : .busy,
                reason: .calleeHangup, why: "the callee hung up", tellCallee: false)
        case .dtmf, .held:
            // Digits and the callee's hold change nothing here: the prompts play on (a
            // held callee hears them when it resumes, or not, as its phone decides).
            break
        }
    }

    /// Ends every call (shutdown).
    func endAll() {
        for callID in Array(calls.keys) {
            end(callID, cause: .error, error: .init(code: .internalError, message: "server shutting down"),
                result: calls[callID]?.answered == true ? .answered : .failed, reason: .generalError, why: "server shutting down")
        }
    }

    // MARK: ACE

    private func header(_ call: Call, callID: String) -> CallbackHeader? {
        guard let timestamp = try? SinchTimestamp(unixMilliseconds: wallClock()) else { return nil }
        let custom = ServerAnsweredCalls.custom(of: call.cookies) ?? call.request.custom
        return CallbackHeader(callID: callID, timestamp: timestamp, custom: custom, applicationKey: call.applicationKey)
    }

    /// The ACE, when the request asks for one and the backend takes it: its answer's
    /// instructions run before the callout's steps, and `hangup` ends the call instead.
    /// Without one the steps run at once.
    private func sendACE(_ call: Call, callID: String) {
        guard call.request.sendsACE, let backend, backend.sends(.ace, applicationKey: call.applicationKey),
              let header = header(call, callID: callID) else {
            call.released = true
            return advance(callID)
        }
        log.info("backend.ace", ["call": callID])
        let generation = call.generation
        backend.post(.answered(AnsweredCallEvent(header: header)), applicationKey: call.applicationKey) { [loop, weak self] answer in
            guard let callouts = self else { return }
            _ = loop.execute { callouts.aceAnswered(answer, generation: generation, callID: callID) }
        }
    }

    private func aceAnswered(_ answer: Result<SVAMLResponse?, BackendCallbacks.Failure>, generation: Int, callID: String) {
        guard let call = calls[callID], call.generation == generation else { return }
        switch answer {
        case .failure(let failure) where failure.noAction:
            log.info("backend.ace.continue", ["call": callID, "detail": "no action"])
        case .failure(let failure):
            log.warning("backend.ace.failed", ["call": callID, "reason": failure.reason.rawValue, "detail": failure.message])
            return end(callID, cause: .hungUp, error: nil, result: .answered, reason: failure.reason, why: "the ACE's answer: \(failure.message)")
        case .success(nil):
            return end(callID, cause: .hungUp, error: nil, result: .answered, reason: .callbackError, why: "the ACE got no SVAML")
        case .success(let svaml?):
            var before: [Step] = []
            for instruction in svaml.instructions {
                guard let step = Self.step(of: instruction) else {
                    log.warning("backend.ace.unsupported", ["call": callID, "instruction": instruction.name.rawValue])
                    continue
                }
                before.append(step)
            }
            switch svaml.action {
            case .continue:
                call.steps = before + call.steps
            case .hangup:
                call.steps = before + [.end(.hangup)]
            default:
                log.warning("backend.ace.unsupported", ["call": callID, "action": svaml.action.name.rawValue])
                return end(callID, cause: .hungUp, error: nil, result: .answered, reason: .invalidSVAMLAction,
                           why: "\(svaml.action.name.rawValue) in a callout's ACE answer")
            }
        }
        call.released = true
        advance(callID)
    }

    // MARK: Steps

    private static func step(_ step: ServerCalloutRequest.Step) -> Step? {
        switch step {
        case .say(let text, let locale): return .play([.text(text, locale: locale)])
        case .prompt(let prompt, let locale): return (try? PromptLibrary.parts(ofPrompt: prompt, locale: locale)).map(Step.play)
        case .playFiles(let ids, let locale): return (try? PromptLibrary.parts(ofFiles: ids, locale: locale)).map(Step.play)
        case .sendDTMF(let tones): return .dtmf(tones)
        case .setCookie(let key, let value): return .cookie(key: key, value: value)
        }
    }

    /// An ACE answer's instruction as a step; nil for one a callout does not carry out.
    private static func step(of instruction: SVAMLInstruction) -> Step? {
        switch instruction {
        case .say(let text, let locale): step(.say(text: text, locale: locale))
        case .playFiles(let ids, let locale): step(.playFiles(ids, locale: locale))
        case .setCookie(let key, let value): .cookie(key: key, value: value)
        case .sendDtmf(let tones): .dtmf(tones)
        case .answer, .startRecording, .stopRecording: nil
        }
    }

    /// Runs the next steps until one has to wait (once answered, released by the ACE and
    /// the leg connected, so what plays is heard).
    private func advance(_ callID: String) {
        while let call = calls[callID], call.connected, call.released, !call.busy, !call.steps.isEmpty {
            switch call.steps.removeFirst() {
            case .play(let parts): play(parts, on: call, callID: callID)
            case .dtmf(let tones): sendDTMF(tones, on: call, callID: callID)
            case .cookie(let key, let value):
                if let index = call.cookies.firstIndex(where: { $0.key == key }) {
                    call.cookies[index].value = value
                } else if call.cookies.count < 32 {
                    call.cookies.append((key, value))
                }
            case .end(.hangup):
                hooks.noteHangUp(call.record, .api)
                end(callID, cause: .hungUp, error: nil, result: .answered, reason: .managerHangup, why: "the callout's steps are done")
            case .end(.continue):
                log.info("callout.continue", ["call": callID])
            }
        }
    }

    private func play(_ parts: [PromptLibrary.Part], on call: Call, callID: String) {
        call.busy = true
        let generation = call.generation
        prompts.clips(parts) { [loop, weak self] result in
            guard let callouts = self else { return }
            _ = loop.execute { callouts.loaded(result, generation: generation, callID: callID) }
        }
    }

    private func loaded(_ result: Result<[PromptLibrary.Clip], PromptLibrary.Failure>, generation: Int, callID: String) {
        guard let call = calls[callID], call.generation == generation else { return }
        switch result {
        case .failure(let failure):
            log.warning("callout.prompt.failed", ["call": callID, "reason": failure.description])
            stepDone(call, callID: callID)
        case .success(let clips) where clips.isEmpty:
            stepDone(call, callID: callID)
        case .success(let clips):
            let queued = anchor?.queuePrompt(clips, callID: callID, engine: loop) { [weak self] id in
                self?.clipQueued(id, generation: generation, callID: callID)
            } ?? false
            if !queued { stepDone(call, callID: callID) }
        }
    }

    private func clipQueued(_ id: UInt64?, generation: Int, callID: String) {
        guard let call = calls[callID], call.generation == generation else { return }
        guard let id else {
            log.warning("callout.prompt.failed", ["call": callID, "reason": "the prompt queue is full"])
            return stepDone(call, callID: callID)
        }
        call.waitingClip = id
    }

    private func promptEvent(_ event: PromptTopology<CallLegID>.Event, callID: String) {
        guard let call = calls[callID], case .clipFinished(let id) = event, call.waitingClip == id else { return }
        call.waitingClip = nil
        stepDone(call, callID: callID)
    }

    private func stepDone(_ call: Call, callID: String) {
        call.busy = false
        advance(callID)
    }

    private func sendDTMF(_ tones: String, on call: Call, callID: String) {
        // `w` is half a second of pause: the topology paces the digits, so the step waits
        // as long as its tones and pauses take.
        let digits = String(tones.filter { $0 != "w" && $0 != "W" })
        let pauses = tones.count - digits.count
        if !digits.isEmpty { anchor?.withPrompts(callID: callID) { _ = $0.sendDTMF(digits) } }
        call.busy = true
        call.stepTimer = loop.schedule(after: .milliseconds(180 * digits.count + 500 * pauses)) { [weak self] in
            guard let self, let call = self.calls[callID] else { return }
            call.stepTimer = nil
            self.stepDone(call, callID: callID)
        }
    }

    // MARK: The end

    /// Ends a call: CANCEL or BYE unless the callee ended it, its media closed, its ended
    /// record written with the legs' final figures, then (once committed) its DiCE.
    private func end(_ callID: String, cause: CallEndCause, error: SignalingMessage.CallError?, result: DisconnectResult,
                     reason: DisconnectReason, why: String, tellCallee: Bool = true) {
        guard let call = calls.removeValue(forKey: callID) else { return }
        call.generation += 1
        for timer in [call.ringTimer, call.lengthTimer, call.stepTimer].compactMap({ $0 }) { _ = loop.cancel(timer) }
        let time = wallClock()
        log.info("callout.ended", ["call": callID, "cause": cause.rawValue, "result": result.rawValue, "reason": reason.rawValue, "why": why])
        if tellCallee {
            sipCalls?.tell(call.party, .ended(
                callID: callID, cause: call.answered ? .hungUp : .canceled, error: nil,
                details: CallTimes(startedTime: call.record.times.startedTime, answeredTime: call.record.times.answeredTime, endedTime: time)))
        }
        hooks.ended(callID)
        var record = call.record
        record.state = .ended
        record.endCause = cause
        record.error = error.map { CallError(code: $0.code.rawValue, message: $0.message) }
        record.times.endedTime = time
        let duration = record.times.answeredTime.map { max(0, (time - $0) / 1000) } ?? 0
        let dice: DisconnectedCallEvent? = call.request.sendsDiCE ? header(call, callID: callID).map {
            DisconnectedCallEvent(header: $0, result: call.answered ? .answered : result, reason: reason, durationSeconds: duration,
                                  from: call.cli, to: CallEngine.destination(of: call.request.destination),
                                  callHeaders: call.request.headers.sorted { $0.key < $1.key }.map { CallHeader(key: $0.key, value: $0.value) })
        } : nil
        let applicationKey = call.applicationKey
        if let anchor {
            anchor.closeAll(callID: callID, now: loop.now) { [self, record] statistics in
                closed(record, statistics: statistics, dice: dice, applicationKey: applicationKey)
            }
        } else {
            closed(record, statistics: [:], dice: dice, applicationKey: applicationKey)
        }
    }

    /// The ended call's legs closed (the engine's loop): its record is written with their
    /// final figures, and its DiCE goes once that is committed.
    private func closed(_ record: CallRecord, statistics: [CallLegID: MediaLegStatistics], dice: DisconnectedCallEvent?,
                        applicationKey: String) {
        hooks.persist(record, CallEngine.storedLegs(statistics, of: record, at: wallClock()))
        guard let dice else { return }
        hooks.whenCommitted { [self] in sendDiCE(dice, applicationKey: applicationKey) }
    }

    private func sendDiCE(_ event: DisconnectedCallEvent, applicationKey: String) {
        guard let backend, backend.sends(.dice, applicationKey: applicationKey) else { return }
        log.info("backend.dice", ["call": event.header.callID, "result": event.result.rawValue, "reason": event.reason.rawValue])
        backend.post(.disconnected(event), applicationKey: applicationKey) { _ in }
    }
}
