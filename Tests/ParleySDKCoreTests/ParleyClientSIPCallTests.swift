import Foundation
@_spi(ParleyEngines) @testable import ParleySDKCore
import ParleySignaling
import Testing

extension RealTimeMediaTests {
    /// `callPhoneNumber`, `callSIP` and DTMF through a whole `ParleyClient` over scripted
    /// engines: what reaches the wire, what the delegates hear, what `sendDTMF` does.
    @Suite struct ParleyClientSIPCallTests {
        /// Records what a call's delegate hears, as lines.
        final class CallLog: ParleyCallDelegate, @unchecked Sendable {
            // @unchecked: `lines` is `Locked`.
            let lines = Locked<[String]>([])
            func callDidRing(_ call: ParleyCall) { lines.withLock { $0.append("ring \(call.responseHeaders.sorted { $0.key < $1.key })") } }
            func callDidAnswer(_ call: ParleyCall) { lines.withLock { $0.append("answer \(call.responseHeaders.sorted { $0.key < $1.key })") } }
            func callDidEstablish(_ call: ParleyCall) { lines.withLock { $0.append("establish") } }
            func callDidEnd(_ call: ParleyCall) { lines.withLock { $0.append("end \(call.details.endCause.rawValue)") } }
            func call(_ call: ParleyCall, didReceiveDTMF digits: String) { lines.withLock { $0.append("dtmf \(digits)") } }
        }

        /// The mediator's observer's share of the same.
        final class ObserverLog: ParleyCallObserver, @unchecked Sendable {
            // @unchecked: `lines` is `Locked`.
            let lines = Locked<[String]>([])
            func mediator(_ mediator: ParleyCallMediator, didStartOutgoingCall call: ParleyCall) { lines.withLock { $0.append("started \(call.remoteKind.rawValue)") } }
            func call(_ call: ParleyCall, didReceiveDTMF digits: String) { lines.withLock { $0.append("dtmf \(digits)") } }
        }

        final class Registration: ParleyClientDelegate, @unchecked Sendable {
            let started = Locked(false)
            func clientRequiresRegistrationCredentials(_ client: ParleyClient, withCallback callback: ParleyClientRegistration) {
                callback.register(withJWT: "header.claims.sig")
            }
            func clientDidStart(_ client: ParleyClient) { started.withLock { $0 = true } }
            func clientDidFail(_ client: ParleyClient, error: any Error) {}
        }

        /// A started client over `engines` (the hello answered), with its registration delegate.
        static func startedClient(_ engines: ScriptedEngines, cli: String? = nil) async throws -> (ParleyClient, Registration) {
            let client = try ParleyClient(applicationKey: "app-1", environmentHost: "http://127.0.0.1:9", userId: "alice", cli: cli,
                                          deviceId: "dev-1", callbackQueue: DispatchQueue(label: "test.callbacks"),
                                          pushRegistrationStore: InMemoryPushRegistrationStore(), engines: engines.engines)
            let registration = Registration()
            client.delegate = registration
            client.start()
            #expect(await engines.wait { engines.lastRequest(.hello) != nil })
            let hello = try #require(engines.lastRequest(.hello)?.requestID)
            engines.deliver(.helloOK(.init(replyTo: hello, sessionID: "s-1", userID: "alice", serverVersion: "test",
                                          heartbeatInterval: 25_000, time: 1_764_421_200_000)))
            #expect(await engines.wait { registration.started.current })
            return (client, registration)
        }

        /// Answers the client's `call.start` for `call` and brings it to established, with
        /// the far side's headers on ringing and answered.
        static func establish(_ call: ParleyCall, _ engines: ScriptedEngines, ringing: [String: String] = [:], answered: [String: String] = [:]) async throws -> SignalingMessage.CallStart {
            #expect(await engines.wait { engines.lastRequest(.callStart)?.callID == call.callId })
            guard case .callStart(let start)? = engines.lastRequest(.callStart) else { throw CancellationError() }
            engines.deliver(.result(.init(replyTo: start.requestID)))
            engines.deliver(.callMedia(.init(callID: call.callId, sdp: "v=0\r\no=server\r\n")))
            engines.deliver(.callRinging(.init(callID: call.callId, time: 1_764_421_201_420, headers: ringing)))
            engines.deliver(.callAnswered(.init(callID: call.callId, time: 1_764_421_205_980, headers: answered)))
            engines.deliver(.callEstablished(.init(callID: call.callId, time: 1_764_421_206_110)))
            #expect(await engines.wait { call.state == .established })
            return start
        }

