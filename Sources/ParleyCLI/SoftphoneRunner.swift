import Foundation
import ParleySDK
import ParleySDKLinux

/// Carries out `SoftphoneController`'s actions with the real SDK: one `ParleyClient`,
/// its calls through the system-call integration with the headless provider (as an iOS
/// app runs them through CallKit), a 100 ms clock tick, Ctrl-C and standard input.
/// Everything runs on the main queue (the SDK's callback queue and the provider's
/// queue), so the controller needs no lock.
enum SoftphoneRunner {
    static func run(_ options: SoftphoneOptions, pushPayload: [String: String]?) -> Never {
        let shell = SoftphoneShell(options: options, pushPayload: pushPayload)
        shell.start()
        // The SDK holds its delegates weakly: keep the shell alive for the process's life.
        withExtendedLifetime(shell) { dispatchMain() }
    }
}

extension SoftphoneOptions.Mode {
    var commandName: String {
        switch self {
        case .call: "call"
        case .listen: "listen"
        }
    }
}

/// Standard output for people or scripts: finished lines, plus on a terminal one status
/// line that is rewritten in place (`\r` and erase-line) and cleared before the next line.
final class SoftphoneOutput: @unchecked Sendable {
    // Used only on the main queue; @unchecked because that confinement is the synchronisation.
    private let isTerminal: Bool
    private var statusShown = false
    private let prefix: String

    init(isTerminal: Bool, command: String) {
        self.isTerminal = isTerminal
        self.prefix = "parley \(command): "
    }

    func line(_ text: String) {
        write(clearStatus() + text + "\n")
    }

    func status(_ text: String) {
        guard isTerminal else { return line(text) }
        statusShown = true
        write("\r\u{1B}[K" + text)
    }

    func error(_ text: String) {
        write(clearStatus())
        FileHandle.standardError.write(Data((prefix + text + "\n").utf8))
    }

    func finish() { write(clearStatus()) }

    private func clearStatus() -> String {
        guard statusShown else { return "" }
        statusShown = false
        return "\r\u{1B}[K"
    }

    private func write(_ text: String) {
        guard !text.isEmpty else { return }
        // FileHandle writes are unbuffered: a script reading the pipe sees each line at once.
        FileHandle.standardOutput.write(Data(text.utf8))
    }
}

/// Milliseconds since the Unix epoch, from the wall clock (the times people read).
func softphoneNowMs() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) }

/// The SDK side of the softphone. Confined to the main queue.
///
/// Calls go through `ParleySystemCallService` over a `HeadlessSystemCallProvider`, the
/// way the same code runs on iOS over CallKit: incoming calls are reported to the
/// provider before the controller hears of them, answers and hang-ups are the provider's
/// actions (a user tapping the system screen), outgoing calls are the provider's start
/// actions, and call audio runs only while the provider's audio session is active.
final class SoftphoneShell: ParleyClientDelegate, ParleyPushDelegate, ParleyCallObserver, @unchecked Sendable {
    // Every member is touched only on the main queue (the SDK's callbackQueue, the timer's
    // and the signal sources' queue); @unchecked because that confinement is the synchronisation.
    private let options: SoftphoneOptions
    /// `--relay-push`: the push's data, as PushKit or FCM hands it to an app.
    private let pushPayload: [String: String]?
    private var controller: SoftphoneController
    private let output: SoftphoneOutput
    private var client: ParleyClient?
    private var mediator: ParleyCallMediator?
    private var callService: ParleySystemCallService?
    /// The headless "system": its queue is the main queue, so its actions and audio
    /// activations reach the service on the same queue as the SDK's events.
    private let provider = HeadlessSystemCallProvider(queue: .main)
    private var calls: [String: ParleyCall] = [:]
    private var activeCallID: String?
    private var tokenUsed = false
    private var timer: (any DispatchSourceTimer)?
    private var signalSources: [any DispatchSourceSignal] = []
    /// The exit status, once the controller has asked to exit.
    private var exitCode: SoftphoneExitCode?
    /// The client asked to terminate has stopped: every call's media closed and its
    /// recording written, the close frame sent.
    private var clientStopped = false
    /// The longest the process waits for that before it exits anyway.
    static let stopWait: DispatchTimeInterval = .seconds(20)

    init(options: SoftphoneOptions, pushPayload: [String: String]?) {
        self.options = options
        self.pushPayload = pushPayload
        let isTerminal = isatty(STDOUT_FILENO) == 1
        let offset = TimeZone.current.secondsFromGMT(for: Date())
        controller = SoftphoneController(
            options: options, formatter: SoftphoneFormatter(json: options.json, utcOffsetSeconds: offset), isTerminal: isTerminal)
        output = SoftphoneOutput(isTerminal: isTerminal, command: options.mode.commandName)
    }

