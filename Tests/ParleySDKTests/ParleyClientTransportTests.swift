import Foundation
import ParleyMediaCore
import ParleyMediaLegCore
import ParleySDK
import ParleySDKLinux
@_spi(ParleyEngines) @testable import ParleySDKCore
import ParleySignaling
import Testing

/// The SDK's I/O shell against a real `EdgeServer` on loopback with a scripted protocol
/// peer (`ScriptedPeer`): transport, reconnect with resume, real media legs. These are
/// transport tests; the end-to-end tests need the real parleyd.
@Suite(.serialized) struct ParleyClientTransportTests {
    static func makeClient(_ peer: ScriptedPeer, _ delegate: RecordingDelegate) throws -> ParleyClient {
        let client = try ParleyClient(applicationKey: "app-1", environmentHost: peer.url, userId: "bob", deviceId: "test-device",
                                      callbackQueue: DispatchQueue(label: "sdk-test-callbacks"))
        client.delegate = delegate
        client.callClient.delegate = delegate
        return client
    }

    @Test func badArgumentsAreRefusedAtCreation() {
        #expect(throws: ParleyClientError.self) { try ParleyClient(applicationKey: "bad key", environmentHost: "http://127.0.0.1:1", userId: "a") }
        #expect(throws: ParleyClientError.self) { try ParleyClient(applicationKey: "k", environmentHost: "http://127.0.0.1:1", userId: "a b") }
        #expect(throws: ParleyClientError.self) { try ParleyClient(applicationKey: "k", environmentHost: "ftp://127.0.0.1:1", userId: "a") }
        #expect(throws: ParleyClientError.self) { try ParleyClient(applicationKey: "k", environmentHost: "127.0.0.1:8080/x?y", userId: "a") }
        // https is accepted (system trust store); a CA file must load and needs https.
        #expect(throws: Never.self) { try ParleyClient(applicationKey: "k", environmentHost: "https://calls.example.com", userId: "a") }
        do {
            _ = try ParleyClient(applicationKey: "k", environmentHost: "https://calls.example.com", userId: "a", caFile: "/nonexistent/ca.pem")
            Issue.record("a missing CA file was accepted")
        } catch {
            #expect(error.code == "invalid_argument")
            #expect(error.message.contains("/nonexistent/ca.pem"))
        }
        #expect(throws: ParleyClientError.self) {
            try ParleyClient(applicationKey: "k", environmentHost: "http://127.0.0.1:1", userId: "a", caFile: "/etc/ssl/certs/ca-certificates.crt")
        }
        #expect((try? ParleyServerEndpoint(parsing: "https://calls.example.com"))?.webSocketURL == "wss://calls.example.com:443/v1/ws")
        let endpoint = try? ParleyServerEndpoint(parsing: "http://[::1]:8080")
        #expect(endpoint?.webSocketURL == "ws://[::1]:8080/v1/ws")
        #expect((try? ParleyServerEndpoint(parsing: "http://127.0.0.1"))?.port == 80)
    }

    @Test func anUnreachableServerFailsTheClient() async throws {
        // A port that was just free: nothing listens there.
        let peer = try ScriptedPeer()
        let url = peer.url
        peer.shutdown()
        let delegate = RecordingDelegate()
        let client = try ParleyClient(applicationKey: "app-1", environmentHost: url, userId: "bob",
                                      callbackQueue: DispatchQueue(label: "sdk-test-callbacks"))
        client.delegate = delegate
        client.start()
        #expect(await delegate.wait(for: "failed server_unreachable"))
        #expect(!client.isStarted)
    }

    @Test func startsWithAFreshTokenAndHeartbeats() async throws {
        let peer = try ScriptedPeer()
        defer { peer.shutdown() }
        let delegate = RecordingDelegate()
        let client = try Self.makeClient(peer, delegate)
        client.start()
        #expect(await delegate.wait(for: "started"), "\(delegate.lines.current) \(peer.received.current) \(peer.server.statistics)")
        #expect(client.isStarted)
        let hello = try #require(peer.messages(ofType: .hello).first)
        guard case .hello(let h) = hello else { return }
        #expect(h.token == "header.claims.sig1" && h.appKey == "app-1" && h.deviceID == "test-device" && h.resumeSessionID == nil)
        try await Task.sleep(for: .milliseconds(2300))
        #expect(peer.messages(ofType: .ping).count >= 2, "heartbeatMs 1000: a ping a second")
        client.terminateGracefully()
        try await Task.sleep(for: .milliseconds(300))
        #expect(!client.isStarted)
    }

    @Test func aDroppedConnectionReconnectsResumesAndKeepsTheCall() async throws {
        let peer = try ScriptedPeer()
        defer { peer.shutdown() }
        let proxy = try DroppingProxy(to: peer.server.localAddresses[0])
        defer { proxy.stop() }
        let delegate = RecordingDelegate()
        let client = try ParleyClient(applicationKey: "app-1", environmentHost: proxy.url, userId: "bob", deviceId: "test-device",
                                      callbackQueue: DispatchQueue(label: "sdk-test-callbacks"))
        client.delegate = delegate
        client.callClient.delegate = delegate
        client.audioController.source = .tone(frequency: 440)
        client.start()
        #expect(await delegate.wait(for: "started"))
        let call = try client.callClient.callUser(withId: "alice").get()
        call.delegate = delegate
        #expect(call.direction == .outgoing && call.state == .initiating && call.remoteUserId == "alice")
        #expect(await delegate.wait(for: "establish"))

        proxy.dropAll()                                   // the TCP connection dies under both ends
        for _ in 0..<250 where peer.messages(ofType: .hello).count < 2 { try await Task.sleep(for: .milliseconds(20)) }
        let hellos = peer.messages(ofType: .hello)
        #expect(hellos.count == 2)
        if case .hello(let second)? = hellos.last {
            #expect(second.resumeSessionID == "s-1")
            #expect(second.token == "header.claims.sig2", "a fresh token for every connection")
        }
        try await Task.sleep(for: .milliseconds(300))
        #expect(call.state == .established, "the call survived the resumed session")
        call.hangup()
        #expect(await delegate.wait(for: "end hungUp"))
        #expect(delegate.lines.current == ["token?", "started", "progress", "ring", "answer", "establish", "token?", "end hungUp"])
        #expect(call.details.endCause == .hungUp)
        #expect(call.statistics.packetsSent > 0)
        client.terminateGracefully()
    }

    /// The built-in integration's mediator, the app's `call.delegate` and an added
    /// observer all hear every event of one call, in that order: setting the delegate (as
    /// the guides do) displaces neither the mediator nor the others.
    @Test func theMediatorTheDelegateAndObserversAllHearEveryEvent() async throws {
        final class MediatorLog: ParleyCallObserver, @unchecked Sendable {
            // @unchecked: `lines` is `Locked`.
            let lines = Locked<[String]>([])
            func mediator(_ mediator: ParleyCallMediator, didStartOutgoingCall call: ParleyCall) { lines.withLock { $0.append("started") } }
            func callDidEstablish(_ call: ParleyCall) { lines.withLock { $0.append("establish") } }
            func callDidEnd(_ call: ParleyCall) { lines.withLock { $0.append("end") } }
        }
        let peer = try ScriptedPeer()
        defer { peer.shutdown() }
        let delegate = RecordingDelegate()
        let client = try Self.makeClient(peer, delegate)
        let mediator = ParleyCallMediator(client: client)
        let mediatorLog = MediatorLog()
        mediator.addObserver(mediatorLog)
        #expect(client.callClient.delegate === delegate, "the mediator leaves the app's delegate in place")
        client.audioController.source = .tone(frequency: 440)
        client.start()
        #expect(await delegate.wait(for: "started"))
        let call = try mediator.callUser(withId: "alice").get()
        call.delegate = delegate
        let second = RecordingDelegate()
        call.addObserver(second)
        call.addObserver(second)                          // twice: still heard once
        #expect(await delegate.wait(for: "establish"))
        call.hangup()
        #expect(await delegate.wait(for: "end hungUp"))
        #expect(await second.wait(for: "end hungUp"))
        #expect(second.lines.current == ["progress", "ring", "answer", "establish", "end hungUp"])
        #expect(mediatorLog.lines.current == ["started", "establish", "end"])
        client.terminateGracefully()
    }

    /// Managed push: a token the system gave before the client existed is registered once
    /// the client is enabled and started; a new token is registered again; nothing is
    /// registered for a client that did not enable managed push.
    @Test func managedPushRegistersTheSystemsTokenAndItsChanges() async throws {
        let peer = try ScriptedPeer()
        defer { peer.shutdown() }
        let hub = ManagedPushTokens()
        hub.update(.init(type: .apnsVoip, token: "aa01", environment: .sandbox, appId: "com.example.chat"))
        let delegate = RecordingDelegate()
        let client = try Self.makeClient(peer, delegate)
        client.enableManagedPushNotifications(from: hub)
        client.enableManagedPushNotifications(from: hub)      // twice: no second observer
        client.start()
        #expect(await delegate.wait(for: "started"))
        func registered() -> [String] {
            peer.messages(ofType: .pushRegister).compactMap { if case .pushRegister(let r) = $0 { r.token } else { nil } }
        }
        for _ in 0..<250 where registered().isEmpty { try await Task.sleep(for: .milliseconds(20)) }
        #expect(registered() == ["aa01"])
        hub.update(.init(type: .apnsVoip, token: "bb02", environment: .sandbox, appId: "com.example.chat"))
        for _ in 0..<250 where registered().count < 2 { try await Task.sleep(for: .milliseconds(20)) }
        #expect(registered() == ["aa01", "bb02"])
        client.terminateGracefully()
    }

    @Test func aServerCloseWith1011ResumesAnd4003Stops() async throws {
        let peer = try ScriptedPeer()
        defer { peer.shutdown() }
        let delegate = RecordingDelegate()
        let client = try Self.makeClient(peer, delegate)
        client.start()
        #expect(await delegate.wait(for: "started"))
        peer.closeNewest(code: 1011)
        for _ in 0..<250 where peer.messages(ofType: .hello).count < 2 { try await Task.sleep(for: .milliseconds(20)) }
        guard case .hello(let second)? = peer.messages(ofType: .hello).last else { Issue.record("no second hello"); return }
        #expect(second.resumeSessionID == "s-1")
        try await Task.sleep(for: .milliseconds(200))
        peer.closeNewest(code: 4003)
        #expect(await delegate.wait(for: "failed replaced"))
        #expect(delegate.lines.current == ["token?", "started", "token?", "failed replaced"])
        #expect(!client.isStarted)
    }

    @Test func aDeviceThatCannotBeOpenedFailsTheCallsMedia() async throws {
        let peer = try ScriptedPeer()
        defer { peer.shutdown() }
        let delegate = RecordingDelegate()
        let endpoint = try ParleyServerEndpoint(parsing: peer.url)
        let engines = try LinuxEngines.make(for: endpoint, caFile: nil, audioDevice: LinuxAudioDevice(name: "parley_no_such_device"))
        let client = try ParleyClient(applicationKey: "app-1", environmentHost: peer.url, userId: "bob", deviceId: "test-device",
                                      callbackQueue: DispatchQueue(label: "sdk-test-callbacks"), engines: engines)
        client.delegate = delegate
        client.callClient.delegate = delegate
        client.audioController.source = .device
        client.start()
        #expect(await delegate.wait(for: "started"))
        let call = try client.callClient.callUser(withId: "alice").get()
        // The leg fails at once, so its end may come before a delegate set here would hear
        // it (the callback queue is not this thread): follow the call's own state.
        call.delegate = delegate
        for _ in 0..<750 where call.state != .ended { try await Task.sleep(for: .milliseconds(20)) }
        #expect(call.state == .ended && call.details.endCause == .error)
        #expect(call.details.error?.code == "media_failed")
        #expect(call.details.error?.message.contains("parley_no_such_device") == true, "\(call.details.error?.message ?? "")")
        if case .failure(let error) = client.callClient.callUser(withId: "not valid") {
            #expect((error as? ParleyClientError)?.code == "invalid_argument")
        } else {
            Issue.record("a bad user id was accepted")
        }
        client.terminateGracefully()
    }
}