        @Test func aPhoneCallCarriesTheCLIHearsTheFarSideAndSendsAndReceivesDTMF() async throws {
            let engines = ScriptedEngines()
            let (client, _) = try await Self.startedClient(engines, cli: "+46812345678")
            let log = CallLog()
            let call = try client.callClient.callPhoneNumber("+4615550101", headers: ["x-account": "77"]).get()
            call.delegate = log
            #expect(call.remoteKind == .phone && call.remoteUserId == "+4615550101" && call.direction == .outgoing)
            #expect(!call.sendDTMF("1"), "not established yet")
            let start = try await Self.establish(call, engines, ringing: ["x-queue": "support"], answered: ["X-Agent": "4711"])
            #expect(start.to == .phone("+4615550101") && start.cli == "+46812345678" && start.headers == ["x-account": "77"])
            #expect(call.responseHeaders == ["x-queue": "support", "X-Agent": "4711"])

            #expect(call.sendDTMF("1#"))
            #expect(!call.sendDTMF("1x"), "not DTMF")
            #expect(await engines.wait { engines.media.dtmfSent.current == ["1#"] })
            engines.deliver(.callDTMFReceived(.init(callID: call.callId, digits: "4#", time: 1_764_421_207_000)))
            engines.deliver(.callDTMFReceived(.init(callID: call.callId, digits: "0", time: 1_764_421_207_100)))
            engines.deliver(.callEnded(.init(callID: call.callId, cause: .hungUp, details: .init(startedTime: 1, endedTime: 2))))
            #expect(await engines.wait { log.lines.current.last == "end hungUp" })
            #expect(log.lines.current == [
                #"ring [(key: "x-queue", value: "support")]"#,
                #"answer [(key: "X-Agent", value: "4711"), (key: "x-queue", value: "support")]"#,
                "establish", "dtmf 4#", "dtmf 0", "end hungUp",
            ])
            client.terminateGracefully()
        }

        @Test func aSIPCallIsPlacedToTheAddressWithoutItsScheme() async throws {
            let engines = ScriptedEngines()
            let (client, _) = try await Self.startedClient(engines, cli: "+46812345678")
            let call = try client.callClient.callSIP("sip:alice@example.test;transport=tcp", headers: ["X-Order": "1"]).get()
            #expect(call.remoteKind == .sip && call.remoteUserId == "alice@example.test;transport=tcp")
            let start = try await Self.establish(call, engines)
            #expect(start.to == .sip("alice@example.test;transport=tcp") && start.cli == nil, "the cli is for phone calls only")
            #expect(call.responseHeaders.isEmpty)
            #expect(call.sendDTMF("*9"))
            #expect(await engines.wait { engines.media.dtmfSent.current == ["*9"] })
            client.terminateGracefully()
        }

        /// As the documented SDK says: DTMF is for calls toward the telephone network.
        @Test func sendDTMFIsFalseOnAppToAppCalls() async throws {
            let engines = ScriptedEngines()
            let (client, _) = try await Self.startedClient(engines)
            let call = try client.callClient.callUser(withId: "bob").get()
            #expect(call.remoteKind == .user)
            let start = try await Self.establish(call, engines)
            #expect(start.to == .user("bob") && start.cli == nil)
            #expect(!call.sendDTMF("1"))
            try await Task.sleep(for: .milliseconds(50))
            #expect(engines.media.dtmfSent.current.isEmpty, "nothing reached the media")
            client.terminateGracefully()
        }

        /// The mediator places phone and SIP calls too, and its observers hear the far side's DTMF.
        @Test func theMediatorsObserversHearDTMF() async throws {
            let engines = ScriptedEngines()
            let (client, _) = try await Self.startedClient(engines)
            let mediator = ParleyCallMediator(client: client)
            let observer = ObserverLog()
            mediator.addObserver(observer)
            let call = try mediator.callSIP("alice@example.test").get()
            _ = try await Self.establish(call, engines)
            engines.deliver(.callDTMFReceived(.init(callID: call.callId, digits: "5", time: 1)))
            #expect(await engines.wait { observer.lines.current == ["started sip", "dtmf 5"] })
            #expect(throws: ParleyClientError.self) { try mediator.callPhoneNumber("5550101").get() }
            client.terminateGracefully()
        }

        /// Bad numbers, addresses and headers fail at once with `invalid_argument`, before
        /// the client's state is even looked at.
        @Test func badDestinationsAndHeadersFailAtOnce() throws {
            let client = try ParleyClient(applicationKey: "app-1", environmentHost: "http://127.0.0.1:9", userId: "alice",
                                          deviceId: "dev-1", callbackQueue: DispatchQueue(label: "test.callbacks"),
                                          pushRegistrationStore: InMemoryPushRegistrationStore(), engines: TestEngines.make())
            func code(_ result: Result<ParleyCall, any Error>) -> String? {
                if case .failure(let error) = result { return (error as? ParleyClientError)?.code }
                return nil
            }
            let calls = client.callClient
            #expect(code(calls.callPhoneNumber("0701234567")) == "invalid_argument")
            #expect(code(calls.callPhoneNumber("+46 70 123")) == "invalid_argument")
            #expect(code(calls.callPhoneNumber("+4670123", headers: ["topic": "x"])) == "invalid_argument")
            #expect(code(calls.callSIP("alice")) == "invalid_argument")
            #expect(code(calls.callSIP("sips:alice")) == "invalid_argument")
            #expect(code(calls.callSIP("alice@example.test", headers: ["Contact": "<sip:evil@x>"])) == "invalid_argument")
            let big = ["x-a": String(repeating: "v", count: 1100)]
            #expect(code(calls.callSIP("alice@example.test", headers: big)) == "invalid_argument", "the protocol's limits too")
            // Valid, but the client has not started.
            #expect(code(calls.callPhoneNumber("+4670123")) == "not_started")
            #expect(code(calls.callSIP("sip:alice@example.test", headers: ["X-Order": "1"])) == "not_started")
            if case .failure(let error) = calls.callSIP("alice@example.test", headers: ["topic": "x"]) {
                #expect("\(error)".contains("x-"), "\(error)")
            }
        }
    }
}
