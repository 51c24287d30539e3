import ParleyCallModel
import ParleyCallCore
import ParleySignaling
import ParleyTestSupport
import Testing

/// Ring timeout, media setup, reconnect grace and maximum length.
@Suite("Call timers and disconnections")
struct CallTimerTests {
    let alice = CallWorld.device("alice", "a1")
    let bob1 = CallWorld.device("bob", "b1")
    let bob2 = CallWorld.device("bob", "b2")
    let id = "0d6b9f64-1e2a-4f8c-8b37-6a5c2e1f9d08"

    func world(_ configure: (inout CallConfiguration) -> Void = { _ in }) -> CallWorld {
        var configuration = CallConfiguration()
        configure(&configuration)
        var world = CallWorld(configuration: configuration)
        world.connect(alice)
        world.connect(bob1)
        world.connect(bob2)
        return world
    }

    /// Calls Bob, B1 answers, both legs connect.
    func established(_ world: inout CallWorld) {
        world.call(from: alice, to: "bob", callID: id)
        world.ack(bob1, id)
        world.answer(bob1, id)
        world.media(.legConnected(.caller), id)
        world.media(.legConnected(.callee(.device(bob1))), id)
        #expect(world.registry.record(of: id)?.state == .established)
    }

    @Test("No device acknowledged within the ring timeout: noAnswer")
    func noAnswer() {
        var world = world { $0.ringTimeout = .seconds(5) }
        world.call(from: alice, to: "bob", callID: id)
        world.advance(by: .milliseconds(4999))
        #expect(world.registry.record(of: id)?.state == .progressing)
        world.advance(by: .milliseconds(1))
        #expect(world.log(alice) == ["result", "call.media", "call.progress", "call.ended:noAnswer"])
        #expect(world.log(bob1) == ["call.incoming", "call.ended:noAnswer"])
        #expect(world.log(bob2) == ["call.incoming", "call.ended:noAnswer"])
        #expect(world.registry.nextDeadline == nil)
    }

    @Test("A device rang but nobody answered within the ring timeout: timeout")
    func ringTimeout() {
        var world = world()
        world.call(from: alice, to: "bob", callID: id)
        world.ack(bob2, id)
        world.advance(by: .seconds(60))
        #expect(world.log(alice) == ["result", "call.media", "call.progress", "call.ringing", "call.ended:timeout"])
        #expect(world.log(bob2) == ["call.incoming", "result", "call.ended:timeout"])
        #expect(world.log(bob1) == ["call.incoming", "call.ended:timeout"])
    }

    @Test("The answer stops the ring timer")
    func answerStopsRingTimer() {
        var world = world()
        established(&world)
        world.advance(by: .seconds(600))
        #expect(world.registry.record(of: id)?.state == .established)
    }

    @Test("Maximum call length: timeout after 4 h")
    func maximumLength() {
        var world = world { $0.maximumCallLength = .seconds(3600) }
        established(&world)
        world.advance(by: .seconds(3599))
        #expect(world.registry.record(of: id)?.state == .established)
        world.advance(by: .seconds(1))
        #expect(world.log(alice).last == "call.ended:timeout")
        #expect(world.log(bob1).last == "call.ended:timeout")
        #expect(world.log(bob2) == ["call.incoming", "call.ended:otherDeviceAnswered"])

        var defaults = self.world()
        established(&defaults)
        defaults.advance(by: .seconds(4 * 3600 - 1))
        #expect(defaults.registry.record(of: id)?.state == .established)
        defaults.advance(by: .seconds(1))
        #expect(defaults.ended(alice)?.cause == .timeout)
    }

    @Test("Answered but media never connects: error media_failed")
    func mediaSetupTimeout() {
        var world = world()
        world.call(from: alice, to: "bob", callID: id)
        world.answer(bob1, id)
        world.media(.legConnected(.caller), id)
        world.advance(by: .seconds(30))
        #expect(world.ended(alice)?.cause == .error)
        #expect(world.ended(alice)?.error?.code == .mediaFailed)
        #expect(world.ended(bob1)?.error?.code == .mediaFailed)
    }

