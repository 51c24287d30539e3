import ParleyCallCore
import ParleyCallModel
import ParleyMediaLegCore
import ParleyNetCore
import ParleySignaling
import ParleyVoiceAPI
import ParleyWireCore

/// Calls in over SIP that the server answers itself because their backend's SVAML asks
/// for something the caller must hear or key (docs/backend.md, "Prompts, menus and park"):
/// `say`, `playFiles`, `answer`, `sendDtmf` before `hangup` or `continue`, and the actions
/// `runMenu` and `park`. Such a call never enters the `CallRegistry`: the SIP caller is
/// answered with the media anchor's plain RTP answer of a leg whose other end is the
/// server (`MediaAnchor.answerPromptCaller`, a `PromptTopology`), its instructions run in
/// order, then its action. A menu's result goes to the backend as a signed PIE whose SVAML
/// answer goes on the same way; a failed PIE ends the call with CALLBACKERROR or
/// INVALIDSVAMLACTION, logged, and the DiCE says so.
///
/// `update(callID:svaml:)` and `hangUp(callID:)` are what a REST `PATCH` of the call
/// calls (`continue`, `hangup`, `park`, `connectPstn`, `connectSip`, instructions).
///
/// `connectMxp`, `connectPstn` and `connectSip` after the answer hand the call to the
/// engine (`connect`), which starts it as a call in whose caller's leg is the one
/// answered here: it rings the user, or bridges the caller to a call out. `connectConf`
/// after the answer is not built (the caller's leg would have to move into the room).
///
/// Each call has a record from the answer on, written through the `CallRecorder` as any
/// call's (who called, the number dialled, the answer, the end, the INVITE's Call-ID): a
/// call handed on keeps it, the engine's later versions updating the same record.
///
/// Threads: the engine's loop only, as the engine; prompt audio is made off it
/// (`PromptLibrary`) and played on the call's media loop.
final class ServerAnsweredCalls: @unchecked Sendable {
    // @unchecked: every mutable member is used on `loop`'s thread only.

    /// What runs next on a call.
    private enum Step {
        case instruction(SVAMLInstruction)
        case action(SVAMLAction)
    }

    private final class Call {
        let inbound: InboundSIPCall
        var context: CallEngine.BackendCall
        /// `setCookie`'s keys and values, in the order first set.
        var cookies: [(key: String, value: String)] = []
        /// The caller has our 200 OK.
        var answeredTime: Int64?
        /// Its leg is connected: prompts are heard from now on.
        var connected = false
        var steps: [Step] = []
        /// A step in progress (a prompt loading or playing, a PIE out, a pause).
        var busy = false
        /// The last clip of the prompt playing now.
        var waitingClip: UInt64?
        /// Bumped whenever what plays is dropped, so prompts still loading are dropped too.
        var generation = 0
        var menu: MenuSession?
        var menuTimer: TimerID?
        var stepTimer: TimerID?
        var parkTimer: TimerID?
        var lengthTimer: TimerID?
        /// Its record, as last handed to the recorder.
        var record: CallRecord

        init(inbound: InboundSIPCall, context: CallEngine.BackendCall, startedTime: Int64) {
            self.inbound = inbound
            self.context = context
            record = ServerAnsweredCalls.record(of: inbound, startedTime: context.startedTime ?? startedTime)
        }
    }

    private let loop: any Scheduler
    private let anchor: MediaAnchor?
    private let sipCalls: (any SIPCallPort)?
    private let backend: BackendCallbacks?
    private let prompts: PromptLibrary
    private let log: ServerLog
    private let wallClock: @Sendable () -> Int64
    private let maximumCallLength: Duration
    /// Where the calls' records go; nil: none are kept (tests of the prompts alone).
    private let recorder: CallRecorder?
    private var calls: [String: Call] = [:]

    init(loop: any Scheduler, anchor: MediaAnchor?, sipCalls: (any SIPCallPort)?, backend: BackendCallbacks?, prompts: PromptLibrary,
         log: ServerLog, maximumCallLength: Duration, recorder: CallRecorder? = nil, wallClock: @escaping @Sendable () -> Int64) {
        self.loop = loop
        self.recorder = recorder
        self.anchor = anchor
        self.sipCalls = sipCalls
        self.backend = backend
        self.prompts = prompts
        self.log = log
        self.maximumCallLength = maximumCallLength
        self.wallClock = wallClock
        anchor?.promptEvents = { [weak self] callID, event in self?.promptEvent(event, callID: callID) }
    }

