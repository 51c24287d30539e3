import Foundation
import ParleyCrypto
import ParleyEdgeIO
import ParleyMediaCore
import ParleyMediaLegCore
import ParleyMediaLegIO
import ParleyNetLinux
import ParleySignaling
import ParleyWebSocket
import ParleySDK
@_spi(ParleyEngines) @testable import ParleySDKCore

/// A small protocol peer inside the test, on a real `EdgeServer` on 127.0.0.1: it answers
/// `hello` (resuming session `s-1` when asked), `ping`, and call requests, and can send a
/// `call.incoming` whose offer comes from a real lite `MediaLeg`. Not the server: just
/// enough of protocol.md to exercise the SDK's transport, reconnects and media.
final class ScriptedPeer: @unchecked Sendable {
    // @unchecked: mutable state is in `Locked`; the server and loop are thread-safe.
    let server: EdgeServer
    let mediaLoop: EventLoop
    let received = Locked<[SignalingMessage]>([])
    let sockets = Locked<[EdgeWebSocket]>([])
    let serverLeg = Locked<MediaLeg?>(nil)
    /// The start of the leg an early media answer (call.ack with SDP) began.
    private let legStarted = Locked<Task<Void, Never>?>(nil)
    private let established = Locked<Set<String>>([])
    /// The far side's headers a caller's `call.ringing` and `call.answered` carry (as a
    /// SIP far side's would).
    let responseHeaders = Locked<(ringing: [String: String], answered: [String: String])>(([:], [:]))
    /// The RFC 4733 events the caller's leg received: `event code` and whether it ended.
    let telephoneEvents = Locked<[String]>([])

    init() throws {
        mediaLoop = try EventLoop(name: "peer-media")
        let box = Locked<ScriptedPeer?>(nil)
        server = try EdgeServer(
            configuration: EdgeConfiguration(listenAddresses: [.ipv4Loopback(port: 0)], loopCount: 1),
            handlers: EdgeHandlers(webSocket: WebSocketRoute(
                path: SignalingCodec.path,
                accept: { upgrade, _ in
                    upgrade.subprotocols.contains(SignalingCodec.subprotocol)
                        ? .accept(subprotocol: SignalingCodec.subprotocol) : .reject(status: 426, message: "parley.v1 required")
                },
                onOpen: { socket in box.current?.sockets.withLock { $0.append(socket) } },
                onMessage: { socket, message in box.current?.handle(socket, message) })))
        box.withLock { $0 = self }
    }

    var url: String { "http://127.0.0.1:\(server.localAddresses[0].port)" }

    func shutdown() {
        server.shutdown(gracePeriod: .milliseconds(200))
        mediaLoop.shutdown()
    }

    func messages(ofType type: SignalingMessageType) -> [SignalingMessage] {
        received.current.filter { $0.type == type }
    }

    /// Sends a frame to the newest connection.
    func send(_ message: SignalingMessage) {
        _ = sockets.current.last?.send(.text(SignalingCodec.encodeToString(message)))
    }

    /// Closes the newest connection with `code`, as the server would.
    func closeNewest(code: UInt16) {
        sockets.current.last?.close(code: WebSocketCloseCode(rawValue: code))
    }

    /// Rings the client with an offer from a lite leg that sends a `frequency` tone.
    func ring(callID: String, from caller: String, frequency: Double) async throws {
        let leg = try MediaLeg(configuration: MediaLegConfiguration(iceMode: .lite, certificate: try DTLSCertificate.generate()),
                               bindingTo: [.ipv4Loopback(port: 0)], on: mediaLoop)
        serverLeg.withLock { $0 = leg }
        let offer = try await leg.makeOffer()
        send(.callIncoming(.init(callID: callID, from: .user(caller), headers: ["topic": "test"], time: Self.millis(), sdp: offer)))
    }

    static func millis() -> Int64 { Int64(Date().timeIntervalSince1970 * 1000) }

    private func handle(_ socket: EdgeWebSocket, _ message: WebSocketMessage) {
        guard case .text(let text) = message,
              let decoded = try? SignalingCodec.decode(text, sender: .deviceToServer) else { return }
        received.withLock { $0.append(decoded) }
        let reply: (SignalingMessage) -> Void = { _ = socket.send(.text(SignalingCodec.encodeToString($0))) }
        switch decoded {
        case .hello(let hello):
            reply(.helloOK(.init(replyTo: hello.requestID, sessionID: "s-1", userID: "bob", serverVersion: "test",
                                 heartbeatInterval: 1000, time: Self.millis(), resumed: hello.resumeSessionID == "s-1")))
        case .ping(let ping):
            reply(.pong(.init(replyTo: ping.requestID)))
        case .callAck(let request):
            reply(.result(.init(replyTo: request.requestID)))
            // An early media answer: the leg connects now, its tone starts at the answer
            // (as parleyd bridges only then).
            if let sdp = request.sdp {
                let started = Task { await self.startServerLeg(acceptingAnswer: sdp) }
                legStarted.withLock { $0 = started }
            }
        case .callAnswer(let answer):
            reply(.result(.init(replyTo: answer.requestID)))
            reply(.callAnswered(.init(callID: answer.callID, time: Self.millis())))
            let early = legStarted.current
            Task {
                // The leg started at call.ack must be started before it gets its tone.
                await early?.value
                if early == nil, let sdp = answer.sdp { await self.startServerLeg(acceptingAnswer: sdp) }
                await self.establish(callID: answer.callID, socket: socket)
            }
        case .callStart(let start):
            reply(.result(.init(replyTo: start.requestID)))
            Task { await self.answerCaller(start, socket: socket) }
        case .callHangup(let request):
            reply(.result(.init(replyTo: request.requestID)))
            reply(.callEnded(.init(callID: request.callID, cause: established.current.contains(request.callID) ? .hungUp : .canceled,
                                   details: .init(startedTime: Self.millis() - 1000, endedTime: Self.millis()))))
        default:
            break
        }
    }

