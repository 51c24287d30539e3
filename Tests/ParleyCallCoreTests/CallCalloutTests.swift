import ParleyCallModel
import ParleyCallCore
import ParleySignaling
import Testing

/// Conference callouts: a room calls a user in. The user's devices ring (or are pushed) as
/// for any call; the one that answers has its leg seated in the room's mixer; the room
/// itself has no leg and hears nothing.
@Suite("Conference callouts")
struct CallCalloutTests {
    let bob1 = CallWorld.device("bob", "b1")
    let bob2 = CallWorld.device("bob", "b2")
    let bob = AppUser(applicationKey: CallWorld.app, userID: "bob")
    let id = "5b1e2c3d-4f5a-4b6c-8d7e-9f0a1b2c3d4e"

    func callout(_ world: inout CallWorld, headers: [String: String] = [:], name: String? = nil) throws {
        world.perform(try world.registry.startCallout(callID: id, room: "standup", to: bob, headers: headers, displayName: name, now: world.now))
    }

    @Test func theRoomRingsEveryDeviceAndTheAnswerSeatsThatDevicesLeg() throws {
        var world = CallWorld()
        world.connect(bob1)
        world.connect(bob2)
        try callout(&world, headers: ["agenda": "q3"], name: "Weekly standup")
        // No caller leg: the call is seated in the room and each device is offered a leg.
        #expect(world.mediaLog.first == .seatCallout(callID: id, room: "standup"))
        #expect(Set(world.mediaLog.dropFirst()) == [.offerCallee(callID: id, party: .device(bob1)), .offerCallee(callID: id, party: .device(bob2))])
        let incoming = try #require(world.inbox[bob1]?.compactMap { if case .callIncoming(let value) = $0 { value } else { nil } }.first)
        #expect(incoming.from == .conference("standup"))
        #expect(incoming.headers == ["agenda": "q3"])
        #expect(incoming.displayName == "Weekly standup")
        let first = try #require(world.records.first)
        #expect(first.direction == .conferenceToApp)
        #expect(first.caller == .conference("standup"))
        #expect(first.callerDeviceID == nil)
        #expect(first.callee == .user("bob"))
        #expect(first.conferenceID == "standup")
        #expect(first.roomParticipant == nil)

        world.ack(bob1, id)
        #expect(world.records.last?.state == .ringing)
        world.mediaLog = []
        world.answer(bob2, id)
        #expect(world.mediaLog.contains(.bridge(callID: id, party: .device(bob2))))
        #expect(world.mediaLog.contains(.closeLeg(callID: id, leg: .callee(.device(bob1)))))
        #expect(world.ended(bob1)?.cause == .otherDeviceAnswered)
        #expect(world.records.last?.state == .answered)
        #expect(world.records.last?.roomParticipant == bob2)

        // Established once the answering leg connects: the room has no leg to wait for.
        world.media(.legConnected(.callee(.device(bob2))), id)
        #expect(world.log(bob2).last == "call.established")
        #expect(world.records.last?.state == .established)
        // The room heard each step, and parleyd drops what a room hears.
        #expect(Set(world.roomLog.map(\.party)) == [RoomParty(callID: id, room: "standup")])

        world.hangup(bob2, id)
        #expect(world.ended(bob2)?.cause == .hungUp)
        #expect(world.records.last?.endCause == .hungUp)
        #expect(world.registry.activeCalls.isEmpty)
    }

    @Test func anOfflineUserWithPushDevicesIsPushedWithTheRoomAsCaller() throws {
        var world = CallWorld()
        world.registry.markKnown(bob)
        world.registry.setPushDevices(bob, deviceIDs: ["b1"])
        try callout(&world)
        let push = try #require(world.pushes.first)
        #expect(push.from == .conference("standup"))
        #expect(push.devices == [bob1])
        #expect(world.mediaLog == [.seatCallout(callID: id, room: "standup")])

        world.connect(bob1)
        world.relay(bob1, id)
        #expect(world.mediaLog.last == .offerCallee(callID: id, party: .device(bob1)))
        #expect(world.records.last?.state == .ringing)
        world.answer(bob1, id)
        world.media(.legConnected(.callee(.device(bob1))), id)
        #expect(world.records.last?.state == .established)
    }

    @Test func aServerHangupKicksTheCalledUserAndADeclineEndsTheCallout() throws {
        var world = CallWorld()
        world.connect(bob1)
        try callout(&world)
        world.answer(bob1, id)
        world.media(.legConnected(.callee(.device(bob1))), id)
        world.perform(try world.registry.hangUp(callID: id, now: world.now))
        #expect(world.ended(bob1)?.cause == .hungUp)

        var declined = CallWorld()
        declined.connect(bob1)
        try callout(&declined)
        declined.decline(bob1, id)
        #expect(declined.records.last?.endCause == .denied)
        #expect(declined.mediaLog.last == .closeAll(callID: id))
    }

    @Test func unknownAndUnreachableUsersAndReusedIdsAreRefusedBeforeAnythingStarts() throws {
        var world = CallWorld()
        #expect(throws: CallingError.self) { try world.registry.startCallout(callID: id, room: "standup", to: bob, now: world.now) }
        world.registry.markKnown(bob)
        do {
            _ = try world.registry.startCallout(callID: id, room: "standup", to: bob, now: world.now)
            Issue.record("a user with no device and no push was called")
        } catch {
            #expect(error.signalingCode == .destinationUnavailable)
        }
        #expect(world.registry.activeCalls.isEmpty)
        world.connect(bob1)
        try callout(&world)
        do {
            _ = try world.registry.startCallout(callID: id, room: "standup", to: bob, now: world.now)
            Issue.record("a call id was used twice")
        } catch {
            #expect(error.signalingCode == .callExists)
        }
        do {
            _ = try world.registry.startCallout(callID: "not-a-uuid", room: "standup", to: bob, now: world.now)
            Issue.record("a malformed call id was accepted")
        } catch {
            #expect(error.signalingCode == .badRequest)
        }
    }

    @Test func aRingTimeoutEndsAnUnansweredCalloutAndItsSeat() throws {
        var world = CallWorld()
        world.connect(bob1)
        try callout(&world)
        world.ack(bob1, id)
        world.advance(by: .seconds(120))
        #expect(world.ended(bob1)?.cause == .timeout)
        #expect(world.mediaLog.last == .closeAll(callID: id))
    }
}