    /// Where a call goes on to a user or a call out (`connectMxp`, `connectPstn`,
    /// `connectSip` after the server answered): the engine starts it as a call in, its
    /// caller's leg kept (`MediaAnchor.reanswerPromptCaller`), and its record goes on. The engine answers nil when it took the call,
    /// else why it refused it: it has told the caller (BYE) and sent the DiCE, and the
    /// record ends here with that error. Set by the engine; nil: such actions end the call
    /// with INVALIDSVAMLACTION.
    var connect: ((InboundSIPCall, CallEngine.BackendCall, SVAMLAction) -> CallError?)?

    /// Where `startRecording` and `stopRecording` go (set by the engine); nil: skipped.
    var recordings: CallRecordings?

    /// Whether an ICE answer needs the server to answer the call: `runMenu` or `park`, or
    /// `hangup`/`continue`/`connectMxp`/`connectPstn`/`connectSip` after something the
    /// caller hears (`say`, `playFiles`, `answer`, `sendDtmf`). Instructions before
    /// `connectConf` are not carried out.
    static func answers(_ svaml: SVAMLResponse) -> Bool {
        switch svaml.action {
        case .runMenu, .park: return true
        case .connectConf: return false
        case .hangup, .continue, .connectMxp, .connectPstn, .connectSip:
            return svaml.instructions.contains {
                switch $0 {
                case .say, .playFiles, .answer, .sendDtmf: true
                default: false
                }
            }
        }
    }

    /// Whether `callID` is one of these calls.
    func handles(_ callID: String) -> Bool { calls[callID] != nil }

    /// The application `callID` belongs to, when it is one of these calls.
    func applicationKey(of callID: String) -> String? { calls[callID]?.context.applicationKey }

    // MARK: Entry points (the engine's loop)

    /// Answers `inbound` and runs `svaml` on it.
    func take(_ inbound: InboundSIPCall, context: CallEngine.BackendCall, svaml: SVAMLResponse) {
        let callID = inbound.party.callID
        guard let anchor, calls[callID] == nil else {
            log.warning("ivr.unavailable", ["call": callID])
            reject(inbound, context: context)
            return
        }
        let call = Call(inbound: inbound, context: context, startedTime: wallClock())
        call.steps = Self.steps(of: svaml)
        calls[callID] = call
        recorder?.persist(call.record, legs: [])
        log.info("ivr.answer", ["call": callID, "action": svaml.action.name.rawValue, "instructions": String(svaml.instructions.count)])
        anchor.answerPromptCaller(callID: callID, offer: inbound.offer, applicationKey: inbound.applicationKey,
                                  now: ClockReading(instant: loop.now, unixMilliseconds: wallClock()))
        call.lengthTimer = loop.schedule(after: maximumCallLength) { [weak self] in
            self?.end(callID, result: .answered, reason: .timeout, why: "the maximum call length passed")
        }
    }

    /// Runs `svaml` on a call now, in place of what it was doing (a REST `PATCH`): false
    /// when there is no such call here.
    @discardableResult
    func update(callID: String, svaml: SVAMLResponse) -> Bool {
        guard let call = calls[callID] else { return false }
        log.info("ivr.update", ["call": callID, "action": svaml.action.name.rawValue])
        interrupt(call)
        call.steps = Self.steps(of: svaml)
        advance(callID)
        return true
    }

    /// Hangs a call up now (a REST `PATCH` with `hangup`): BYE to the caller, DiCE with
    /// MANAGERHANGUP. False when there is no such call here.
    @discardableResult
    func hangUp(callID: String) -> Bool {
        guard calls[callID] != nil else { return false }
        end(callID, result: .answered, reason: .managerHangup, why: "hung up by the application")
        return true
    }

