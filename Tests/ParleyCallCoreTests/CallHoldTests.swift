import ParleyCallCore
import ParleySignaling
import Testing

/// `call.hold` between two app users: refused before the call is established, then told
/// to the other device as `call.held`, each change once, with the media's hold.
@Suite("Hold between app users")
struct CallHoldTests {
    let alice = CallWorld.device("alice", "a1")
    let bob1 = CallWorld.device("bob", "b1")
    let bob2 = CallWorld.device("bob", "b2")
    let id = "6f1c2a9e-3b7d-4c55-9a41-0e8f5d2b7c13"

    func hold(_ world: inout CallWorld, _ device: Device, _ held: Bool, callID: String? = nil) {
        let request = SignalingMessage.CallHold(requestID: world.nextRequestID(), callID: callID ?? id, held: held)
        world.perform(world.registry.handleRequest(.callHold(request), from: device, now: world.now))
    }

    /// The `call.held` events `device` got, as `held:by`.
    func heldEvents(_ world: CallWorld, _ device: Device) -> [String] {
        (world.inbox[device] ?? []).compactMap { message in
            guard case .callHeld(let held) = message else { return nil }
            return "\(held.held):\(held.by.rawValue)"
        }
    }

    func holds(_ world: CallWorld) -> [MediaInstruction] {
        world.mediaLog.filter { if case .setHold = $0 { true } else { false } }
    }

    /// Alice calls Bob, B1 answers, both legs connect; B2 rang and left.
    func established() -> CallWorld {
        var world = CallWorld()
        for device in [alice, bob1, bob2] { world.connect(device) }
        world.call(from: alice, to: "bob", callID: id)
        world.media(.legConnected(.caller), id)
        world.ack(bob1, id)
        world.answer(bob1, id)
        world.media(.legConnected(.callee(.device(bob1))), id)
        #expect(world.registry.record(of: id)?.state == .established)
        world.clearInboxes()
        return world
    }

    @Test("Before the call is established a hold is refused invalid_state and nothing changes")
    func refusedBeforeEstablished() {
        var world = CallWorld()
        for device in [alice, bob1] { world.connect(device) }
        world.call(from: alice, to: "bob", callID: id)
        world.clearInboxes()
        hold(&world, alice, true)
        hold(&world, bob1, true)
        #expect(world.log(alice) == ["error:invalid_state"])
        #expect(world.log(bob1) == ["error:invalid_state"])
        #expect(holds(world).isEmpty)
    }

    @Test("The caller holds and resumes: the answering device hears call.held both times, each change once; the media's hold follows")
    func callerHoldsAndResumes() throws {
        var world = established()
        world.advance(by: .seconds(2))
        hold(&world, alice, true)
        #expect(world.log(alice) == ["result"])
        #expect(heldEvents(world, bob1) == ["true:caller"])
        let event = try #require((world.inbox[bob1] ?? []).compactMap { if case .callHeld(let e) = $0 { e } else { nil } }.first)
        #expect(event.callID == id && event.time == world.now.unixMilliseconds)
        #expect(holds(world) == [.setHold(callID: id, held: true, silenced: true)])
        // Holding again is accepted and changes nothing.
        hold(&world, alice, true)
        #expect(world.log(alice) == ["result", "result"])
        #expect(heldEvents(world, bob1) == ["true:caller"])
        hold(&world, alice, false)
        #expect(heldEvents(world, bob1) == ["true:caller", "false:caller"])
        #expect(holds(world) == [.setHold(callID: id, held: true, silenced: true), .setHold(callID: id, held: false, silenced: false)])
        #expect(heldEvents(world, alice).isEmpty, "the holder is answered, not told")
        #expect(world.registry.record(of: id)?.state == .established)
    }

