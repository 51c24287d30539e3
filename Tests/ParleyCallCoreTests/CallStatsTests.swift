import ParleyCallModel
import ParleyCallCore
import ParleySignaling
import Testing

/// `call.stats`: a party's device reports its playout counters for its own leg, during
/// the call and for a while after it ended; anyone else is refused.
@Suite("Call stats")
struct CallStatsTests {
    let alice = CallWorld.device("alice", "a1")
    let bob1 = CallWorld.device("bob", "b1")
    let bob2 = CallWorld.device("bob", "b2")
    let eve = CallWorld.device("eve", "e1")
    let id = "9a2e4c71-55d3-4b0e-a6f8-3c1d7e2b9f40"
    let playout = SignalingMessage.CallStats.Playout(
        framesPlayed: 500, framesConcealed: 9, framesFECRecovered: 4, framesComfortNoise: 1, framesSilent: 2,
        framesStretched: 3, framesShrunk: 5, packetsLate: 6, targetDelayMilliseconds: 40)

    func answeredCall() -> CallWorld {
        var world = CallWorld()
        for device in [alice, bob1, bob2, eve] { world.connect(device) }
        world.call(from: alice, to: "bob", callID: id)
        world.ack(bob1, id)
        world.answer(bob1, id)
        return world
    }

    func stats(_ world: inout CallWorld, from device: Device, requestID: String = "s") {
        world.perform(world.registry.handleRequest(.callStats(.init(requestID: requestID, callID: id, playout: playout)), from: device, now: world.now))
    }

    func lastError(_ world: CallWorld, _ device: Device) -> SignalingMessage.ErrorReply? {
        guard case .error(let error) = world.inbox[device]?.last else { return nil }
        return error
    }

    @Test("The caller and the answering device report for their own legs, during and after the call")
    func partiesReport() {
        var world = answeredCall()
        stats(&world, from: alice)
        #expect(world.inbox[alice]?.last == .result(.init(replyTo: "s")))
        world.hangup(alice, id)
        world.advance(by: .seconds(30))
        stats(&world, from: bob1)
        #expect(world.inbox[bob1]?.last == .result(.init(replyTo: "s")))
        #expect(world.playouts.map(\.role) == [.caller, .callee])
        #expect(world.playouts.allSatisfy { $0.callID == id })
        let stored = world.playouts[1].playout
        #expect(stored.framesPlayed == 500 && stored.framesConcealed == 9 && stored.framesFECRecovered == 4)
        #expect(stored.framesComfortNoise == 1 && stored.framesSilent == 2 && stored.framesStretched == 3)
        #expect(stored.framesShrunk == 5 && stored.packetsLate == 6 && stored.targetDelayMilliseconds == 40)
        #expect(stored.reportedTime == world.now.unixMilliseconds)
    }

    @Test("Other devices, other users and unknown calls get call_not_found; a late report invalid_state")
    func refusals() {
        var world = answeredCall()
        stats(&world, from: eve)
        #expect(lastError(world, eve)?.code == .callNotFound)
        stats(&world, from: bob2)
        #expect(lastError(world, bob2)?.code == .callNotFound, "bob's other device did not answer")
        world.hangup(alice, id)
        world.advance(by: .seconds(61))
        stats(&world, from: alice)
        #expect(lastError(world, alice)?.code == .invalidState)
        #expect(world.playouts.isEmpty)
        world.perform(world.registry.handleRequest(
            .callStats(.init(requestID: "x", callID: "00000000-0000-4000-8000-000000000000", playout: playout)), from: alice, now: world.now))
        #expect(lastError(world, alice)?.code == .callNotFound)
    }
}