    /// What the media anchor reports of one of these calls.
    func mediaReported(_ event: MediaEvent, callID: String) {
        guard let call = calls[callID] else { return }
        switch event {
        case .callerLegReady(let sdp):
            let time = wallClock()
            call.answeredTime = time
            call.record.state = .answered
            call.record.times.answeredTime = time
            call.record.sipStatus = 200
            recordEstablishment(of: call)
            recorder?.persist(call.record, legs: [])
            sipCalls?.tell(call.inbound.party, .mediaReady(callID: callID, sdp: sdp))
            sipCalls?.tell(call.inbound.party, .answered(callID: callID, time: time))
            log.info("ivr.answered", ["call": callID])
            advance(callID)
        case .legConnected:
            guard !call.connected else { return }
            call.connected = true
            if recordEstablishment(of: call) { recorder?.persist(call.record, legs: []) }
            advance(callID)
        case .legFailed(_, let reason):
            end(callID, result: call.answeredTime == nil ? .failed : .answered, reason: .generalError, why: "media: \(reason)")
        case .legInactive:
            end(callID, result: .answered, reason: .generalError, why: "no media from the caller")
        case .dtmfReceived(_, let digits):
            keys(digits, callID: callID)
        case .calleeLegReady:
            break
        }
    }

    /// What the SIP user agent reports of a caller here.
    func sipReported(_ event: SIPCallEvent, callID: String) {
        guard calls[callID] != nil else { return }
        switch event {
        case .hungUp:
            end(callID, result: .answered, reason: .callerHangup, why: "the caller hung up", tellCaller: false)
        case .failed(let status, let reason):
            end(callID, result: .answered, reason: .generalError, why: "SIP \(status) \(reason)", tellCaller: false)
        case .dtmf(let digits):
            keys(digits, callID: callID)
        case .placed, .trying, .ringing, .answered, .held:
            // A caller that holds a prompt call: the prompts go on (nobody to tell).
            break
        }
    }

    /// The record is `established` once the caller has our answer and its leg is
    /// connected, in either order (a plain RTP leg may connect as it starts); true when
    /// it just became so.
    @discardableResult
    private func recordEstablishment(of call: Call) -> Bool {
        guard call.connected, call.answeredTime != nil, call.record.times.establishedTime == nil else { return false }
        call.record.state = .established
        call.record.times.establishedTime = wallClock()
        return true
    }

    /// Ends every call (shutdown).
    func endAll() {
        for callID in Array(calls.keys) { end(callID, result: .answered, reason: .generalError, why: "server shutting down") }
    }

    // MARK: Steps

    private static func steps(of svaml: SVAMLResponse) -> [Step] {
        svaml.instructions.map(Step.instruction) + [.action(svaml.action)]
    }

    /// Runs the next steps until one has to wait (once the caller has our answer and its
    /// leg is connected, so what plays is heard).
    private func advance(_ callID: String) {
        while let call = calls[callID], call.connected, call.answeredTime != nil, !call.busy, !call.steps.isEmpty {
            let step = call.steps.removeFirst()
            switch step {
            case .instruction(let instruction): run(instruction, on: call, callID: callID)
            case .action(let action): run(action, on: call, callID: callID)
            }
        }
    }

    private func run(_ instruction: SVAMLInstruction, on call: Call, callID: String) {
        switch instruction {
        case .say(let text, let locale):
            play([.text(text, locale: locale)], on: call, callID: callID)
        case .playFiles(let ids, let locale):
            do throws(PromptLibrary.Failure) {
                play(try PromptLibrary.parts(ofFiles: ids, locale: locale), on: call, callID: callID)
            } catch {
                log.warning("ivr.prompt.failed", ["call": callID, "reason": error.description])
            }
        case .setCookie(let key, let value):
            if let index = call.cookies.firstIndex(where: { $0.key == key }) {
                call.cookies[index].value = value
            } else if call.cookies.count < 32 {
                call.cookies.append((key, value))
            }
        case .answer:
            break  // answered already
        case .sendDtmf(let tones):
            sendDTMF(tones, on: call, callID: callID)
        case .startRecording, .stopRecording:
            recordings?.perform([instruction], callID: callID, applicationKey: call.context.applicationKey)
        }
    }

