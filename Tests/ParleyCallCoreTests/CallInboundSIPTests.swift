import ParleyCallModel
import ParleyCallCore
import ParleySignaling
import Testing

/// Calls that come in over SIP: the far side is the caller, told through the SIP user
/// agent (what it hears becomes 180, 200 and BYE or a final failure); the callee is an
/// app user's devices or a conference room.
@Suite("Calls in over SIP")
struct CallInboundSIPTests {
    let bob1 = CallWorld.device("bob", "b1")
    let bob2 = CallWorld.device("bob", "b2")
    let id = "6c2d3e4f-5a6b-4c7d-8e9f-a0b1c2d3e4f5"
    static let offer = "v=0\r\no=carrier 1 1 IN IP4 198.51.100.7\r\ns=-\r\nt=0 0\r\nm=audio 30000 RTP/AVP 0 101\r\nc=IN IP4 198.51.100.7\r\n"

    var caller: SIPParty { SIPParty(callID: id, destination: .phone(PhoneRoute(number: "+46701234567"))) }

    func start(_ world: inout CallWorld, to target: PartyAddress = .user("bob"), headers: [String: String] = [:]) throws(CallingError) {
        world.perform(try world.registry.startInbound(
            callID: id, from: caller, applicationKey: CallWorld.app, to: target, offer: Self.offer, headers: headers, now: world.now))
    }

    func told(_ world: CallWorld) -> [String] {
        world.sipLog.filter { $0.party == caller }.map { entry in
            switch entry.notification {
            case .offered: "offered"
            case .answered: "answered"
            case .established: "established"
            case .ended(_, let cause, _, _): "ended:\(cause.rawValue)"
            case .mediaReady: "mediaReady"
            case .progress: "progress"
            case .ringing: "ringing"
            case .dtmf(_, let digits, _): "dtmf:\(digits)"
            case .talking: "talking"
            case .held(_, let held, _, _): held ? "held" : "resumed"
            case .earlyMedia: "earlyMedia"
            }
        }
    }

    @Test func aPhoneCallToAUserRingsItsDevicesAndTheAnswerReachesTheCaller() throws {
        var world = CallWorld()
        world.connect(bob1)
        world.connect(bob2)
        try start(&world, headers: ["x-account": "42"])
        #expect(world.mediaLog.first == .answerSIPCaller(callID: id, offer: Self.offer, room: nil))
        #expect(told(world) == ["mediaReady", "progress"])
        let incoming = try #require(world.inbox[bob1]?.compactMap { if case .callIncoming(let value) = $0 { value } else { nil } }.first)
        #expect(incoming.from == .phone("+46701234567"))
        #expect(incoming.headers == ["x-account": "42"])
        let first = try #require(world.records.first)
        #expect(first.direction == .phoneToApp && first.caller == .phone("+46701234567") && first.callee == .user("bob"))
        #expect(first.callerDeviceID == nil)

        world.ack(bob1, id)
        #expect(told(world).last == "ringing")
        world.answer(bob1, id)
        #expect(told(world).last == "answered")
        #expect(world.mediaLog.contains(.bridge(callID: id, party: .device(bob1))))
        #expect(world.ended(bob2)?.cause == .otherDeviceAnswered)
        world.media(.legConnected(.caller), id)
        world.media(.legConnected(.callee(.device(bob1))), id)
        #expect(world.records.last?.state == .established)
        #expect(told(world).last == "established")

        // DTMF across: the caller's (RFC 4733 or INFO) to bob, bob's toward the caller's leg.
        world.media(.dtmfReceived(.caller, digits: "5"), id)
        world.perform(world.registry.handleSIP(.dtmf(digits: "7"), from: caller, now: world.now))
        let digits = world.inbox[bob1]?.compactMap { if case .callDTMFReceived(let value) = $0 { value.digits } else { nil } }
        #expect(digits == ["5", "7"])
        world.perform(world.registry.handleRequest(.callDTMF(.init(requestID: world.nextRequestID(), callID: id, digits: "9")), from: bob1, now: world.now))
        #expect(world.mediaLog.last == .sendDTMF(callID: id, leg: .caller, digits: "9"))

        // The far side's BYE.
        world.perform(world.registry.handleSIP(.hungUp, from: caller, now: world.now))
        #expect(world.ended(bob1)?.cause == .hungUp)
        #expect(world.records.last?.endCause == .hungUp)
        #expect(told(world).last == "ended:hungUp")
    }

    @Test func aCancelBeforeTheAnswerEndsTheCallCanceledAndTheDeviceHangupSendsBye() throws {
        var world = CallWorld()
        world.connect(bob1)
        try start(&world)
        world.ack(bob1, id)
        world.perform(world.registry.handleSIP(.hungUp, from: caller, now: world.now))
        #expect(world.ended(bob1)?.cause == .canceled)
        #expect(world.records.last?.endCause == .canceled)

        var answered = CallWorld()
        answered.connect(bob1)
        try start(&answered)
        answered.answer(bob1, id)
        answered.hangup(bob1, id)
        #expect(answered.records.last?.endCause == .hungUp)
        #expect(told(answered).last == "ended:hungUp")
    }

    @Test func aDeclineOrNoAnswerIsToldToTheCallerAsTheEnd() throws {
        var world = CallWorld()
        world.connect(bob1)
        try start(&world)
        world.decline(bob1, id)
        #expect(told(world).last == "ended:denied")

        var timedOut = CallWorld()
        timedOut.connect(bob1)
        try start(&timedOut)
        timedOut.advance(by: .seconds(120))
        #expect(told(timedOut).last == "ended:noAnswer")
    }

    @Test func aCallToAConferenceRoomJoinsTheCallersLegToTheMixer() throws {
        var world = CallWorld()
        try start(&world, to: .conference("standup"))
        #expect(world.mediaLog.first == .answerSIPCaller(callID: id, offer: Self.offer, room: "standup"))
        #expect(told(world) == ["mediaReady", "progress", "answered"])
        #expect(world.records.last?.direction == .phoneToConference)
        world.media(.legConnected(.caller), id)
        #expect(world.records.last?.state == .established)
    }

    @Test func unknownUsersUnreachableUsersAndUndiallableTargetsAreRefusedBeforeAnythingStarts() throws {
        var world = CallWorld()
        do throws(CallingError) {
            try start(&world)
            Issue.record("an unknown user was called")
        } catch {
            #expect(error.signalingCode == .destinationNotFound)
        }
        world.registry.markKnown(AppUser(applicationKey: CallWorld.app, userID: "bob"))
        do throws(CallingError) {
            try start(&world)
            Issue.record("a user with no device was called")
        } catch {
            #expect(error.signalingCode == .destinationUnavailable)
        }
        do throws(CallingError) {
            // Bridged to a call out only where SIP dialling is on (CallSIPBridgeTests).
            try start(&world, to: .phone("+15551234567"))
            Issue.record("a bridge was placed with SIP dialling off")
        } catch {
            #expect(error.signalingCode == .notImplemented)
        }
        #expect(world.registry.activeCalls.isEmpty)
    }
}
