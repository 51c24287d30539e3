import Foundation
import ParleyAuth
import ParleyNetCore
import ParleyPush
import ParleyPushTestSupport
import ParleySDK
import ParleyServer
import ParleyStore
import Testing

/// Signs in with tokens minted for the application, follows calls, keeps what it heard.
final class SDKUser: ParleyClientDelegate, ParleyPushDelegate, ParleyCallObserver, @unchecked Sendable {
    // @unchecked: the mutable lists are behind `lock`; the rest is set once in init.
    let client: ParleyClient
    let mediator: ParleyCallMediator
    private let application: Application
    private let lock = NSLock()
    private var heard: [String] = []
    private var incoming: [ParleyCall] = []

    init(_ user: String, deviceId: String, application: Application, server: SocketAddress, store: any ParleyPushRegistrationStore) throws {
        self.application = application
        client = try ParleyClient(applicationKey: application.key, environmentHost: "http://127.0.0.1:\(server.port)", userId: user,
                                  deviceId: deviceId, callbackQueue: DispatchQueue(label: "test.\(user)"), pushRegistrationStore: store)
        mediator = ParleyCallMediator(client: client)
        client.delegate = self
        client.pushDelegate = self
        mediator.addObserver(self)
    }

    var events: [String] { lock.withLock { heard } }
    var incomingCalls: [ParleyCall] { lock.withLock { incoming } }
    private func note(_ event: String) { lock.withLock { heard.append(event) } }

    func clientRequiresRegistrationCredentials(_ client: ParleyClient, withCallback callback: ParleyClientRegistration) {
        do {
            callback.register(withJWT: try UserToken.mint(applicationKey: application.key, secret: application.secret, userID: client.userId,
                                                          issuedAt: Int64(Date().timeIntervalSince1970), lifetime: 600,
                                                          nonce: try UserToken.randomNonce()))
        } catch {
            callback.registerDidFail(error: ParleyClientError(code: "registration_failed", message: "\(error)"))
        }
    }
    func clientDidStart(_ client: ParleyClient) { note("started") }
    func clientDidFail(_ client: ParleyClient, error: any Error) { note("failed \(error)") }
    func clientDidRegisterPushNotificationDeviceToken(_ client: ParleyClient) { note("push registered") }
    func client(_ client: ParleyClient, didFailToRegisterPushNotificationDeviceTokenWithError error: any Error) { note("push failed \(error)") }
    func clientDidUnregisterPushNotificationDeviceToken(_ client: ParleyClient) { note("push unregistered") }
    func client(_ client: ParleyClient, didFailToUnregisterPushNotificationDeviceTokenWithError error: any Error) { note("push unregister failed \(error)") }
    func mediator(_ mediator: ParleyCallMediator, didReceiveIncomingCall call: ParleyCall) {
        lock.withLock { incoming.append(call) }
        note("incoming \(call.callId)")
    }
    func callDidRing(_ call: ParleyCall) { note("ringing \(call.callId)") }
    func callDidAnswer(_ call: ParleyCall) { note("answered \(call.callId)") }
    func callDidEstablish(_ call: ParleyCall) { note("established \(call.callId)") }
    func callDidEnd(_ call: ParleyCall) { note("ended \(call.callId) \(call.details.endCause.rawValue)") }
}

/// A value set on one thread and read on another.
final class Recorded<Value>: @unchecked Sendable {
    // @unchecked: `stored` is behind `lock`.
    private let lock = NSLock()
    private var stored: Value
    init(_ value: Value) { stored = value }
    var value: Value { lock.withLock { stored } }
    func set(_ value: Value) { lock.withLock { stored = value } }
}

/// A push delegate that outlives the client it listens to.
final class PushOutcomes: ParleyPushDelegate, @unchecked Sendable {
    // @unchecked: `heard` is behind `lock`.
    private let lock = NSLock()
    private var heard: [String] = []
    var events: [String] { lock.withLock { heard } }
    func clientDidRegisterPushNotificationDeviceToken(_ client: ParleyClient) { lock.withLock { heard.append("registered") } }
    func clientDidUnregisterPushNotificationDeviceToken(_ client: ParleyClient) { lock.withLock { heard.append("unregistered") } }
    func client(_ client: ParleyClient, didFailToUnregisterPushNotificationDeviceTokenWithError error: any Error) {
        lock.withLock { heard.append("unregister failed \(error)") }
    }
}

struct Timeout: Error, CustomStringConvertible {
    let what: String
    var description: String { "timed out waiting for \(what)" }
}