    private func startServerLeg(acceptingAnswer sdp: String) async {
        guard let leg = serverLeg.current else { return }
        do {
            try await leg.acceptAnswer(sdp)
            try await leg.start(sink: WAVFileSink(sampleRate: 48_000))
        } catch { return }
    }

    /// The callee answered: the server leg sends its tone, and `call.established` follows
    /// once the leg is connected.
    private func establish(callID: String, socket: EdgeWebSocket) async {
        guard let leg = serverLeg.current else { return }
        await leg.attach(source: ToneSource(frequency: 1000, amplitude: 0.3), sink: WAVFileSink(sampleRate: 48_000))
        if await leg.waitUntil(timeout: .seconds(10), { $0 != .new && $0 != .checking }) == .connected {
            established.withLock { _ = $0.insert(callID) }
            _ = socket.send(.text(SignalingCodec.encodeToString(.callEstablished(.init(callID: callID, time: Self.millis())))))
        }
    }

    /// The caller's side: a lite leg answers the device's offer; progress, ringing,
    /// answered at once; established once the leg connects.
    private func answerCaller(_ start: SignalingMessage.CallStart, socket: EdgeWebSocket) async {
        let send: (SignalingMessage) -> Void = { _ = socket.send(.text(SignalingCodec.encodeToString($0))) }
        do {
            let leg = try MediaLeg(configuration: MediaLegConfiguration(iceMode: .lite, certificate: try DTLSCertificate.generate()),
                                   bindingTo: [.ipv4Loopback(port: 0)], on: mediaLoop)
            serverLeg.withLock { $0 = leg }
            let events = telephoneEvents
            await leg.observeTelephoneEvents { event, _ in events.withLock { $0.append("\(event.event) \(event.isEnd)") } }
            let answer = try await leg.answer(offer: start.sdp)
            let headers = responseHeaders.current
            send(.callMedia(.init(callID: start.callID, sdp: answer)))
            send(.callProgress(.init(callID: start.callID, time: Self.millis())))
            send(.callRinging(.init(callID: start.callID, time: Self.millis(), headers: headers.ringing)))
            send(.callAnswered(.init(callID: start.callID, time: Self.millis(), headers: headers.answered)))
            try await leg.start(source: ToneSource(frequency: 1000, amplitude: 0.3), sink: WAVFileSink(sampleRate: 48_000))
            if await leg.waitUntil(timeout: .seconds(10), { $0 != .new && $0 != .checking }) == .connected {
                established.withLock { _ = $0.insert(start.callID) }
                send(.callEstablished(.init(callID: start.callID, time: Self.millis())))
            }
        } catch {
            send(.callEnded(.init(callID: start.callID, cause: .error, error: .init(code: .mediaFailed, message: "\(error)"),
                                  details: .init(startedTime: Self.millis(), endedTime: Self.millis()))))
        }
    }
}

/// Records every delegate call as a line, answers token requests with numbered tokens,
/// and can answer incoming calls.
final class RecordingDelegate: ParleyClientDelegate, ParleyCallClientDelegate, ParleyCallDelegate, @unchecked Sendable {
    // @unchecked: state is `Locked`; the SDK calls it on one serial queue.
    let lines = Locked<[String]>([])
    let calls = Locked<[ParleyCall]>([])
    let tokens = Locked(0)
    let answerIncoming: Bool

    init(answerIncoming: Bool = true) { self.answerIncoming = answerIncoming }

    func clientRequiresRegistrationCredentials(_ client: ParleyClient, withCallback callback: ParleyClientRegistration) {
        let n = tokens.withLock { $0 += 1; return $0 }
        lines.withLock { $0.append("token?") }
        callback.register(withJWT: "header.claims.sig\(n)")
    }
    func clientDidStart(_ client: ParleyClient) { lines.withLock { $0.append("started") } }
    func clientDidFail(_ client: ParleyClient, error: any Error) {
        lines.withLock { $0.append("failed \((error as? ParleyClientError)?.code ?? "\(error)")") }
    }
    func client(_ client: ParleyCallClient, didReceiveIncomingCall call: ParleyCall) {
        lines.withLock { $0.append("incoming \(call.remoteUserId) \(call.state.rawValue)") }
        calls.withLock { $0.append(call) }
        call.delegate = self
        if answerIncoming { call.answer() }
    }
    func callDidProgress(_ call: ParleyCall) { lines.withLock { $0.append("progress") } }
    func callDidRing(_ call: ParleyCall) { lines.withLock { $0.append("ring") } }
    func callDidAnswer(_ call: ParleyCall) { lines.withLock { $0.append("answer") } }
    func callDidEstablish(_ call: ParleyCall) { lines.withLock { $0.append("establish") } }
    func callDidEnd(_ call: ParleyCall) { lines.withLock { $0.append("end \(call.details.endCause.rawValue)") } }
    func call(_ call: ParleyCall, didReceiveDTMF digits: String) { lines.withLock { $0.append("dtmf \(digits)") } }

    /// Waits (bounded) until `line` was recorded.
    func wait(for line: String, seconds: Double = 15) async -> Bool {
        for _ in 0..<Int(seconds * 50) {
            if lines.current.contains(line) { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return false
    }
}