    @Test("The answering device drops and does not come back: both sides end with inactive")
    func answeredDeviceDrops() {
        var world = world()
        established(&world)
        world.disconnect(bob1)
        world.advance(by: .seconds(29))
        #expect(world.registry.record(of: id)?.state == .established)
        world.advance(by: .seconds(1))
        #expect(world.log(alice).last == "call.ended:inactive")
        #expect(world.log(bob1).last == "call.ended:inactive")
        #expect(world.records.last?.endCause == .inactive)
    }

    @Test("The caller drops and resumes within the grace: the call goes on")
    func callerResumes() {
        var world = world()
        established(&world)
        world.disconnect(alice)
        world.advance(by: .seconds(20))
        world.connect(alice, resumed: true)
        world.advance(by: .seconds(60))
        #expect(world.registry.record(of: id)?.state == .established)
        world.hangup(alice, id)
        #expect(world.ended(bob1)?.cause == .hungUp)
    }

    @Test("A device reconnecting without resume loses its calls at once: inactive")
    func reconnectWithoutResume() {
        var world = world()
        established(&world)
        world.disconnect(alice)
        world.connect(alice, resumed: false)
        #expect(world.ended(bob1)?.cause == .inactive)
        #expect(world.ended(alice)?.cause == .inactive)
    }

    @Test("The media layer reports a silent leg: inactive on both sides")
    func mediaInactive() {
        var world = world()
        established(&world)
        world.media(.legInactive(.callee(.device(bob1))), id)
        #expect(world.ended(alice)?.cause == .inactive)
        #expect(world.ended(bob1)?.cause == .inactive)
    }

    @Test("A leg fails: media_failed before establishment, inactive after (consent lost)")
    func legFailure() {
        var world = world()
        world.call(from: alice, to: "bob", callID: id)
        world.media(.legFailed(.caller, reason: "DTLS handshake failed\n(alert 40)"), id)
        let ended = world.ended(alice)
        #expect(ended?.error?.code == .mediaFailed)
        #expect(ended?.error?.message == "caller media leg failed: DTLS handshake failed (alert 40)")
        #expect(world.ended(bob1)?.cause == .error)

        var later = self.world()
        established(&later)
        later.media(.legFailed(.caller, reason: "consent expired"), id)
        #expect(later.ended(bob1)?.cause == .inactive)
    }

    @Test("The caller's leg cannot answer the offer: error media_failed, no callee rings")
    func callerOfferRefused() {
        var world = world()
        world.autoMedia = false
        world.call(from: alice, to: "bob", callID: id)
        #expect(world.log(alice) == ["result"])
        world.media(.legFailed(.caller, reason: "no Opus in the offer"), id)
        #expect(world.log(alice) == ["result", "call.ended:error"])
        #expect(world.log(bob1) == [])
        #expect(world.mediaLog == [.answerCaller(callID: id, offer: CallWorld.callerOffer, topology: .relay), .closeAll(callID: id)])
    }

    @Test("A ringing device drops: it leaves the ring set, the others keep ringing")
    func ringingDeviceDrops() {
        var world = world()
        world.call(from: alice, to: "bob", callID: id)
        world.ack(bob1, id)
        world.disconnect(bob1)
        #expect(world.log(bob1) == ["call.incoming", "result", "call.ended:inactive"])
        #expect(world.registry.record(of: id)?.state == .ringing)
        #expect(world.mediaLog.contains(.closeLeg(callID: id, leg: .callee(.device(bob1)))))
        world.answer(bob2, id)
        #expect(world.log(alice).last == "call.answered")

        // The last ringing device drops: the callee is unreachable.
        var lone = self.world()
        lone.call(from: alice, to: "bob", callID: id)
        lone.disconnect(bob1)
        lone.disconnect(bob2)
        #expect(lone.log(alice) == ["result", "call.media", "call.progress", "call.ended:error"])
        #expect(lone.ended(alice)?.error?.code == .destinationUnavailable)
    }