/// The SDK's push path against a real `ParleyServer` and the provider emulator: a callee
/// registers its token, goes offline, is woken by the push, and relays it.
extension RealTimeMediaTests {
@Suite(.serialized) struct SDKPushRelayTests {
    static let apnsToken = Data((0..<32).map { UInt8($0 * 7 & 0xFF) })
    let emulator: ProviderEmulator
    let server: ParleyServer
    let application: Application
    let directory = NSTemporaryDirectory() + "parley-sdk-push-" + UUID().uuidString

    init() throws {
        emulator = try ProviderEmulator()
        var configuration = ServerConfiguration(dataDirectory: directory, listenAddresses: [.ipv4Loopback(port: 0)])
        configuration.mediaBindAddress = .ipv4Loopback(port: 0)
        let base = UInt16(31_000 + Int.random(in: 0..<300) * 100)
        configuration.mediaPorts = base...(base + 99)
        configuration.edgeLoopCount = 1
        configuration.pushEndpoints = emulator.endpoints
        configuration.pushCAFile = emulator.caFile
        configuration.ringTimeout = .seconds(6)
        server = try ParleyServer(configuration: configuration, stores: .sqlite(dataDirectory: configuration.dataDirectory), log: ServerLog(level: .debug) { line in if ProcessInfo.processInfo.environment["PARLEY_SDK_PUSH_LOG"] != nil { print(line) } })
        application = try #require(server.developmentApplication)
        try server.start()
        let key = application.key
        let settings = emulator.apns.settingsJSON
        try server.store.performAndWait { (store) throws(StoreError) in
            try store.setPushCredentials(StoredPushCredentials(applicationKey: key, provider: .apns, settings: settings, updatedTime: 1))
        }
    }

    func cleanUp() {
        server.shutdown()
        emulator.stop()
        try? FileManager.default.removeItem(atPath: directory)
    }

    func waitFor(_ what: @autoclosure () -> String, seconds: Double = 10, _ condition: () throws -> Bool) throws {
        let deadline = Date(timeIntervalSinceNow: seconds)
        while Date() < deadline {
            if try condition() { return }
            Thread.sleep(forTimeInterval: 0.02)
        }
        Issue.record("timed out waiting for \(what())")
        throw Timeout(what: what())
    }

    /// Bob's phone registers its VoIP token, then the app is killed (no unregister).
    func registerOfflineBob(store: any ParleyPushRegistrationStore) throws {
        let bob = try SDKUser("bob", deviceId: "bob-phone", application: application, server: server.localAddresses[0], store: store)
        bob.client.start()
        try bob.client.registerPushNotificationDeviceToken(Self.apnsToken, type: .apnsVoip, environment: .sandbox, appId: "com.example.chat")
        try waitFor("bob's registration") { bob.events.contains("push registered") }
        #expect(store.load()?.token == Self.apnsToken.map { String(format: "%02x", $0) }.joined())
        bob.client.terminateGracefully()
        Thread.sleep(forTimeInterval: 0.3)
    }

    /// The `parley` JWS of the first push the emulator received.
    func firstPushPayload() throws -> [AnyHashable: Any] {
        var body: String?
        try waitFor("the push") {
            body = try emulator.requests().first { $0["provider"] as? String == "apns" }?["body"] as? String
            return body != nil
        }
        let text = try #require(body)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: String])
        return ["parley": try #require(object["parley"]), "aps": [:] as [String: String]]
    }

    @Test func aRelayedPushDeliversTheCallAndTheCallerHearsItRing() throws {
        defer { cleanUp() }
        let store = InMemoryPushRegistrationStore()
        try registerOfflineBob(store: store)
        let alice = try SDKUser("alice", deviceId: "alice-phone", application: application, server: server.localAddresses[0],
                                store: InMemoryPushRegistrationStore())
        alice.client.start()
        try waitFor("alice's start") { alice.events.contains("started") }
        // The name bob's lock screen shows: through call.start, the server, the signed push.
        alice.client.setPushNotificationDisplayName("Alice Åberg\n(support)")
        let call = try alice.mediator.callUser(withId: "bob", headers: ["topic": "billing"]).get()
        let payload = try firstPushPayload()

        // The app is woken: a new client on the same device and store, as after a relaunch.
        let bob = try SDKUser("bob", deviceId: "bob-phone", application: application, server: server.localAddresses[0], store: store)
        let provider = HeadlessSystemCallProvider()
        let service = ParleySystemCallService(client: bob.client, mediator: bob.mediator, provider: provider)
        let query = bob.client.queryPushNotificationPayload(payload)
        #expect(query.isCall && query.isValid)
        #expect(query.callResult?.callId == call.callId && query.callResult?.remoteUserId == "alice")
        #expect(query.callResult?.headers == ["topic": "billing"] && query.callResult?.isTimedOut == false)
        #expect(query.callResult?.displayName == "Alice Åberg (support)", "control characters become spaces")
        service.reportIncomingPush(payload) { _ in }
        bob.client.start()
        try waitFor("the relayed call") { bob.events.contains("incoming \(call.callId)") }
        #expect(provider.calls.count == 1 && service.systemCallUUID(forCallId: call.callId) != nil)
        #expect(provider.calls.values.first?.callerName == "Alice Åberg (support)" && provider.calls.values.first?.handle == "alice")
        #expect(bob.incomingCalls.first?.remoteDisplayName == "Alice Åberg (support)")
        try waitFor("alice's ringing") { alice.events.contains("ringing \(call.callId)") }
        call.hangup()
        try waitFor("bob's end") { bob.events.contains("ended \(call.callId) canceled") }
        try waitFor("the system's end") { provider.calls.isEmpty }
        #expect(provider.events.contains { if case .reportedEnded(_, .remoteEnded) = $0 { true } else { false } },
                "the caller's cancel is the remote party ending the call: \(provider.events)")
        bob.client.logOut()
        alice.client.terminateGracefully()
        try waitFor("the logout to forget the push key") { store.load() == nil }
    }

