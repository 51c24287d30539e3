import Foundation
import ParleySDK
import ParleySignaling
import Testing
@_spi(ParleyEngines) @testable import ParleySDKCore

/// A call to a phone number through the real Linux engines against the scripted peer:
/// `call.start` carries the number, the CLI and the `x-` headers; the far side's headers
/// reach the call; DTMF goes out as RFC 4733 events in the audio and comes back as the
/// delegate's `call(_:didReceiveDTMF:)`. On an app-to-app call `sendDTMF` sends nothing.
@Suite(.serialized) struct ParleyClientSIPTransportTests {
    @Test func aPhoneCallSendsAndReceivesDTMF() async throws {
        let peer = try ScriptedPeer()
        defer { peer.shutdown() }
        peer.responseHeaders.withLock { $0 = (["x-queue": "support"], ["X-Agent": "4711"]) }
        let delegate = RecordingDelegate()
        let client = try ParleyClient(applicationKey: "app-1", environmentHost: peer.url, userId: "bob", cli: "+46812345678",
                                      deviceId: "test-device", callbackQueue: DispatchQueue(label: "sdk-test-callbacks"))
        client.delegate = delegate
        client.audioController.source = .tone(frequency: 440)
        client.start()
        #expect(await delegate.wait(for: "started"))
        let call = try client.callClient.callPhoneNumber("+4615550101", headers: ["x-account": "77"]).get()
        call.delegate = delegate
        #expect(call.remoteKind == .phone && call.remoteUserId == "+4615550101")
        #expect(await delegate.wait(for: "establish"))
        guard case .callStart(let start)? = peer.messages(ofType: .callStart).last else {
            Issue.record("no call.start")
            return
        }
        #expect(start.to == .phone("+4615550101") && start.cli == "+46812345678" && start.headers == ["x-account": "77"])
        #expect(call.responseHeaders == ["x-queue": "support", "X-Agent": "4711"])

        #expect(call.sendDTMF("1#"))
        // 1 and # (event 11), each begun and ended, in order: about 340 ms of tones.
        for _ in 0..<250 where peer.telephoneEvents.current.count < 4 { try await Task.sleep(for: .milliseconds(20)) }
        #expect(peer.telephoneEvents.current == ["1 false", "1 true", "11 false", "11 true"])

        peer.send(.callDTMFReceived(.init(callID: call.callId, digits: "4#", time: ScriptedPeer.millis())))
        #expect(await delegate.wait(for: "dtmf 4#"))
        call.hangup()
        #expect(await delegate.wait(for: "end hungUp"))
        #expect(delegate.lines.current == ["token?", "started", "progress", "ring", "answer", "establish", "dtmf 4#", "end hungUp"])
        client.terminateGracefully()
    }

    @Test func anAppToAppCallSendsNoDTMF() async throws {
        let peer = try ScriptedPeer()
        defer { peer.shutdown() }
        let delegate = RecordingDelegate()
        let client = try ParleyClientTransportTests.makeClient(peer, delegate)
        client.audioController.source = .tone(frequency: 440)
        client.start()
        #expect(await delegate.wait(for: "started"))
        let call = try client.callClient.callUser(withId: "alice").get()
        call.delegate = delegate
        #expect(await delegate.wait(for: "establish"))
        #expect(call.remoteKind == .user && call.responseHeaders.isEmpty)
        #expect(!call.sendDTMF("1"))
        try await Task.sleep(for: .milliseconds(400))
        #expect(peer.telephoneEvents.current.isEmpty)
        if case .callStart(let start)? = peer.messages(ofType: .callStart).last { #expect(start.cli == nil) }
        call.hangup()
        #expect(await delegate.wait(for: "end hungUp"))
        client.terminateGracefully()
    }
}
