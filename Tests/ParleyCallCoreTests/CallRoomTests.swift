import ParleyCallModel
import ParleyCallCore
import ParleySignaling
import Testing

/// Calls to conference rooms: the room answers as soon as the caller's leg is in its
/// mixer, the call is established when that leg connects, and it ends as any call does.
@Suite("Calls to conference rooms")
struct CallRoomTests {
    let alice = CallWorld.device("alice", "a1")
    let id = "7d2c1e0f-3a4b-4c5d-8e9f-0a1b2c3d4e5f"

    func start(_ world: inout CallWorld, room: String) {
        let start = SignalingMessage.CallStart(requestID: world.nextRequestID(), callID: id, to: .conference(room), sdp: CallWorld.callerOffer)
        world.perform(world.registry.handleRequest(.callStart(start), from: alice, now: world.now))
    }

    @Test func theRoomAnswersAtOnceAndTheCallIsEstablishedWhenTheCallersLegConnects() throws {
        var world = CallWorld()
        world.connect(alice)
        start(&world, room: "standup")
        #expect(world.mediaLog == [.joinRoom(callID: id, offer: CallWorld.callerOffer, room: "standup")])
        // No ringing: media, progress, then the answer.
        #expect(world.log(alice) == ["result", "call.media", "call.progress", "call.answered"])
        let record = try #require(world.records.last)
        #expect(record.direction == .appToConference)
        #expect(record.callee == .conference("standup"))
        #expect(record.state == .answered)

        world.media(.legConnected(.caller), id)
        #expect(world.log(alice).last == "call.established")
        #expect(world.records.last?.state == .established)
        #expect(world.records.last?.times.establishedTime != nil)
        // Nothing was offered to anyone; the room, as the answerer, heard the answer and
        // the establishment (parleyd drops both: a room has no adapter).
        #expect(world.sipLog.isEmpty)
        #expect(world.roomLog.count == 2)
        #expect(Set(world.roomLog.map(\.party)) == [RoomParty(callID: id, room: "standup")])

        world.hangup(alice, id)
        #expect(world.log(alice).last == "call.ended:hungUp")
        #expect(world.mediaLog.last == .closeAll(callID: id))
        #expect(world.records.last?.endCause == .hungUp)
        #expect(world.registry.activeCalls.isEmpty)
    }

    @Test func aCallerLegThatFailsEndsTheCallWithMediaFailed() throws {
        var world = CallWorld()
        world.connect(alice)
        start(&world, room: "standup")
        world.media(.legFailed(.caller, reason: "DTLS: handshake failed"), id)
        let ended = try #require(world.ended(alice))
        #expect(ended.cause == .error)
        #expect(ended.error?.code == .mediaFailed)
    }

    @Test func aServerHangupOfAParticipantEndsItsCallOnly() throws {
        var world = CallWorld()
        let carol = CallWorld.device("carol", "c1")
        world.connect(alice)
        world.connect(carol)
        start(&world, room: "standup")
        let other = "8e3d2f10-4b5c-4d6e-9fa0-1b2c3d4e5f60"
        world.perform(world.registry.handleRequest(.callStart(.init(
            requestID: world.nextRequestID(), callID: other, to: .conference("standup"), sdp: CallWorld.callerOffer)), from: carol, now: world.now))
        world.media(.legConnected(.caller), id)
        world.media(.legConnected(.caller), other)
        world.perform(try world.registry.hangUp(callID: id, now: world.now))
        #expect(world.ended(alice)?.cause == .hungUp)
        #expect(world.ended(carol) == nil)
        #expect(world.registry.activeCalls.count == 1)
    }

    @Test func aPushWakingNobodyAndARingTimeoutDoNotApplyToRooms() {
        var world = CallWorld()
        world.connect(alice)
        start(&world, room: "standup")
        world.media(.legConnected(.caller), id)
        // Well past the ring timeout: an answered call does not time out ringing.
        world.advance(by: .seconds(120))
        #expect(world.ended(alice) == nil)
    }
}