    @Test func answeringOnTheSystemScreenConnectsTheRelayedCall() throws {
        defer { cleanUp() }
        let store = InMemoryPushRegistrationStore()
        try registerOfflineBob(store: store)
        let alice = try SDKUser("alice", deviceId: "alice-phone", application: application, server: server.localAddresses[0],
                                store: InMemoryPushRegistrationStore())
        alice.client.start()
        try waitFor("alice's start") { alice.events.contains("started") }
        let call = try alice.mediator.callUser(withId: "bob").get()
        let payload = try firstPushPayload()
        let bob = try SDKUser("bob", deviceId: "bob-phone", application: application, server: server.localAddresses[0], store: store)
        let provider = HeadlessSystemCallProvider()
        let service = ParleySystemCallService(client: bob.client, mediator: bob.mediator, provider: provider)
        service.reportIncomingPush(payload) { _ in }
        #expect(!bob.client.audioController.isAudioSessionActive)
        bob.client.start()
        let uuid = try #require(service.systemCallUUID(forCallId: call.callId))
        // The user answers on the lock screen, maybe before call.incoming is here.
        provider.answerFromSystemUI(uuid)
        try waitFor("bob's answer (bob heard \(bob.events))") { bob.events.contains("answered \(call.callId)") }
        try waitFor("alice's answer") { alice.events.contains("answered \(call.callId)") }
        #expect(provider.events.contains(.action(.answer, uuid, .fulfilled)))
        #expect(bob.client.audioController.isAudioSessionActive)
        try waitFor("the call's media (alice heard \(alice.events))", seconds: 15) { alice.events.contains("established \(call.callId)") }
        // The caller hangs up: reported to the system as remote ended; audio released.
        call.hangup()
        try waitFor("bob's end") { bob.events.contains("ended \(call.callId) hungUp") }
        try waitFor("the system's end") { provider.calls.isEmpty && !provider.isAudioActive }
        #expect(provider.events.contains(.reportedEnded(uuid, .remoteEnded)))
        #expect(!bob.client.audioController.isAudioSessionActive)
        bob.client.terminateGracefully()
        alice.client.terminateGracefully()
    }

    @Test func aLateRelayAfterTheCallerCanceledEndsAtOnce() throws {
        defer { cleanUp() }
        let store = InMemoryPushRegistrationStore()
        try registerOfflineBob(store: store)
        let alice = try SDKUser("alice", deviceId: "alice-phone", application: application, server: server.localAddresses[0],
                                store: InMemoryPushRegistrationStore())
        alice.client.start()
        try waitFor("alice's start") { alice.events.contains("started") }
        let call = try alice.mediator.callUser(withId: "bob").get()
        let payload = try firstPushPayload()
        call.hangup()
        try waitFor("alice's cancel (alice heard \(alice.events), state \(call.state), \(call.details.endCause))") { alice.events.contains("ended \(call.callId) canceled") }

        let bob = try SDKUser("bob", deviceId: "bob-phone", application: application, server: server.localAddresses[0], store: store)
        _ = try bob.client.relayPushNotification(withUserInfo: payload).get()
        bob.client.start()
        try waitFor("the late call's end (bob heard \(bob.events))") { bob.events.contains("ended \(call.callId) canceled") }
        #expect(bob.events.filter { $0.hasPrefix("incoming") || $0.hasPrefix("ended") } == ["incoming \(call.callId)", "ended \(call.callId) canceled"])
        bob.client.terminateGracefully()
        alice.client.terminateGracefully()
    }