    private func run(_ action: SVAMLAction, on call: Call, callID: String) {
        switch action {
        case .hangup:
            end(callID, result: .answered, reason: .managerHangup, why: "the backend's SVAML hung up")
        case .continue:
            log.info("ivr.continue", ["call": callID])
        case .park(let park):
            log.info("ivr.park", ["call": callID, "maxDuration": park.maxDurationSeconds.map(String.init) ?? "-"])
            if let seconds = park.maxDurationSeconds, seconds > 0 {
                call.parkTimer = loop.schedule(after: .seconds(seconds)) { [weak self] in
                    self?.end(callID, result: .answered, reason: .timeout, why: "parked for its maxDuration")
                }
            }
            // The intro once, then the hold prompt's first item looped, in one queue: the
            // call stays parked (busy) until an update, a hang-up or its maxDuration.
            do throws(PromptLibrary.Failure) {
                var intro: [PromptLibrary.Part] = [], hold: [PromptLibrary.Part] = []
                if let prompt = park.introPrompt { intro = try PromptLibrary.parts(ofPrompt: prompt, locale: park.locale) }
                if let prompt = park.holdPrompt { hold = try PromptLibrary.parts(ofPrompt: prompt, locale: park.locale) }
                play(intro + hold, loopFrom: intro.count, on: call, callID: callID)
            } catch {
                log.warning("ivr.prompt.failed", ["call": callID, "reason": error.description])
                call.busy = true
            }
        case .runMenu(let menu):
            var session = MenuSession(action: menu)
            let outputs = session.start(at: loop.now)
            call.menu = session
            log.info("ivr.menu", ["call": callID, "menu": session.menu.id])
            handle(outputs, on: call, callID: callID)
        case .connectConf:
            log.warning("ivr.unsupported", ["call": callID, "action": action.name.rawValue,
                                            "reason": "connectConf after the server answered is not built yet"])
            end(callID, result: .failed, reason: .invalidSVAMLAction, why: "\(action.name.rawValue) after the server answered")
        case .connectMxp, .connectPstn, .connectSip:
            guard let connect else {
                return end(callID, result: .failed, reason: .invalidSVAMLAction, why: "\(action.name.rawValue): no engine to connect to")
            }
            guard let call = calls.removeValue(forKey: callID) else { return }
            interrupt(call)
            if let timer = call.lengthTimer { _ = loop.cancel(timer) }
            log.info("ivr.connect", ["call": callID, "action": action.name.rawValue])
            var context = call.context
            context.custom = Self.custom(of: call.cookies)
            context.serverAnsweredTime = call.answeredTime
            context.recorded = recorder != nil
            // The engine's record of the call goes on from this one (same id): its
            // states before `established` are not written again (`CallRecorder`).
            if let refusal = connect(call.inbound, context, action) {
                finishRecord(call, cause: .error, error: refusal, at: wallClock())
            }
        }
    }

    // MARK: Prompts

    private func playPrompt(_ prompt: String, locale: String?, on call: Call, callID: String) {
        do throws(PromptLibrary.Failure) {
            play(try PromptLibrary.parts(ofPrompt: prompt, locale: locale), on: call, callID: callID)
        } catch {
            log.warning("ivr.prompt.failed", ["call": callID, "reason": error.description])
            promptFailed(call, callID: callID)
        }
    }

    /// Loads `parts` and plays them; the call waits (`busy`) until the last has played.
    /// With `loopFrom`, the part at that index loops (a parked call's hold prompt): the
    /// call waits until something else moves it on.
    private func play(_ parts: [PromptLibrary.Part], loopFrom: Int? = nil, on call: Call, callID: String) {
        call.busy = true
        let generation = call.generation
        prompts.clips(parts) { [loop, weak self] result in
            guard let calls = self else { return }
            _ = loop.execute { calls.loaded(result, loopFrom: loopFrom, generation: generation, callID: callID) }
        }
    }