    @Test("Callee legs offered out of order, and a callee leg that fails before ringing")
    func calleeLegs() {
        var world = world()
        world.autoMedia = false
        world.call(from: alice, to: "bob", callID: id)
        world.media(.callerLegReady(sdp: CallWorld.anchorAnswer), id)
        #expect(world.log(alice) == ["result", "call.media", "call.progress"])
        world.media(.calleeLegReady(.device(bob2), sdp: CallWorld.anchorOffer(bob2)), id)
        #expect(world.log(bob2) == ["call.incoming"])
        world.media(.legFailed(.callee(.device(bob1)), reason: "no port"), id)
        #expect(world.log(bob1) == [])
        // A duplicate or late report changes nothing.
        world.media(.calleeLegReady(.device(bob2), sdp: CallWorld.anchorOffer(bob2)), id)
        world.media(.calleeLegReady(.device(bob1), sdp: CallWorld.anchorOffer(bob1)), id)
        #expect(world.log(bob2) == ["call.incoming"])
        #expect(world.log(bob1) == [])
        world.answer(bob2, id)
        #expect(world.log(alice) == ["result", "call.media", "call.progress", "call.answered"])
    }

    @Test("A callee device connects its leg before answering: established right at the answer")
    func earlyCalleeLeg() {
        var world = world()
        world.call(from: alice, to: "bob", callID: id)
        world.media(.legConnected(.caller), id)
        world.media(.legConnected(.callee(.device(bob1))), id)
        world.media(.legConnected(.callee(.device(bob2))), id)
        #expect(world.registry.record(of: id)?.state == .progressing)
        world.answer(bob1, id)
        #expect(world.log(alice) == ["result", "call.media", "call.progress", "call.answered", "call.established"])
        #expect(world.log(bob1) == ["call.incoming", "result", "call.answered", "call.established"])
    }

    @Test("Many calls: deadlines fire in order, each once, including after updates")
    func manyDeadlines() {
        var world = CallWorld()
        var generator = SeededGenerator(seed: 11)
        world.connect(bob1)
        var ids: [String] = []
        for index in 0..<100 {
            let caller = CallWorld.device("user\(index)", "d")
            world.connect(caller)
            let id = CallID.random(using: &generator)
            ids.append(id)
            world.call(from: caller, to: "bob", callID: id)
            // Every third call is answered: its deadline moves to the media setup timer.
            if index % 3 == 0 { world.answer(bob1, id) }
            world.advance(by: .milliseconds(100))
        }
        #expect(world.registry.activeCalls.count == 100)
        world.advance(by: .seconds(61))
        #expect(world.registry.activeCalls.isEmpty)
        #expect(world.registry.nextDeadline == nil)
        let endings = world.records.filter { $0.state == .ended }
        #expect(endings.count == 100)
        #expect(endings.map(\.times.endedTime!) == endings.map(\.times.endedTime!).sorted())
        #expect(Set(endings.map(\.callID)) == Set(ids))
    }

    @Test("Hang up by the application (REST): canceled before the answer, hungUp after")
    func serverHangup() throws {
        var world = world()
        world.call(from: alice, to: "bob", callID: id)
        world.perform(try world.registry.hangUp(callID: id, now: world.now))
        #expect(world.ended(alice)?.cause == .canceled)
        #expect(world.ended(bob2)?.cause == .canceled)
        #expect(throws: CallingError.self) { try world.registry.hangUp(callID: id, now: world.now) }

        var talking = self.world()
        established(&talking)
        talking.perform(try talking.registry.hangUp(callID: id, now: talking.now))
        #expect(talking.ended(alice)?.cause == .hungUp)
        #expect(talking.ended(bob1)?.cause == .hungUp)
    }

    @Test("Server shutdown ends every call with error internal_error")
    func endAll() {
        var world = world()
        established(&world)
        world.perform(world.registry.endAll(.init(code: .internalError, message: "server shutting down"), now: world.now))
        #expect(world.ended(alice)?.error?.code == .internalError)
        #expect(world.ended(bob1)?.error?.message == "server shutting down")
        #expect(world.registry.activeCalls.isEmpty)
    }
}
