import Foundation
import ParleyAuth
import ParleyWebSocketClientIO
import ParleyServer
import ParleySignaling
import ParleyStore
import Testing

/// The session layer of docs/protocol.md against a real server on loopback: hello and
/// every token refusal, the timers, replacement, resume and bad frames.
@Suite struct SignalingSessionTests {
    @Test func helloGetsHelloOKAndPingGetsPong() throws {
        let harness = try ServerHarness()
        let device = try TestDevice(address: harness.address)
        #expect(device.client.subprotocol == "parley.v1")
        let reply = try device.hello(appKey: harness.application.key, token: try harness.token(for: "alice"), deviceID: "alice-1")
        guard case .helloOK(let ok) = reply else { Issue.record("got \(reply)"); return }
        #expect(ok.userID == "alice")
        #expect(ok.replyTo == "r1")
        #expect(ok.heartbeatInterval == 20_000)
        #expect(!ok.resumed)
        #expect(!ok.sessionID.isEmpty)
        try device.send(.ping(.init(requestID: "p1")))
        guard case .pong(let pong) = try device.expectMessage() else { Issue.record("no pong"); return }
        #expect(pong.replyTo == "p1")
        // The user is now known to the store.
        let known = try harness.query { (store) throws(StoreError) in try store.isKnownUser(applicationKey: harness.application.key, userId: "alice") }
        let deadline = ContinuousClock.now + .seconds(2)
        var seen = known
        while !seen && ContinuousClock.now < deadline {
            Thread.sleep(forTimeInterval: 0.02)
            seen = try harness.query { (store) throws(StoreError) in try store.isKnownUser(applicationKey: harness.application.key, userId: "alice") }
        }
        #expect(seen)
        #expect(harness.server.metrics.snapshot.authenticatedTotal == 1)
    }

    @Test func eachTokenRefusalHasItsCodeAndCloses4001() throws {
        let harness = try ServerHarness()
        let key = harness.application.key
        let now = Int64(Date().timeIntervalSince1970)
        let otherSecret = try ApplicationCredentials.generate().secret.base64
        let replayed = try harness.token(for: "alice")
        let first = try TestDevice(address: harness.address)
        guard case .helloOK = try first.hello(appKey: key, token: replayed, deviceID: "d0") else { Issue.record("first use refused"); return }

        let cases: [(appKey: String, token: String, code: String)] = [
            ("no-such-app", try harness.token(for: "alice"), "token_wrong_application"),
            (key, "not.a.token", "token_malformed"),
            (key, try harness.token(for: "alice", secret: otherSecret), "token_bad_signature"),
            (key, try harness.token(for: "alice", issuedAt: now - 4000, lifetime: 600), "token_expired"),
            (key, try harness.token(for: "alice", issuedAt: now + 3600), "token_not_yet_valid"),
            (key, try harness.token(for: "alice", applicationKey: "another-app"), "token_wrong_application"),
            (key, replayed, "token_replayed"),
        ]
        for (index, item) in cases.enumerated() {
            let device = try TestDevice(address: harness.address)
            let reply = try device.hello(appKey: item.appKey, token: item.token, deviceID: "d\(index + 1)")
            #expect(reply.errorCode == item.code, "case \(index): \(reply)")
            #expect(reply.replyTo == "r1")
            if item.code == "token_expired", case .error(let error) = reply {
                // The message as docs/protocol.md's token_expired example shows it.
                #expect(error.message.hasPrefix("token refused (expired) in exp: expired at \(now - 4000 + 600), now "), "\(error.message)")
                #expect(error.message.hasSuffix(" (leeway 60 s)"), "\(error.message)")
            }
            #expect(try device.expectClose() == 4001, "case \(index)")
        }
        #expect(harness.server.metrics.snapshot.authFailures["token_wrong_application"] == 2)
    }

    @Test func requestsBeforeHelloAreNotAuthenticatedAndPingStillWorks() throws {
        let harness = try ServerHarness()
        let device = try TestDevice(address: harness.address)
        try device.send(.callHangup(.init(requestID: "h1", callID: "6f1c2a9e-3b7d-4c55-9a41-0e8f5d2b7c13")))
        let reply = try device.expectMessage()
        #expect(reply.errorCode == "not_authenticated")
        #expect(reply.replyTo == "h1")
        try device.send(.ping(.init(requestID: "p")))
        #expect(try device.expectMessage().type == .pong)
        guard case .helloOK = try device.hello(appKey: harness.application.key, token: try harness.token(for: "bob"), deviceID: "b") else {
            Issue.record("hello after refusals failed"); return
        }
        let again = try device.hello(appKey: harness.application.key, token: try harness.token(for: "bob"), deviceID: "b")
        #expect(again.errorCode == "already_authenticated")
    }