    private func loaded(_ result: Result<[PromptLibrary.Clip], PromptLibrary.Failure>, loopFrom: Int?, generation: Int, callID: String) {
        guard let call = calls[callID], call.generation == generation else { return }
        switch result {
        case .failure(let failure):
            log.warning("ivr.prompt.failed", ["call": callID, "reason": failure.description])
            promptFailed(call, callID: callID)
        case .success(let clips) where clips.isEmpty:
            if loopFrom == nil { promptDone(call, callID: callID) }
        case .success(let clips):
            let queued = anchor?.queuePrompt(clips, loopFrom: loopFrom, callID: callID, engine: loop) { [weak self] id in
                self?.clipQueued(id, generation: generation, callID: callID)
            } ?? false
            if !queued { promptFailed(call, callID: callID) }
        }
    }

    private func clipQueued(_ id: UInt64?, generation: Int, callID: String) {
        guard let call = calls[callID], call.generation == generation else { return }
        guard let id else {
            log.warning("ivr.prompt.failed", ["call": callID, "reason": "the prompt queue is full"])
            return promptFailed(call, callID: callID)
        }
        if id != UInt64.max { call.waitingClip = id }
    }

    private func promptEvent(_ event: PromptTopology<CallLegID>.Event, callID: String) {
        guard let call = calls[callID], case .clipFinished(let id) = event, call.waitingClip == id else { return }
        call.waitingClip = nil
        promptDone(call, callID: callID)
    }

    /// The prompt played to its end: a menu starts waiting for keys, anything else goes on.
    private func promptDone(_ call: Call, callID: String) {
        if var menu = call.menu {
            let outputs = menu.promptFinished(at: loop.now)
            call.menu = menu
            handle(outputs, on: call, callID: callID)
            return
        }
        call.busy = false
        advance(callID)
    }

    /// A prompt that cannot be played: a menu ends with an `error` result; anything else
    /// goes on without it.
    private func promptFailed(_ call: Call, callID: String) {
        if let menu = call.menu {
            call.menu = nil
            cancelMenuTimer(call)
            return postPIE(MenuResult(menuID: menu.menu.id, kind: .error, value: ""), call: call, callID: callID)
        }
        call.busy = false
        advance(callID)
    }

    /// Drops what plays and waits: a barge-in, an update, the end.
    private func stopPrompts(_ call: Call, callID: String) {
        call.generation += 1
        call.waitingClip = nil
        anchor?.withPrompts(callID: callID) { $0.stopPlaying() }
    }

    private func interrupt(_ call: Call) {
        let callID = call.inbound.party.callID
        stopPrompts(call, callID: callID)
        cancelMenuTimer(call)
        call.menu = nil
        for timer in [call.stepTimer, call.parkTimer].compactMap({ $0 }) { _ = loop.cancel(timer) }
        call.stepTimer = nil
        call.parkTimer = nil
        call.busy = false
        call.steps = []
    }

    // MARK: DTMF

    private func sendDTMF(_ tones: String, on call: Call, callID: String) {
        // `w` is half a second of pause: the digits around it are paced by the topology,
        // so the whole string waits as long as its tones and pauses take.
        let digits = String(tones.filter { $0 != "w" && $0 != "W" })
        let pauses = tones.count - digits.count
        if !digits.isEmpty { anchor?.withPrompts(callID: callID) { _ = $0.sendDTMF(digits) } }
        call.busy = true
        let wait = Duration.milliseconds(180 * digits.count + 500 * pauses)
        call.stepTimer = loop.schedule(after: wait) { [weak self] in
            guard let self, let call = self.calls[callID] else { return }
            call.stepTimer = nil
            call.busy = false
            self.advance(callID)
        }
    }

    private func keys(_ digits: String, callID: String) {
        guard let call = calls[callID], var menu = call.menu else { return }
        var outputs: [MenuSession.Output] = []
        for key in digits { outputs += menu.key(key, at: loop.now) }
        call.menu = menu
        handle(outputs, on: call, callID: callID)
    }

    // MARK: Menus

    private func handle(_ outputs: [MenuSession.Output], on call: Call, callID: String) {
        for output in outputs {
            guard calls[callID] != nil else { return }
            switch output {
            case .play(let prompt):
                playPrompt(prompt, locale: call.menu?.action.locale, on: call, callID: callID)
            case .stopPrompt:
                stopPrompts(call, callID: callID)
            case .finished(let result):
                call.menu = nil
                cancelMenuTimer(call)
                log.info("ivr.menu.result", ["call": callID, "menu": result.menuID, "type": result.kind.rawValue])
                postPIE(result, call: call, callID: callID)
            }
        }
        rescheduleMenu(call, callID: callID)
    }