    /// Do Not Disturb on bob's phone: the system refuses the pushed call, and the
    /// integration relays and declines it at once, so alice's call ends `denied` within
    /// moments instead of `noAnswer` at the ring timeout (6 s here), and bob's app never
    /// hears of it.
    @Test func doNotDisturbDeclinesThePushedCallAtOnce() throws {
        defer { cleanUp() }
        let store = InMemoryPushRegistrationStore()
        try registerOfflineBob(store: store)
        let alice = try SDKUser("alice", deviceId: "alice-phone", application: application, server: server.localAddresses[0],
                                store: InMemoryPushRegistrationStore())
        alice.client.start()
        try waitFor("alice's start") { alice.events.contains("started") }
        let call = try alice.mediator.callUser(withId: "bob").get()
        let payload = try firstPushPayload()
        let placed = Date()

        let bob = try SDKUser("bob", deviceId: "bob-phone", application: application, server: server.localAddresses[0], store: store)
        let provider = HeadlessSystemCallProvider()
        provider.doNotDisturb = true
        let service = ParleySystemCallService(client: bob.client, mediator: bob.mediator, provider: provider)
        let refusal = Recorded<(any Error)?>(nil)
        service.reportIncomingPush(payload) { error in refusal.set(error) }
        bob.client.start()
        try waitFor("alice's end (alice heard \(alice.events))", seconds: 5) { alice.events.contains { $0.hasPrefix("ended \(call.callId)") } }
        #expect(alice.events.contains("ended \(call.callId) denied"), "\(alice.events)")
        #expect(Date().timeIntervalSince(placed) < 5, "declined at once, not at the ring timeout")
        #expect((refusal.value as? SystemCallError)?.code == .filteredByDoNotDisturb)
        #expect(!bob.events.contains { $0.hasPrefix("incoming") }, "the declined call is not delivered: \(bob.events)")
        #expect(provider.calls.isEmpty && service.registry.count == 0)
        bob.client.terminateGracefully()
        alice.client.terminateGracefully()
    }

    /// The documented logout, with the app dropping the client right after it (as
    /// `sinchClient = nil` does): every time, the server forgets the token and the local
    /// store is emptied, and the push delegate hears the outcome. Five rounds.
    @Test func logOutReachesTheServerEvenWhenTheClientIsDroppedAtOnce() throws {
        defer { cleanUp() }
        let key = application.key
        func serverTokens() throws -> Int {
            try server.store.performAndWait { (store) throws(StoreError) in
                try store.pushRegistrations(applicationKey: key, deviceId: "bob-phone").count
            }
        }
        let listener = PushOutcomes()
        for round in 0..<5 {
            let store = InMemoryPushRegistrationStore()
            var bob: SDKUser? = try SDKUser("bob", deviceId: "bob-phone", application: application, server: server.localAddresses[0], store: store)
            bob?.client.pushDelegate = listener
            bob?.client.start()
            try bob?.client.registerPushNotificationDeviceToken(Self.apnsToken, type: .apnsVoip, environment: .sandbox, appId: "com.example.chat")
            try waitFor("round \(round): the registration") { store.load() != nil }
            #expect(try serverTokens() == 1)
            weak let client = bob?.client
            bob?.client.logOut()
            bob = nil
            try waitFor("round \(round): the server to forget the token") { try serverTokens() == 0 }
            #expect(store.load() == nil, "round \(round): the local registration is gone")
            try waitFor("round \(round): the push delegate") { listener.events.count == 2 * (round + 1) }
            #expect(listener.events.last == "unregistered", "\(listener.events)")
            try waitFor("round \(round): the client to go once its work is done") { client == nil }
        }
    }