    @Test func helloWithAnotherVersionIsRefusedAndClosed4006() throws {
        let harness = try ServerHarness()
        let device = try TestDevice(address: harness.address)
        try device.sendText(#"{"v":2,"type":"hello","id":"h"}"#)
        let reply = try device.expectMessage()
        #expect(reply.errorCode == "unsupported_version")
        #expect(reply.replyTo == "h")
        guard case .error(let error) = reply else { return }
        #expect(error.supportedVersions == [1])
        #expect(try device.expectClose() == 4006)
    }

    @Test func silentConnectionIsClosed4002AfterHelloTimeout() throws {
        let harness = try ServerHarness { $0.helloTimeout = .milliseconds(300) }
        let device = try TestDevice(address: harness.address)
        let start = ContinuousClock.now
        #expect(try device.expectClose(timeout: .seconds(3)) == 4002)
        #expect(ContinuousClock.now - start >= .milliseconds(250))
    }

    @Test func silenceAfterHelloIsClosed4004AfterTwoHeartbeats() throws {
        // The protocol's smallest heartbeat is one second.
        let harness = try ServerHarness { $0.heartbeatInterval = .seconds(1) }
        let device = try harness.device("alice")
        // Pings keep it open past twice the heartbeat.
        for index in 0..<4 {
            Thread.sleep(forTimeInterval: 0.6)
            try device.send(.ping(.init(requestID: "p\(index)")))
            #expect(try device.expectMessage().type == .pong)
        }
        #expect(try device.expectClose(timeout: .seconds(3)) == 4004)
    }

    @Test func newConnectionOfTheSameDeviceReplacesTheOldOne4003() throws {
        let harness = try ServerHarness()
        let old = try harness.device("alice", deviceID: "same")
        let new = try harness.device("alice", deviceID: "same")
        #expect(try old.expectClose() == 4003)
        try new.send(.ping(.init(requestID: "p")))
        #expect(try new.expectMessage().type == .pong)
        // Another device of the same user is not affected.
        let other = try harness.device("alice", deviceID: "tablet")
        try other.send(.ping(.init(requestID: "p")))
        #expect(try other.expectMessage().type == .pong)
    }

    @Test func resumeKeepsTheSessionAndANewHelloDoesNot() throws {
        let harness = try ServerHarness()
        let first = try TestDevice(address: harness.address)
        guard case .helloOK(let ok) = try first.hello(appKey: harness.application.key, token: try harness.token(for: "alice"), deviceID: "a")
        else { Issue.record("hello failed"); return }
        first.drop()
        Thread.sleep(forTimeInterval: 0.1)
        let second = try TestDevice(address: harness.address)
        guard case .helloOK(let resumed) = try second.hello(appKey: harness.application.key, token: try harness.token(for: "alice"),
                                                            deviceID: "a", resume: ok.sessionID)
        else { Issue.record("resume failed"); return }
        #expect(resumed.resumed)
        #expect(resumed.sessionID == ok.sessionID)
        second.drop()
        Thread.sleep(forTimeInterval: 0.1)
        let third = try TestDevice(address: harness.address)
        guard case .helloOK(let fresh) = try third.hello(appKey: harness.application.key, token: try harness.token(for: "alice"),
                                                         deviceID: "a", resume: "s-unknown")
        else { Issue.record("hello failed"); return }
        #expect(!fresh.resumed)
        #expect(fresh.sessionID != ok.sessionID)
    }

    @Test func aFrameOverTheLimitCloses1009() throws {
        let harness = try ServerHarness { $0.maxFrameSize = 4096 }
        let device = try harness.device("alice")
        try device.sendText(#"{"v":1,"type":"ping","id":"big","pad":""# + String(repeating: "x", count: 5000) + #""}"#)
        #expect(try device.expectClose() == 1009)
    }

    @Test func aDeviceOverTheMessageRateIsClosed4005() throws {
        let harness = try ServerHarness {
            $0.maxRequestsPerSecond = 2
            $0.requestBurst = 5
        }
        let device = try harness.device("alice")
        var code: UInt16?
        for index in 0..<40 {
            do { try device.send(.ping(.init(requestID: "p\(index)"))) } catch { break }
        }
        code = try device.expectClose()
        #expect(code == 4005)
    }

    /// docs/protocol.md, Limits: a hello and 120 pings sent back to back (the default
    /// limits: 20 requests per second, burst 50; the edge's hard stop at twice that).
    /// Every frame within the hard limit gets exactly one reply, in order: hello.ok, pongs
    /// for the 49 pings inside the burst, `rate_limited` for those over it; then one
    /// `rate_limited` error without `re` and the close 4005, after all of them. Frames
    /// past the hard limit are not read.
    @Test func aBurstOverTheRateLimitGetsEveryReplyBeforeThe4005Close() throws {
        let harness = try ServerHarness()
        let peer = try RawWebSocketPeer(harness.address)
        let hello = SignalingMessage.hello(.init(
            requestID: "h", appKey: harness.application.key, token: try harness.token(for: "alice"), deviceID: "alice-phone",
            sdk: .init(name: "server-tests", version: "1"), capabilities: ["audio"], resumeSessionID: nil))
        var bytes = RawWebSocketPeer.frame(opcode: 0x1, Array(SignalingCodec.encodeToString(hello).utf8), fin: true, rsv: 0, masked: true)
        for index in 0..<120 {
            bytes += RawWebSocketPeer.frame(opcode: 0x1, Array(#"{"v":1,"type":"ping","id":"p\#(index)"}"#.utf8),
                                            fin: true, rsv: 0, masked: true)
        }
        try peer.writeAll(bytes)

        var replies: [String: [SignalingMessage]] = [:]
        var unaddressed: [SignalingMessage] = []
        var order: [String] = []
        var close: RawWebSocketPeer.Frame?
        for _ in 0..<500 {
            guard let frame = peer.nextFrame(timeout: .seconds(10)) else { break }
            if frame.opcode == 0x8 { close = frame; break }
            guard frame.opcode == 0x1 else { continue }
            let message = try SignalingCodec.decode(frame.text)
            if let id = message.replyTo {
                replies[id, default: []].append(message)
                order.append(id)
            } else {
                unaddressed.append(message)
            }
        }
        #expect(close?.closeCode == 4005, "closed with \(String(describing: close)); log:\n\(harness.log)")
        #expect(replies.values.allSatisfy { $0.count == 1 }, "a request answered twice")
        #expect(replies["h"]?.first?.type == .helloOK)
        // Inside the burst (the hello is the first of its 50): a pong for each ping.
        let pongs = (0..<49).filter { replies["p\($0)"]?.first?.type == .pong }.count
        #expect(pongs == 49, "\(pongs) of the 49 pings inside the burst got their pong")
        // Answered: a prefix of the frames, at least the edge's hard burst (100 frames).
        let answered = (0..<120).prefix { replies["p\($0)"] != nil }.count
        #expect(answered >= 99, "only the first \(answered) pings were answered")
        #expect((answered..<120).allSatisfy { replies["p\($0)"] == nil }, "replies past a missing one")
        let overRate = replies.values.compactMap(\.first).filter { $0.errorCode == "rate_limited" }.count
        #expect(overRate >= 1, "no rate_limited reply to a request over the burst")
        #expect(replies.values.compactMap(\.first).allSatisfy { [.helloOK, .pong].contains($0.type) || $0.errorCode == "rate_limited" })
        // Pongs come in request order (rate_limited ones interleave where they were refused).
        let pingOrder = order.filter { $0 != "h" }.compactMap { Int($0.dropFirst()) }
        #expect(pingOrder == pingOrder.sorted())
        #expect(unaddressed.count == 1 && unaddressed.first?.errorCode == "rate_limited", "\(unaddressed)")
    }

    @Test func handshakeWithoutTheSubprotocolIs426() throws {
        let harness = try ServerHarness()
        #expect(throws: WebSocketClientError.self) { _ = try TestDevice(address: harness.address, subprotocols: []) }
    }

    @Test func badFramesGetErrorsAndTheConnectionStaysUsable() throws {
        let harness = try ServerHarness()
        let device = try harness.device("alice")
        let bystander = try harness.device("bob")
        try device.sendText("{\"v\":1,\"type\":")
        let malformed = try device.expectMessage()
        #expect(malformed.errorCode == "malformed")
        #expect(malformed.replyTo == nil)
        try device.sendText(#"{"v":1,"type":"call.transfer","id":"u1"}"#)
        let unknown = try device.expectMessage()
        #expect(unknown.errorCode == "unknown_type")
        #expect(unknown.replyTo == "u1")
        try device.sendText(#"{"v":1,"type":"call.hangup","id":"w1","callId":42}"#)
        let wrongType = try device.expectMessage()
        #expect(wrongType.errorCode == "bad_request")
        #expect(wrongType.replyTo == "w1")
        try device.sendText(#"{"v":2,"type":"ping","id":"v2"}"#)
        #expect(try device.expectMessage().errorCode == "unsupported_version")
        // push.unregister with nothing registered is still a result (docs/protocol.md).
        try device.sendText(#"{"v":1,"type":"push.unregister","id":"push"}"#)
        #expect(try device.expectMessage().type == .result)
        try device.send(.ping(.init(requestID: "after")))
        #expect(try device.expectMessage().type == .pong)
        try bystander.send(.ping(.init(requestID: "b")))
        #expect(try bystander.expectMessage().type == .pong)
        // A binary frame closes with 1003.
        try device.client.send(.binary([1, 2, 3]))
        #expect(try device.expectClose() == 1003)
        try bystander.send(.ping(.init(requestID: "b2")))
        #expect(try bystander.expectMessage().type == .pong)
    }
}