    private func rescheduleMenu(_ call: Call, callID: String) {
        cancelMenuTimer(call)
        guard let deadline = call.menu?.deadline else { return }
        call.menuTimer = loop.schedule(at: deadline) { [weak self] in
            guard let self, let call = self.calls[callID], var menu = call.menu else { return }
            call.menuTimer = nil
            let outputs = menu.timeout(at: self.loop.now)
            call.menu = menu
            self.handle(outputs, on: call, callID: callID)
        }
    }

    private func cancelMenuTimer(_ call: Call) {
        if let timer = call.menuTimer { _ = loop.cancel(timer) }
        call.menuTimer = nil
    }

    // MARK: Callbacks

    /// The header of a callback about the call: cookies go in `custom`, as a JSON object.
    private func header(_ call: Call, callID: String) -> CallbackHeader? {
        guard let timestamp = try? SinchTimestamp(unixMilliseconds: wallClock()) else { return nil }
        return CallbackHeader(callID: callID, timestamp: timestamp, custom: Self.custom(of: call.cookies),
                              applicationKey: call.context.applicationKey)
    }

    /// Cookies as a callback's `custom`: one compact JSON object; nil when none were set.
    static func custom(of cookies: [(key: String, value: String)]) -> String? {
        guard !cookies.isEmpty else { return nil }
        var object = JSONObject()
        for cookie in cookies { object.append(cookie.key, cookie.value) }
        return String(decoding: JSONWriter.serialize(.object(object)), as: UTF8.self)
    }

    private func postPIE(_ result: MenuResult, call: Call, callID: String) {
        call.busy = true
        guard let backend, let header = header(call, callID: callID) else {
            return end(callID, result: .answered, reason: .callbackError, why: "no backend for the PIE")
        }
        guard backend.sends(.pie, applicationKey: call.context.applicationKey) else {
            log.warning("backend.pie.failed", ["call": callID, "reason": CallbackErrorText.noPIE])
            return end(callID, result: .answered, reason: .callbackError, why: CallbackErrorText.noPIE)
        }
        log.info("backend.pie", ["call": callID, "menu": result.menuID, "type": result.kind.rawValue])
        let generation = call.generation
        backend.post(.promptInput(PromptInputEvent(header: header, menuResult: result)), applicationKey: call.context.applicationKey) {
            [loop, weak self] answer in
            guard let calls = self else { return }
            _ = loop.execute { calls.pieAnswered(answer, generation: generation, callID: callID) }
        }
    }

    private func pieAnswered(_ answer: Result<SVAMLResponse?, BackendCallbacks.Failure>, generation: Int, callID: String) {
        guard let call = calls[callID], call.generation == generation else { return }
        switch answer {
        case .failure(let failure):
            log.warning("backend.pie.failed", ["call": callID, "reason": failure.reason.rawValue, "detail": failure.message])
            end(callID, result: .answered, reason: failure.reason, why: "the PIE's answer: \(failure.message)")
        case .success(nil):
            end(callID, result: .answered, reason: .callbackError, why: "the PIE got no SVAML")
        case .success(let svaml?):
            call.busy = false
            call.steps = Self.steps(of: svaml)
            advance(callID)
        }
    }

    private enum CallbackErrorText {
        static let noPIE = "runMenu needs pie among the application's callback events"
    }

    // MARK: The end

