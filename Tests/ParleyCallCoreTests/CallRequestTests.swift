import ParleyCallModel
import ParleyCallCore
import ParleySignaling
import ParleyTestSupport
import Testing

/// Requests that do not fit: the error replies of docs/protocol.md ("Error codes").
@Suite("Call requests refused")
struct CallRequestTests {
    let alice = CallWorld.device("alice", "a1")
    let bob1 = CallWorld.device("bob", "b1")
    let eve = CallWorld.device("eve", "e1")
    let id = "9a2e4c71-55d3-4b0e-a6f8-3c1d7e2b9f40"

    func world() -> CallWorld {
        var world = CallWorld()
        for device in [alice, bob1, eve] { world.connect(device) }
        return world
    }

    func lastError(_ world: CallWorld, _ device: Device) -> SignalingMessage.ErrorReply? {
        guard case .error(let error) = world.inbox[device]?.last else { return nil }
        return error
    }

    @Test("Headers over 1024 bytes in total are refused at start with too_large")
    func headersTooLarge() throws {
        var world = world()
        let big = ["X-Big": String(repeating: "a", count: 1024 - 5 + 1)]
        world.call(from: alice, to: "bob", callID: id, headers: big)
        let error = try #require(lastError(world, alice))
        #expect(error.code == .tooLarge)
        #expect(error.field == "headers")
        #expect(error.replyTo == "r1")
        #expect(error.message == "call \(id): headers total size 1025 bytes exceeds 1024")
        #expect(world.log(bob1) == [])
        #expect(world.registry.activeCalls.isEmpty)
        #expect(world.records.isEmpty)

        // Exactly 1024 bytes is fine, and the callee gets them.
        let fits = ["X-Big": String(repeating: "a", count: 1024 - 5)]
        world.call(from: alice, to: "bob", callID: id, headers: fits)
        guard case .callIncoming(let incoming) = world.inbox[bob1]?.first else { Issue.record("no call.incoming"); return }
        #expect(incoming.headers == fits)

        var many: [String: String] = [:]
        for index in 0..<65 { many["h\(index)"] = "" }
        #expect(throws: CallingError.self) { try CallStateMachine.checkHeaders(many, callID: nil) }
    }

    @Test("A call id in use, or of an ended call, is refused with call_exists")
    func callExists() {
        var world = world()
        world.call(from: alice, to: "bob", callID: id)
        world.call(from: eve, to: "bob", callID: id)
        #expect(lastError(world, eve)?.code == .callExists)
        world.hangup(alice, id)
        world.call(from: alice, to: "bob", callID: id)
        #expect(lastError(world, alice)?.code == .callExists)
    }

    @Test("Phone and SIP destinations without SIP dialling: not_implemented")
    func notImplemented() {
        var world = world()
        for to: SignalingMessage.Address in [.phone("+46701234567"), .sip("sip:bob@pbx.example.com")] {
            let start = SignalingMessage.CallStart(requestID: "7", callID: id, to: to, sdp: CallWorld.callerOffer)
            world.perform(world.registry.handleRequest(.callStart(start), from: alice, now: world.now))
            #expect(lastError(world, alice)?.code == .notImplemented)
            #expect(lastError(world, alice)?.field == "to.kind")
        }
        world.perform(world.registry.handleRequest(.ping(.init(requestID: "8")), from: alice, now: world.now))
        #expect(lastError(world, alice)?.code == .notImplemented)
    }

    @Test("Requests about a call the device is not part of: call_not_found")
    func callNotFound() {
        var world = world()
        world.ack(bob1, id)
        #expect(lastError(world, bob1)?.code == .callNotFound)
        world.call(from: alice, to: "bob", callID: id)
        world.ack(eve, id)
        #expect(lastError(world, eve)?.code == .callNotFound)
        world.answer(eve, id)
        #expect(lastError(world, eve)?.code == .callNotFound)
        world.hangup(eve, id)
        #expect(lastError(world, eve)?.code == .callNotFound)
        world.perform(world.registry.handleRequest(.iceCandidate(.init(requestID: "9", callID: id, candidate: "")), from: eve, now: world.now))
        #expect(lastError(world, eve)?.code == .callNotFound)
        world.perform(world.registry.handleRequest(.iceCandidate(.init(requestID: "9", callID: id, candidate: "")), from: bob1, now: world.now))
        #expect(world.log(bob1).last == "result")
        // Nothing of this reached the call.
        #expect(world.log(alice) == ["result", "call.media", "call.progress"])
    }

    @Test("Requests that do not fit the state: invalid_state")
    func invalidState() {
        var world = world()
        world.call(from: alice, to: "bob", callID: id)
        // The caller cannot act as a callee.
        world.answer(alice, id)
        #expect(lastError(world, alice)?.code == .callNotFound)
        world.answer(bob1, id)
        world.decline(bob1, id)
        #expect(lastError(world, bob1)?.code == .invalidState)
        world.answer(bob1, id)
        #expect(lastError(world, bob1)?.code == .invalidState)
        world.perform(world.registry.handleRequest(.callDTMF(.init(requestID: "5", callID: id, digits: "12")), from: alice, now: world.now))
        #expect(lastError(world, alice)?.code == .invalidState)
        world.hangup(bob1, id)
        world.hangup(bob1, id)
        #expect(lastError(world, bob1)?.code == .invalidState)
        world.ack(bob1, id)
        #expect(lastError(world, bob1)?.code == .invalidState)
    }

    @Test("An ack twice is fine; a second ack does not ring again")
    func ackTwice() {
        var world = world()
        world.call(from: alice, to: "bob", callID: id)
        world.ack(bob1, id)
        world.ack(bob1, id)
        #expect(world.log(bob1) == ["call.incoming", "result", "result"])
        #expect(world.log(alice) == ["result", "call.media", "call.progress", "call.ringing"])
    }

    @Test("DTMF on an established call goes to the other party's leg")
    func dtmf() {
        var world = world()
        world.call(from: alice, to: "bob", callID: id)
        world.answer(bob1, id)
        world.media(.legConnected(.caller), id)
        world.media(.legConnected(.callee(.device(bob1))), id)
        world.perform(world.registry.handleRequest(.callDTMF(.init(requestID: "5", callID: id, digits: "12#")), from: alice, now: world.now))
        world.perform(world.registry.handleRequest(.callDTMF(.init(requestID: "6", callID: id, digits: "9")), from: bob1, now: world.now))
        #expect(world.log(alice).last == "result")
        #expect(world.mediaLog.suffix(2) == [
            .sendDTMF(callID: id, leg: .callee(.device(bob1)), digits: "12#"),
            .sendDTMF(callID: id, leg: .caller, digits: "9"),
        ])
    }

    @Test("Call ids: random version 4 UUIDs in canonical lower-case form")
    func callIDs() {
        var generator = SeededGenerator(seed: 7)
        var seen: Set<String> = []
        for _ in 0..<1000 {
            let id = CallID.random(using: &generator)
            #expect(CallID.isValid(id))
            let characters = Array(id)
            #expect(characters[14] == "4")
            #expect("89ab".contains(characters[19]))
            seen.insert(id)
        }
        #expect(seen.count == 1000)
        var system = SystemRandomNumberGenerator()
        #expect(CallID.isValid(CallID.random(using: &system)))
        #expect(!CallID.isValid("6F1C2A9E-3B7D-4C55-9A41-0E8F5D2B7C13"))
        #expect(!CallID.isValid("6f1c2a9e3b7d-4c55-9a41-0e8f5d2b7c13-"))
        #expect(!CallID.isValid(""))
    }
}
