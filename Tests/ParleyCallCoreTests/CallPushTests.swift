import ParleyCallModel
import ParleyCallCore
import ParleySignaling
import Testing

/// Calls to a user whose devices are reachable only by push (docs/push.md).
@Suite("Call push flows")
struct CallPushTests {
    let alice = CallWorld.device("alice", "a1")
    let bob1 = CallWorld.device("bob", "b1")
    let bob2 = CallWorld.device("bob", "b2")
    let id = "6f1c2a9e-3b7d-4c55-9a41-0e8f5d2b7c13"

    func world() -> CallWorld {
        var world = CallWorld()
        world.connect(alice)
        world.registry.setPushDevices(AppUser(applicationKey: CallWorld.app, userID: "bob"), deviceIDs: ["b1", "b2"])
        return world
    }

    @Test func offlineCalleeWithTokensIsPushedThenRelayConnectsTheCall() {
        var world = world()
        world.call(from: alice, to: "bob", callID: id, headers: ["k": "v"])
        #expect(world.log(alice) == ["result", "call.media", "call.progress"])
        #expect(world.pushes.count == 1)
        let push = world.pushes[0]
        #expect(push.devices == [bob1, bob2] && push.callID == id && push.headers == ["k": "v"])
        #expect(push.expiresTime - push.issuedTime == 60_000)
        // No leg is made for a device that has not relayed.
        #expect(!world.mediaLog.contains(.offerCallee(callID: id, party: .device(bob1))))

        // B1 wakes: a new session ("lost" for its calls) must not drop it from the ring set.
        world.connect(bob1)
        world.relay(bob1, id)
        #expect(world.log(bob1) == ["result", "call.incoming"])
        #expect(world.log(alice) == ["result", "call.media", "call.progress", "call.ringing"])
        #expect(world.registry.record(of: id)?.state == .ringing)
        world.answer(bob1, id)
        world.media(.legConnected(.caller), id)
        world.media(.legConnected(.callee(.device(bob1))), id)
        #expect(world.registry.record(of: id)?.state == .established)

        // B2 relays after B1 answered: told at once, never rings.
        world.connect(bob2)
        world.relay(bob2, id)
        #expect(world.log(bob2) == ["result", "call.ended:otherDeviceAnswered"])
    }

    @Test func callerCancelsDuringThePushAndALateRelayEndsCanceled() {
        var world = world()
        world.call(from: alice, to: "bob", callID: id)
        world.hangup(alice, id)
        #expect(world.log(alice).last == "call.ended:canceled")
        #expect(world.log(bob1).isEmpty)
        world.connect(bob1)
        world.relay(bob1, id)
        #expect(world.log(bob1) == ["result", "call.ended:canceled"])
        #expect(world.registry.activeCalls.isEmpty)
    }

    @Test func neverAcknowledgedEndsNoAnswer() {
        var world = world()
        world.call(from: alice, to: "bob", callID: id)
        world.advance(by: .seconds(61))
        #expect(world.log(alice).last == "call.ended:noAnswer")
        world.connect(bob2)
        world.relay(bob2, id)
        #expect(world.log(bob2) == ["result", "call.ended:noAnswer"])
    }

    @Test func relayForAnUnknownCallOrAnotherUserIsCallNotFound() {
        var world = world()
        world.call(from: alice, to: "bob", callID: id)
        let carol = CallWorld.device("carol", "c1")
        world.connect(carol)
        world.relay(carol, id)
        #expect(world.log(carol) == ["error:call_not_found"])
        world.relay(bob1, "00000000-0000-4000-8000-000000000000")
        #expect(world.log(bob1) == ["error:call_not_found"])
        // Relaying twice is harmless: one call.incoming.
        world.relay(bob1, id)
        world.relay(bob1, id)
        #expect(world.log(bob1) == ["error:call_not_found", "result", "call.incoming", "result"])
    }

    @Test func connectedDevicesRingInsteadOfPush() {
        var world = world()
        world.connect(bob1)
        world.call(from: alice, to: "bob", callID: id)
        #expect(world.pushes.isEmpty)
        #expect(world.log(bob1) == ["call.incoming"])
    }

    @Test func relayBeforeTheCallersLegIsReadyIsOfferedWhenItIs() {
        var world = world()
        world.autoMedia = false
        world.call(from: alice, to: "bob", callID: id)
        world.connect(bob1)
        world.relay(bob1, id)
        #expect(!world.mediaLog.contains(.offerCallee(callID: id, party: .device(bob1))))
        #expect(world.log(alice) == ["result"])
        world.media(.callerLegReady(sdp: CallWorld.anchorAnswer), id)
        #expect(world.mediaLog.contains(.offerCallee(callID: id, party: .device(bob1))))
        #expect(!world.mediaLog.contains(.offerCallee(callID: id, party: .device(bob2))))
        #expect(world.log(alice) == ["result", "call.media", "call.progress", "call.ringing"])
    }
}