    /// Ends a call: BYE (or a final failure before the answer) unless the caller ended it,
    /// its media closed, its DiCE sent.
    private func end(_ callID: String, result: DisconnectResult, reason: DisconnectReason, why: String, tellCaller: Bool = true) {
        guard let call = calls.removeValue(forKey: callID) else { return }
        interrupt(call)
        if let timer = call.lengthTimer { _ = loop.cancel(timer) }
        let time = wallClock()
        log.info("ivr.ended", ["call": callID, "result": result.rawValue, "reason": reason.rawValue, "why": why])
        if tellCaller {
            let answered = call.answeredTime != nil
            sipCalls?.tell(call.inbound.party, .ended(
                callID: callID, cause: answered ? .hungUp : .error,
                error: answered ? nil : .init(code: .destinationUnavailable, message: why),
                details: CallTimes(startedTime: call.answeredTime ?? time, answeredTime: call.answeredTime, endedTime: time)))
        }
        let duration = call.answeredTime.map { max(0, (time - $0) / 1000) } ?? 0
        let outcome = SinchCallOutcome(result: call.answeredTime == nil ? .failed : result, reason: reason)
        // What GET /calling/v1/calls/id/{callId} says is what the DiCE says.
        recorder?.recordOutcome(callID: callID, applicationKey: call.context.applicationKey, outcome, at: time)
        let (cause, error) = Self.endCause(answered: call.answeredTime != nil, reason: reason, why: why)
        finishRecord(call, cause: cause, error: error, at: time)
        sendDiCE(call, callID: callID, result: outcome.result, reason: outcome.reason, durationSeconds: duration)
    }

    /// Closes the call's media and writes its record's last version with the legs' final
    /// figures (when they come back from the media loop).
    private func finishRecord(_ call: Call, cause: CallEndCause, error: CallError?, at time: Int64) {
        var record = call.record
        record.state = .ended
        record.endCause = cause
        record.error = error
        record.times.endedTime = time
        call.record = record
        guard let anchor else {
            recorder?.persist(record, legs: [])
            return
        }
        anchor.closeAll(callID: record.callID, now: loop.now) { [recorder, wallClock, record] statistics in
            recorder?.persist(record, legs: CallEngine.storedLegs(statistics, of: record, at: wallClock()))
        }
    }

    /// A call's record as the server answers it: from the caller to the number dialled
    /// (`phoneToPhone` or `sipToPhone`, as a bridge's, whose callee is a number too).
    static func record(of inbound: InboundSIPCall, startedTime: Int64) -> CallRecord {
        let caller = inbound.party.address
        var record = CallRecord(
            callID: inbound.party.callID, applicationKey: inbound.applicationKey,
            direction: CallDirection(bridgedFrom: caller.kind, to: .phone) ?? .sipToPhone, caller: caller, callerDeviceID: nil,
            callee: .phone(inbound.dialled), headers: inbound.headers, video: false, startedTime: startedTime)
        record.sipCallID = inbound.sipCallID.map { String($0.prefix(256)) }
        return record
    }

    /// The record's end of a call that ended here for `reason`: `hungUp` (whoever hung
    /// up), `timeout`, or an `error` saying why (`media_failed` before the answer).
    static func endCause(answered: Bool, reason: DisconnectReason, why: String) -> (CallEndCause, CallError?) {
        if answered, reason == .timeout { return (.timeout, nil) }
        if answered, [.callerHangup, .calleeHangup, .managerHangup].contains(reason) { return (.hungUp, nil) }
        let code: SignalingErrorCode = answered ? .internalError : .mediaFailed
        return (.error, CallError(code: code.rawValue, message: String(why.prefix(512))))
    }

    private func reject(_ inbound: InboundSIPCall, context: CallEngine.BackendCall) {
        let time = wallClock()
        sipCalls?.tell(inbound.party, .ended(
            callID: inbound.party.callID, cause: .error, error: .init(code: .destinationUnavailable, message: "no media anchor"),
            details: CallTimes(startedTime: time, endedTime: time)))
        let call = Call(inbound: inbound, context: context, startedTime: time)
        sendDiCE(call, callID: inbound.party.callID, result: .failed, reason: .generalError, durationSeconds: 0)
    }

    private func sendDiCE(_ call: Call, callID: String, result: DisconnectResult, reason: DisconnectReason, durationSeconds: Int64) {
        guard let backend, backend.sends(.dice, applicationKey: call.context.applicationKey), let header = header(call, callID: callID) else { return }
        let event = DisconnectedCallEvent(
            header: header, result: result, reason: reason, durationSeconds: durationSeconds, from: call.context.from,
            to: call.context.to, callHeaders: call.context.headers)
        log.info("backend.dice", ["call": callID, "result": result.rawValue, "reason": reason.rawValue])
        backend.post(.disconnected(event), applicationKey: call.context.applicationKey) { _ in }
    }
}
