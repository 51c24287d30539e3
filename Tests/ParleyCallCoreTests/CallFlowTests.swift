import ParleyCallModel
import ParleyCallCore
import ParleySignaling
import Testing

/// The call flows of docs/protocol.md ("Call flows"), with the exact order of what each
/// device receives.
@Suite("Call flows")
struct CallFlowTests {
    let alice = CallWorld.device("alice", "a1")
    let bob1 = CallWorld.device("bob", "b1")
    let bob2 = CallWorld.device("bob", "b2")
    let bob3 = CallWorld.device("bob", "b3")
    let id = "6f1c2a9e-3b7d-4c55-9a41-0e8f5d2b7c13"

    func world(bobs: [Device]) -> CallWorld {
        var world = CallWorld()
        world.connect(alice)
        for bob in bobs { world.connect(bob) }
        return world
    }

    @Test("App-to-app call: Alice to Bob on two devices, B1 answers, Alice hangs up")
    func appToAppCall() throws {
        var world = world(bobs: [bob1, bob2])
        world.call(from: alice, to: "bob", callID: id)
        #expect(world.log(alice) == ["result", "call.media", "call.progress"])
        #expect(world.log(bob1) == ["call.incoming"])
        #expect(world.log(bob2) == ["call.incoming"])
        #expect(world.registry.record(of: id)?.state == .progressing)

        // The caller's leg connects early: ICE and DTLS start at call.media.
        world.media(.legConnected(.caller), id)
        world.ack(bob1, id)
        world.ack(bob2, id)
        #expect(world.registry.record(of: id)?.state == .ringing)
        world.answer(bob1, id)
        #expect(world.registry.record(of: id)?.state == .answered)
        world.media(.legConnected(.callee(.device(bob1))), id)
        #expect(world.registry.record(of: id)?.state == .established)
        world.hangup(alice, id)

        #expect(world.log(alice) == [
            "result", "call.media", "call.progress", "call.ringing", "call.answered", "call.established",
            "result", "call.ended:hungUp",
        ])
        #expect(world.log(bob1) == ["call.incoming", "result", "result", "call.answered", "call.established", "call.ended:hungUp"])
        #expect(world.log(bob2) == ["call.incoming", "result", "call.ended:otherDeviceAnswered"])
        #expect(world.registry.activeCalls.isEmpty)

        // What went where: the caller's offer to the anchor, its answer back in call.media,
        // one anchor offer per callee device, the answer to B1's leg only.
        guard case .callMedia(let media) = world.inbox[alice]?[1] else { Issue.record("no call.media"); return }
        #expect(media.sdp == CallWorld.anchorAnswer)
        guard case .callIncoming(let incoming) = world.inbox[bob2]?[0] else { Issue.record("no call.incoming"); return }
        #expect(incoming.sdp == CallWorld.anchorOffer(bob2))
        #expect(incoming.from == .user("alice"))
        #expect(incoming.time == world.records.first?.times.startedTime)
        #expect(world.mediaLog == [
            .answerCaller(callID: id, offer: CallWorld.callerOffer, topology: .relay),
            .offerCallee(callID: id, party: .device(bob1)),
            .offerCallee(callID: id, party: .device(bob2)),
            .closeLeg(callID: id, leg: .callee(.device(bob2))),
            .acceptAnswer(callID: id, party: .device(bob1), answer: CallWorld.deviceAnswer),
            .bridge(callID: id, party: .device(bob1)),
            .closeAll(callID: id),
        ])
    }

    @Test("Event times: details of call.ended and the record follow the clock")
    func eventTimes() throws {
        var world = world(bobs: [bob1])
        let start = world.now.unixMilliseconds
        world.call(from: alice, to: "bob", callID: id)
        world.advance(by: .milliseconds(200))
        world.ack(bob1, id)
        world.advance(by: .seconds(4))
        world.answer(bob1, id)
        world.advance(by: .milliseconds(100))
        world.media(.legConnected(.caller), id)
        world.media(.legConnected(.callee(.device(bob1))), id)
        world.advance(by: .seconds(60))
        world.hangup(bob1, id)

        let callerEnd = try #require(world.ended(alice))
        #expect(callerEnd.details == .init(
            startedTime: start, progressedTime: start, rungTime: start + 200, answeredTime: start + 4200,
            establishedTime: start + 4300, endedTime: start + 64_300
        ))
        let calleeEnd = try #require(world.ended(bob1))
        #expect(calleeEnd.details == .init(startedTime: start, answeredTime: start + 4200, establishedTime: start + 4300, endedTime: start + 64_300))
        let record = try #require(world.records.last)
        #expect(record.state == .ended)
        #expect(record.endCause == .hungUp)
        #expect(record.answeredDeviceID == "b1")
        #expect(record.durationMillis == 60_000)
        #expect(record.error == nil)
    }

    @Test("Bob declines: both sides end with denied")
    func decline() {
        var world = world(bobs: [bob1, bob2])
        world.call(from: alice, to: "bob", callID: id)
        world.ack(bob1, id)
        world.decline(bob1, id)
        #expect(world.log(alice) == ["result", "call.media", "call.progress", "call.ringing", "call.ended:denied"])
        #expect(world.log(bob1) == ["call.incoming", "result", "result", "call.ended:denied"])
        #expect(world.log(bob2) == ["call.incoming", "call.ended:denied"])
        #expect(world.records.last?.endCause == .denied)
    }

    @Test("A callee's call.hangup before answering is a decline")
    func calleeHangupBeforeAnswer() {
        var world = world(bobs: [bob1])
        world.call(from: alice, to: "bob", callID: id)
        world.hangup(bob1, id)
        #expect(world.log(alice) == ["result", "call.media", "call.progress", "call.ended:denied"])
        #expect(world.log(bob1) == ["call.incoming", "result", "call.ended:denied"])
    }

    @Test("Alice cancels before the answer: every callee device ends with canceled")
    func cancel() {
        var world = world(bobs: [bob1, bob2, bob3])
        world.call(from: alice, to: "bob", callID: id)
        world.ack(bob1, id)
        world.ack(bob3, id)
        world.hangup(alice, id)
        #expect(world.log(alice) == ["result", "call.media", "call.progress", "call.ringing", "result", "call.ended:canceled"])
        #expect(world.log(bob1) == ["call.incoming", "result", "call.ended:canceled"])
        #expect(world.log(bob2) == ["call.incoming", "call.ended:canceled"])
        #expect(world.log(bob3) == ["call.incoming", "result", "call.ended:canceled"])
        #expect(world.mediaLog.last == .closeAll(callID: id))
    }

    @Test("Hang up from the callee after the answer")
    func calleeHangsUp() {
        var world = world(bobs: [bob1])
        world.call(from: alice, to: "bob", callID: id)
        world.ack(bob1, id)
        world.answer(bob1, id)
        world.media(.legConnected(.callee(.device(bob1))), id)
        world.media(.legConnected(.caller), id)
        world.hangup(bob1, id)
        #expect(world.log(alice) == ["result", "call.media", "call.progress", "call.ringing", "call.answered", "call.established", "call.ended:hungUp"])
        #expect(world.log(bob1) == ["call.incoming", "result", "result", "call.answered", "call.established", "result", "call.ended:hungUp"])
    }

    @Test("Hang up after the answer but before media: hungUp, never established")
    func hangupBeforeEstablished() {
        var world = world(bobs: [bob1])
        world.call(from: alice, to: "bob", callID: id)
        world.answer(bob1, id)
        world.hangup(alice, id)
        #expect(world.log(alice) == ["result", "call.media", "call.progress", "call.answered", "result", "call.ended:hungUp"])
        #expect(world.log(bob1) == ["call.incoming", "result", "call.answered", "call.ended:hungUp"])
    }

    @Test("Three devices: one answers, the other two end with otherDeviceAnswered")
    func threeDevices() {
        var world = world(bobs: [bob1, bob2, bob3])
        world.call(from: alice, to: "bob", callID: id)
        for bob in [bob1, bob2, bob3] { world.ack(bob, id) }
        world.answer(bob2, id)
        #expect(world.log(bob1) == ["call.incoming", "result", "call.ended:otherDeviceAnswered"])
        #expect(world.log(bob3) == ["call.incoming", "result", "call.ended:otherDeviceAnswered"])
        #expect(world.log(bob2) == ["call.incoming", "result", "result", "call.answered"])
        #expect(world.log(alice) == ["result", "call.media", "call.progress", "call.ringing", "call.answered"])
        #expect(world.mediaLog.contains(.closeLeg(callID: id, leg: .callee(.device(bob1)))))
        #expect(world.mediaLog.contains(.closeLeg(callID: id, leg: .callee(.device(bob3)))))
        #expect(!world.mediaLog.contains(.closeLeg(callID: id, leg: .callee(.device(bob2)))))

        // A late answer or ack from a device that lost the race.
        world.answer(bob3, id)
        world.ack(bob1, id)
        #expect(world.log(bob3).suffix(1) == ["error:invalid_state"])
        #expect(world.log(bob1).suffix(1) == ["error:invalid_state"])
        #expect(world.registry.record(of: id)?.answeredDeviceID == "b2")
    }

    @Test("Unknown callee: result, then call.ended error destination_not_found at once")
    func unknownUser() throws {
        var world = world(bobs: [])
        world.call(from: alice, to: "nobody", callID: id)
        #expect(world.log(alice) == ["result", "call.ended:error"])
        let ended = try #require(world.ended(alice))
        #expect(ended.error == .init(code: .destinationNotFound, message: "destination user not found"))
        #expect(ended.details.startedTime == ended.details.endedTime)
        #expect(world.mediaLog.isEmpty)
        #expect(world.records.count == 1)
        #expect(world.records.last?.error?.code == "destination_not_found")
        #expect(world.records.last?.error?.message == "destination user not found")
        #expect(world.registry.activeCalls.isEmpty)
    }

    @Test("Known callee with no connected device: error destination_unavailable")
    func offlineUser() throws {
        var world = world(bobs: [bob1])
        world.disconnect(bob1)
        world.call(from: alice, to: "bob", callID: id)
        #expect(world.log(alice) == ["result", "call.ended:error"])
        #expect(world.ended(alice)?.error?.code == .destinationUnavailable)

        // Users known from the store (earlier runs) are known too.
        var fresh = CallWorld()
        fresh.connect(alice)
        fresh.registry.markKnown(AppUser(applicationKey: CallWorld.app, userID: "carol"))
        fresh.call(from: alice, to: "carol", callID: id)
        #expect(fresh.ended(alice)?.error?.code == .destinationUnavailable)
    }

    @Test("Calling yourself rings your other devices only")
    func callingYourself() {
        let alice2 = CallWorld.device("alice", "a2")
        var world = world(bobs: [])
        world.connect(alice2)
        world.call(from: alice, to: "alice", callID: id)
        #expect(world.log(alice2) == ["call.incoming"])
        #expect(world.log(alice) == ["result", "call.media", "call.progress"])

        var alone = CallWorld()
        alone.connect(alice)
        alone.call(from: alice, to: "alice", callID: id)
        #expect(alone.ended(alice)?.error?.code == .destinationUnavailable)
    }
}