    /// `unregisterPushNotificationDeviceToken()` alone, then the app lets go of the client:
    /// the request still goes out and is answered. Dropped while still connecting, with
    /// its token delegate gone too, the client cannot sign in: the failure is reported.
    @Test func anUnregisterIsNotLostWhenTheClientIsDropped() throws {
        defer { cleanUp() }
        let key = application.key
        let store = InMemoryPushRegistrationStore()
        try registerOfflineBob(store: store)
        let listener = PushOutcomes()
        var bob: SDKUser? = try SDKUser("bob", deviceId: "bob-phone", application: application, server: server.localAddresses[0], store: store)
        bob?.client.pushDelegate = listener
        bob?.client.start()
        try waitFor("bob's start") { bob?.events.contains("started") == true }
        bob?.client.unregisterPushNotificationDeviceToken()
        bob = nil
        try waitFor("the server to forget the token") {
            try server.store.performAndWait { (store) throws(StoreError) in try store.pushRegistrations(applicationKey: key, deviceId: "bob-phone").isEmpty }
        }
        try waitFor("the push delegate") { listener.events == ["unregistered"] }
        #expect(store.load() == nil)

        let again = PushOutcomes()
        var early: SDKUser? = try SDKUser("bob", deviceId: "bob-phone", application: application, server: server.localAddresses[0], store: store)
        early?.client.pushDelegate = again
        early?.client.start()
        early?.client.unregisterPushNotificationDeviceToken()
        early = nil
        try waitFor("the outcome (heard \(again.events))") { again.events.count == 1 }
        #expect(again.events == ["unregistered"] || again.events.first?.hasPrefix("unregister failed registration_failed") == true, "\(again.events)")
    }

    /// Both online: the name arrives in `call.incoming`, the system screen shows it, and a
    /// name cleared (empty) is no longer sent.
    @Test func theCallersDisplayNameReachesAConnectedCallee() throws {
        defer { cleanUp() }
        let alice = try SDKUser("alice", deviceId: "alice-phone", application: application, server: server.localAddresses[0],
                                store: InMemoryPushRegistrationStore())
        let bob = try SDKUser("bob", deviceId: "bob-phone", application: application, server: server.localAddresses[0],
                              store: InMemoryPushRegistrationStore())
        let provider = HeadlessSystemCallProvider()
        let service = ParleySystemCallService(client: bob.client, mediator: bob.mediator, provider: provider)
        alice.client.start()
        bob.client.start()
        try waitFor("both started") { alice.events.contains("started") && bob.events.contains("started") }
        let long = String(repeating: "ü", count: 200)
        alice.client.setPushNotificationDisplayName(long)
        #expect(alice.client.pushNotificationDisplayName?.utf8.count == 254, "cut at 255 bytes on a character boundary")
        alice.client.setPushNotificationDisplayName("Alice")
        let first = try alice.mediator.callUser(withId: "bob").get()
        try waitFor("bob's first call") { bob.events.contains("incoming \(first.callId)") }
        #expect(bob.incomingCalls.last?.remoteDisplayName == "Alice")
        #expect(first.remoteDisplayName == nil, "an outgoing call has no remote display name")
        let uuid = try #require(service.systemCallUUID(forCallId: first.callId))
        try waitFor("the system's report") { provider.calls[uuid] != nil }
        #expect(provider.calls[uuid]?.callerName == "Alice")
        first.hangup()
        try waitFor("bob's first end") { bob.events.contains("ended \(first.callId) canceled") }
        alice.client.setPushNotificationDisplayName("   ")
        #expect(alice.client.pushNotificationDisplayName == nil)
        let second = try alice.mediator.callUser(withId: "bob").get()
        try waitFor("bob's second call") { bob.events.contains("incoming \(second.callId)") }
        #expect(bob.incomingCalls.last?.remoteDisplayName == nil)
        second.hangup()
        try waitFor("bob's second end") { bob.events.contains("ended \(second.callId) canceled") }
        alice.client.terminateGracefully()
        bob.client.terminateGracefully()
        _ = service
    }

    @Test func aForgedPushIsNotRelayed() throws {
        defer { cleanUp() }
        let store = InMemoryPushRegistrationStore()
        try registerOfflineBob(store: store)
        let bob = try SDKUser("bob", deviceId: "bob-phone", application: application, server: server.localAddresses[0], store: store)
        var registration = try #require(store.load())
        registration.pushKey = "AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA"
        store.save(registration)
        let forged = ["parley": "eyJhbGciOiJIUzI1NiIsInR5cCI6InBhcmxleS1wdXNoIn0.e30.TktilcIT0tSPz-9qCpaA9t42Abve07opYcP01jur8AE"]
        #expect(bob.client.queryPushNotificationPayload(forged).isValid == false)
        #expect(throws: ParleyClientError.self) { try bob.client.relayPushNotification(withUserInfo: forged).get() }
    }
}
}

/// Suites that run calls with real-time media and child processes. They run one at a time,
/// in the second pass of `make test` (`--filter RealTimeMediaTests`).
@Suite(.serialized) enum RealTimeMediaTests {}