    @Test("Both hold: each hears the other's; the media stays held until both resumed")
    func bothHold() {
        var world = established()
        hold(&world, alice, true)
        hold(&world, bob1, true)
        #expect(heldEvents(world, alice) == ["true:callee"])
        hold(&world, alice, false)
        #expect(holds(world) == [.setHold(callID: id, held: true, silenced: true)], "still held by the callee")
        hold(&world, bob1, false)
        #expect(heldEvents(world, alice) == ["true:callee", "false:callee"])
        #expect(heldEvents(world, bob1) == ["true:caller", "false:caller"])
        #expect(holds(world).last == .setHold(callID: id, held: false, silenced: false))
    }

    @Test("A device that only rang gets invalid_state, a device never in the call and an unknown call call_not_found, an ended call an error")
    func strangersAndEndedCalls() {
        var world = established()
        hold(&world, bob2, true)
        #expect(world.log(bob2) == ["error:invalid_state"])
        let carol = CallWorld.device("carol", "c1")
        world.connect(carol)
        hold(&world, carol, true)
        #expect(world.log(carol) == ["error:call_not_found"])
        hold(&world, alice, true, callID: "0d6b9f64-1e2a-4f8c-8b37-6a5c2e1f9d08")
        #expect(world.log(alice) == ["error:call_not_found"])
        world.hangup(alice, id)
        world.clearInboxes()
        hold(&world, alice, false)
        #expect(world.log(alice).count == 1 && world.log(alice).first?.hasPrefix("error:") == true)
        #expect(heldEvents(world, bob1).isEmpty)
    }
}

/// Hold on a call to a phone number: the SIP party is told (its user agent's re-INVITE),
/// the far side's own hold reaches the caller's device, and the gateway's silence follows
/// the device's hold only.
extension CallSIPTests {
    func holdRequest(_ world: inout CallWorld, _ held: Bool) {
        let request = SignalingMessage.CallHold(requestID: world.nextRequestID(), callID: id, held: held)
        world.perform(world.registry.handleRequest(.callHold(request), from: alice, now: world.now))
    }

    @Test("The caller holds a phone call: the SIP party is told held by the caller (its re-INVITE), and the gateway sends silence")
    func callerHoldsAPhoneCall() throws {
        var world = established()
        holdRequest(&world, true)
        #expect(world.log(alice).last == "result")
        let last = try #require(world.sipLog.last)
        #expect(last.party == phoneParty())
        #expect(last.notification == .held(callID: id, held: true, by: .caller, time: world.now.unixMilliseconds))
        #expect(world.mediaLog.last == .setHold(callID: id, held: true, silenced: true))
        holdRequest(&world, false)
        #expect(world.sipLog.last?.notification == .held(callID: id, held: false, by: .caller, time: world.now.unixMilliseconds))
        #expect(world.mediaLog.last == .setHold(callID: id, held: false, silenced: false))
    }

    @Test("The far side holds (its re-INVITE): the caller hears call.held by the callee; the media is held but not silenced")
    func farSideHolds() throws {
        var world = established()
        report(&world, .held(true))
        report(&world, .held(true))
        let events = (world.inbox[alice] ?? []).compactMap { message -> String? in
            guard case .callHeld(let held) = message else { return nil }
            return "\(held.held):\(held.by.rawValue)"
        }
        #expect(events == ["true:callee"])
        #expect(world.mediaLog.last == .setHold(callID: id, held: true, silenced: false))
        // The caller holds too, then resumes: silence only while the device holds.
        holdRequest(&world, true)
        #expect(world.mediaLog.last == .setHold(callID: id, held: true, silenced: true))
        holdRequest(&world, false)
        #expect(world.mediaLog.last == .setHold(callID: id, held: true, silenced: false))
        report(&world, .held(false))
        #expect(world.mediaLog.last == .setHold(callID: id, held: false, silenced: false))
        #expect(world.registry.record(of: id)?.state == .established)
    }

    @Test("A hold the far side reports before the answer goes nowhere")
    func farSideHoldBeforeTheAnswer() {
        var world = offeredPhoneCall()
        report(&world, .held(true))
        #expect(!world.log(alice).contains("call.held"))
        #expect(!world.mediaLog.contains { if case .setHold = $0 { true } else { false } })
    }
}