    func start() {
        signal(SIGPIPE, SIG_IGN)
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .main)
            source.setEventHandler { [weak self] in self?.feed(.interrupt) }
            source.resume()
            signalSources.append(source)
        }
        do {
            let store: any ParleyPushRegistrationStore = options.pushStorePath.map {
                FilePushRegistrationStore(url: URL(fileURLWithPath: $0))
            } ?? InMemoryPushRegistrationStore()
            var audioDevice = LinuxAudioDevice.systemDefault
            if case .device(let name) = options.source { audioDevice = LinuxAudioDevice(name: name) }
            let engines = try LinuxEngines.make(for: ParleyServerEndpoint(parsing: options.serverURL), caFile: options.caFile,
                                                audioDevice: audioDevice)
            let client = try ParleyClient(
                applicationKey: options.applicationKey, environmentHost: options.serverURL, userId: options.userID,
                cli: options.cli, deviceId: options.deviceID, callbackQueue: .main, pushRegistrationStore: store, engines: engines)
            client.delegate = self
            client.pushDelegate = self
            if let name = options.displayName { client.setPushNotificationDisplayName(name) }
            let mediator = ParleyCallMediator(client: client)
            // The service observes first, so an incoming call is reported to the provider
            // before this shell (and its controller) sees it.
            callService = ParleySystemCallService(client: client, mediator: mediator, provider: provider)
            mediator.addObserver(self)
            self.mediator = mediator
            switch options.source {
            case .tone(let frequency): client.audioController.source = .tone(frequency: frequency)
            case .wavFile(let path): client.audioController.source = .wavFile(path: path, looping: true)
            case .device: client.audioController.source = .device
            }
            if case .device = options.source {
                client.audioController.sink = .device
            } else {
                client.audioController.sink = options.recordPath.map { .wavFile(path: $0) } ?? .discard
            }
            self.client = client
        } catch {
            output.error(error.message)
            exit(SoftphoneExitCode.usage.rawValue)
        }
        perform(controller.start(nowMs: softphoneNowMs()))
        if let push = options.pushToken { registerPushToken(push) }
        if let pushPayload { relayPush(pushPayload) }

        let timer = DispatchSource.makeTimerSource(queue: .main)
        timer.schedule(deadline: .now() + .milliseconds(100), repeating: .milliseconds(100))
        timer.setEventHandler { [weak self] in
            guard let self else { return }
            self.feed(.tick(statistics: self.activeCallID.flatMap { self.calls[$0] }.map { Self.statistics($0.statistics) }))
        }
        timer.resume()
        self.timer = timer

        // Lines typed during a call: answer, decline and hang up (`listen`), hold and resume (both).
        startReadingInput()
    }

    private func feed(_ input: SoftphoneController.Input) {
        perform(controller.handle(input, nowMs: softphoneNowMs()))
    }

    private func perform(_ actions: [SoftphoneController.Action]) {
        for action in actions {
            switch action {
            case .print(let line): output.line(line)
            case .status(let text): output.status(text)
            case .error(let text): output.error(text)
            case .startClient: client?.start()
            case .placeCall(let callee, let headers, let kind):
                guard let callService else { continue }
                // The provider performs the start action on the main queue and the
                // completion runs there, before any event of the new call.
                let started: @Sendable (Result<ParleyCall, any Error>) -> Void = { [weak self] result in
                    // Not hopped through another async: the call's own events must not overtake it.
                    dispatchPrecondition(condition: .onQueue(.main))
                    self?.outgoingCallStarted(result)
                }
                switch kind {
                case .phone: callService.startCall(toPhoneNumber: callee, headers: headers, completion: started)
                case .sip: callService.startCall(toSIP: callee, headers: headers, completion: started)
                case .conference: callService.startCall(toConference: callee, headers: headers, completion: started)
                case .user: callService.startCall(toUserId: callee, headers: headers, completion: started)
                }
            case .answer(let callID):
                // As the user tapping "answer" on the system screen; the service answers
                // the call when it performs the action, and the provider then activates audio.
                if let uuid = callService?.systemCallUUID(forCallId: callID) {
                    provider.answerFromSystemUI(uuid)
                } else {
                    // The system refused the call (the service hangs it up): nothing to answer.
                    output.error("call \(callID) is not on the system's screen; cannot answer it")
                }
            case .sendDTMF(let callID, let tones):
                if calls[callID]?.sendDTMF(tones) != true {
                    output.error("call \(callID): could not send DTMF \(tones)")
                }
            case .setHeld(let callID, let held):
                // Straight through the call: its completion says whether the server took it.
                calls[callID]?.setHeld(held) { [weak self] error in
                    guard let error else { return }
                    DispatchQueue.main.async { self?.feed(.holdRefused(callID: callID, held: held, message: "\(error)")) }
                }
            case .hangUp(let callID):
                if let uuid = callService?.systemCallUUID(forCallId: callID) {
                    provider.endFromSystemUI(uuid)
                } else if let call = calls[callID] {
                    // Not (or no longer) known to the system: the service hangs up directly.
                    callService?.endCall(call)
                }
            case .terminateClient:
                guard let client else {
                    clientStopped = true
                    continue
                }
                // The completion runs once the recording is on disk and the close frame
                // is out: exiting before that lost recordings.
                client.terminateGracefully { [weak self] in
                    dispatchPrecondition(condition: .onQueue(.main))
                    self?.clientHasStopped()
                }
            case .exit(let code):
                output.finish()
                timer?.cancel()
                exitCode = code
                if clientStopped || client == nil { exit(code.rawValue) }
                // Bounded: should the SDK never finish, leave anyway.
                DispatchQueue.main.asyncAfter(deadline: .now() + Self.stopWait) { exit(code.rawValue) }
            }
        }
    }

    private func clientHasStopped() {
        clientStopped = true
        if let exitCode { exit(exitCode.rawValue) }
    }

    private func outgoingCallStarted(_ result: Result<ParleyCall, any Error>) {
        switch result {
        case .success(let call):
            calls[call.callId] = call
            activeCallID = call.callId
            feed(.callPlaced(callID: call.callId))
        case .failure(let error):
            feed(.callFailedToStart(message: Self.message(error)))
        }
    }

    /// `--push-token`: handed to the SDK now, sent once signed in. The SDK does not send an
    /// unchanged token it already registered (that would replace the push key under pushes
    /// on their way), so that case is reported here.
    private func registerPushToken(_ push: SoftphoneOptions.PushToken) {
        guard let client else { return }
        let type: ParleyPushType = push.service == .fcm ? .fcm : .apnsVoip
        let environment: ParleyPushEnvironment = push.environment == .sandbox ? .sandbox : .production
        if let stored = client.pushRegistrationStore.load(), stored.userId == client.userId, stored.deviceId == client.deviceId,
           stored.pushType == type, stored.token == push.token, stored.environment == environment, stored.appId == push.appID {
            return feed(.pushRegistered(alreadyRegistered: true))
        }
        do {
            try client.registerPushNotificationDeviceToken(push.token, type: type, environment: environment, appId: push.appID)
        } catch {
            feed(.pushRegistrationFailed(message: error.message))
        }
    }

    /// `--relay-push`: what an app woken by the push does. The service reports the call to
    /// the (headless) system first, then relays it; the call then arrives as any other.
    private func relayPush(_ payload: [String: String]) {
        guard let client, let callService else { return }
        let query = client.queryPushNotificationPayload(payload)
        guard query.isCall, let call = query.callResult else {
            return feed(.pushRefused(message: query.isCall
                ? "the push does not verify with the registration in --push-store for --device-id (another device, or registered again since)"
                : "not a Parley push"))
        }
        callService.reportIncomingPush(payload) { [weak self] error in
            DispatchQueue.main.async {
                if call.isTimedOut {
                    self?.feed(.pushExpired(callID: call.callId, caller: call.remoteUserId))
                } else if let error {
                    self?.feed(.pushRefused(message: Self.message(error)))
                } else {
                    self?.feed(.pushRelayed(callID: call.callId, caller: call.remoteUserId))
                }
            }
        }
    }

    /// Standard input, line by line, on a thread of its own (reads block).
    private func startReadingInput() {
        let thread = Thread { [weak self] in
            while let line = readLine(strippingNewline: true) {
                DispatchQueue.main.async { self?.feed(.inputLine(line)) }
            }
            DispatchQueue.main.async { self?.feed(.inputClosed) }
        }
        thread.start()
    }

    // MARK: ParleyClientDelegate

    func clientRequiresRegistrationCredentials(_ client: ParleyClient, withCallback callback: ParleyClientRegistration) {
        switch options.credentials {
        case .secret(let secret, let lifetime):
            let tokenOptions = TokenCommand.Options(
                applicationKey: options.applicationKey, secret: secret, userID: options.userID, lifetime: lifetime)
            do throws(SoftphoneUsageError) {
                callback.register(withJWT: try TokenCommand.mint(tokenOptions, now: softphoneNowMs() / 1000))
            } catch {
                callback.registerDidFail(error: error)
            }
        case .token(let token):
            // A nonce works once: a reconnect needs a new token, which --token cannot give.
            if tokenUsed {
                callback.registerDidFail(error: SoftphoneUsageError("--token was used for one connect already; use --secret to reconnect"))
            } else {
                tokenUsed = true
                callback.register(withJWT: token)
            }
        }
    }

    func clientDidStart(_ client: ParleyClient) { feed(.clientStarted) }

    func clientDidFail(_ client: ParleyClient, error: any Error) { feed(.clientFailed(message: Self.message(error))) }

    // MARK: ParleyPushDelegate

    func clientDidRegisterPushNotificationDeviceToken(_ client: ParleyClient) { feed(.pushRegistered(alreadyRegistered: false)) }

    func client(_ client: ParleyClient, didFailToRegisterPushNotificationDeviceTokenWithError error: any Error) {
        feed(.pushRegistrationFailed(message: Self.message(error)))
    }

    // MARK: ParleyCallObserver

    func mediator(_ mediator: ParleyCallMediator, didReceiveIncomingCall call: ParleyCall) {
        calls[call.callId] = call
        if activeCallID == nil { activeCallID = call.callId }
        feed(.incomingCall(callID: call.callId, caller: call.remoteUserId, headers: call.headers, displayName: call.remoteDisplayName))
    }

    func callDidProgress(_ call: ParleyCall) { feed(.progressed(callID: call.callId)) }
    func callDidRing(_ call: ParleyCall) { feed(.rang(callID: call.callId, responseHeaders: call.responseHeaders)) }
    func callDidAnswer(_ call: ParleyCall) { feed(.answered(callID: call.callId, responseHeaders: call.responseHeaders)) }
    func call(_ call: ParleyCall, didReceiveDTMF digits: String) { feed(.dtmfReceived(callID: call.callId, digits: digits)) }
    func call(_ call: ParleyCall, didChangeTalkers talkers: [ParleyConferenceTalker]) {
        feed(.talkersChanged(callID: call.callId, userIDs: talkers.map(\.userId)))
    }
    func callDidEstablish(_ call: ParleyCall) { feed(.established(callID: call.callId)) }
    func callDidChangeHold(_ call: ParleyCall) {
        feed(.holdChanged(callID: call.callId, held: call.isHeld, remoteHeld: call.isRemoteHeld))
    }

    func callDidEnd(_ call: ParleyCall) {
        let details = call.details
        feed(.ended(
            callID: call.callId, cause: details.endCause, errorCode: details.error?.code,
            errorMessage: details.error?.message, statistics: Self.statistics(call.statistics)))
        calls[call.callId] = nil
        if activeCallID == call.callId { activeCallID = nil }
    }

    // MARK: Mapping SDK values

    static func statistics(_ statistics: ParleyCallStatistics) -> SoftphoneStatistics {
        SoftphoneStatistics(
            packetsSent: Int(clamping: statistics.packetsSent), packetsReceived: Int(clamping: statistics.packetsReceived),
            packetsLost: Int(clamping: max(0, statistics.packetsLost)),
            // The SDK reports 0 jitter before any packet arrived; show that as unknown.
            jitterMs: statistics.packetsReceived > 0 ? statistics.jitterMilliseconds : nil,
            roundTripMs: statistics.roundTripTimeMilliseconds,
            playout: SoftphoneStatistics.Playout(
                framesPlayed: Int(clamping: statistics.framesPlayed), framesFECRecovered: Int(clamping: statistics.framesFECRecovered),
                framesConcealed: Int(clamping: statistics.framesConcealed), framesComfortNoise: Int(clamping: statistics.framesComfortNoise),
                framesSilent: Int(clamping: statistics.framesSilent), framesStretched: Int(clamping: statistics.framesStretched),
                framesShrunk: Int(clamping: statistics.framesShrunk), packetsLate: Int(clamping: statistics.packetsLate),
                targetDelayMs: statistics.targetDelayMilliseconds, currentDelayMs: statistics.currentDelayMilliseconds),
            audioCaptureStartedMs: statistics.audioCaptureStartedAt.map { $0.timeIntervalSince1970 * 1000 },
            audioPlayoutStartedMs: statistics.audioPlayoutStartedAt.map { $0.timeIntervalSince1970 * 1000 })
    }

    static func message(_ error: any Error) -> String {
        if let error = error as? ParleyClientError { return error.message }
        if let error = error as? ParleyCallError { return error.message }
        if let error = error as? SystemCallError { return "the system refused the call: \(error.message)" }
        return String(describing: error)
    }
}
