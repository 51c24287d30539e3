import ParleyCallModel
import ParleyCallCore
import ParleySignaling
import Testing

/// Routing as an asynchronous input: a call waits in its routing state until the
/// router's decision arrives, late, never, or at once, of every decision kind.
@Suite("Call routing")
struct CallRoutingTests {
    let alice = CallWorld.device("alice", "a1")
    let bob1 = CallWorld.device("bob", "b1")
    let bob2 = CallWorld.device("bob", "b2")
    let id = "2c9d41e7-0b6a-4f3e-8d15-7a4b9e6c2f08"

    func world(router: any CallRouter = LateRouter(), configuration: CallConfiguration = CallConfiguration()) -> CallWorld {
        var world = CallWorld(configuration: configuration, router: router)
        for device in [alice, bob1, bob2] { world.connect(device) }
        return world
    }

    @Test("A late decision: the call waits in routing, then rings like a call routed at once")
    func lateDecisionRings() throws {
        var world = world()
        world.call(from: alice, to: "bob", callID: id)
        #expect(world.log(alice) == ["result"])
        #expect(world.log(bob1) == [])
        #expect(world.mediaLog.isEmpty)
        #expect(world.registry.record(of: id)?.state == .initiating)
        #expect(world.records.map(\.state) == [.initiating])

        world.advance(by: .seconds(2))
        let decision = try #require(world.presenceDecision(from: alice, to: "bob"))
        #expect(decision == .ringDevices([bob1, bob2]))
        world.route(id, decision)
        #expect(world.log(alice) == ["result", "call.media", "call.progress"])
        #expect(world.log(bob1) == ["call.incoming"])
        #expect(world.log(bob2) == ["call.incoming"])
        #expect(world.mediaLog.first == .answerCaller(callID: id, offer: CallWorld.callerOffer, topology: .relay))

        // A second decision for a routed call changes nothing.
        let before = world.inbox
        world.route(id, .reject(.init(code: .destinationNotFound, message: "late and wrong")))
        #expect(world.inbox == before)

        world.ack(bob1, id)
        world.answer(bob1, id)
        world.media(.legConnected(.caller), id)
        world.media(.legConnected(.callee(.device(bob1))), id)
        world.hangup(alice, id)
        #expect(world.log(alice) == [
            "result", "call.media", "call.progress", "call.ringing", "call.answered", "call.established", "result", "call.ended:hungUp",
        ])
        #expect(world.log(bob2) == ["call.incoming", "call.ended:otherDeviceAnswered"])
    }

    @Test("The ring timeout counts from call.start, also when routing took a while")
    func ringTimeoutCountsFromStart() throws {
        var configuration = CallConfiguration()
        configuration.ringTimeout = .seconds(20)
        var world = world(configuration: configuration)
        world.call(from: alice, to: "bob", callID: id)
        world.advance(by: .seconds(8))
        world.route(id, try #require(world.presenceDecision(from: alice, to: "bob")))
        world.advance(by: .seconds(11))
        #expect(world.registry.record(of: id)?.state == .progressing)
        world.advance(by: .seconds(1))
        #expect(world.ended(alice)?.cause == .noAnswer)
    }

    @Test("A decision that never comes ends the call with error destination_unavailable after routingTimeout")
    func decisionNeverComes() throws {
        var configuration = CallConfiguration()
        configuration.routingTimeout = .seconds(3)
        var world = world(configuration: configuration)
        world.call(from: alice, to: "bob", callID: id)
        #expect(world.registry.nextDeadline == world.now.instant.advanced(by: .seconds(3)))
        world.advance(by: .milliseconds(2999))
        #expect(world.log(alice) == ["result"])
        world.advance(by: .milliseconds(1))
        #expect(world.log(alice) == ["result", "call.ended:error"])
        let ended = try #require(world.ended(alice))
        #expect(ended.error?.code == .destinationUnavailable)
        #expect(ended.error?.message == "no routing decision within 3.0 seconds")
        #expect(ended.details.progressedTime == nil)
        // No leg was ever asked for, so none is closed; nobody else heard of the call.
        #expect(world.mediaLog.isEmpty)
        #expect(world.log(bob1) == [])
        let record = try #require(world.records.last)
        #expect(record.state == .ended)
        #expect(record.endCause == .error)
        #expect(record.error?.code == "destination_unavailable")
        #expect(world.registry.activeCalls.isEmpty)
        #expect(world.registry.nextDeadline == nil)

        // The decision that finally arrives is ignored.
        world.route(id, .ringDevices([bob1]))
        #expect(world.log(bob1) == [])
        #expect(world.mediaLog.isEmpty)
    }

    @Test("Late decisions of kinds not built yet end the call with error not_implemented", arguments: [
        (RoutingDecision.dialNumber(PhoneRoute(number: "+46701234567", trunk: "carrier-a", callerID: "+46812345678")), "phone"),
        (RoutingDecision.dialSIP(uri: "sip:bob@pbx.example.com", headers: ["X-Tenant": "7"]), "sip"),
    ])
    func lateUnbuiltKinds(decision: RoutingDecision, kind: String) throws {
        var world = world()
        world.call(from: alice, to: "bob", callID: id)
        world.route(id, decision)
        #expect(world.log(alice) == ["result", "call.ended:error"])
        let ended = try #require(world.ended(alice))
        #expect(ended.error?.code == .notImplemented)
        #expect(ended.error?.message == "this server places no calls to \(kind) addresses: it has no SIP gateway configured (parleyd --sip-listen)")
        #expect(world.mediaLog.isEmpty)
        #expect(world.records.last?.error?.code == "not_implemented")
    }

    @Test("Immediate decisions of kinds not built yet refuse call.start with not_implemented, through the router", arguments: [
        RoutingDecision.dialNumber(PhoneRoute(number: "+46701234567")),
        .dialSIP(uri: "sip:bob@pbx.example.com", headers: [:]),
    ])
    func immediateUnbuiltKinds(decision: RoutingDecision) throws {
        // Even to a user destination: the router's decision decides, not the address kind.
        var world = world(router: FixedRouter(decision: decision))
        world.call(from: alice, to: "bob", callID: id)
        guard case .error(let error) = try #require(world.inbox[alice]?.last) else {
            Issue.record("no error reply: \(world.log(alice))")
            return
        }
        #expect(error.code == .notImplemented)
        #expect(error.field == "to.kind")
        #expect(error.message == "call \(id): this server places no calls to \(decision.unbuiltKind?.rawValue ?? "?") addresses: it has no SIP gateway configured (parleyd --sip-listen)")
        #expect(world.records.isEmpty)
        #expect(world.registry.activeCalls.isEmpty)
    }

    @Test("A late reject ends the call with the router's error")
    func lateReject() throws {
        var world = world()
        world.call(from: alice, to: "zed", callID: id)
        world.route(id, try #require(world.presenceDecision(from: alice, to: "zed")))
        let ended = try #require(world.ended(alice))
        #expect(ended.cause == .error)
        #expect(ended.error == .init(code: .destinationNotFound, message: "destination user not found"))
        #expect(world.mediaLog.isEmpty)
    }

    @Test("A late push decision: the caller's leg, then the push")
    func latePush() throws {
        var world = world()
        world.call(from: alice, to: "bob", callID: id)
        world.advance(by: .seconds(1))
        world.route(id, .pushDevices([bob1]))
        #expect(world.mediaLog == [.answerCaller(callID: id, offer: CallWorld.callerOffer, topology: .relay)])
        let push = try #require(world.pushes.first)
        #expect(push.devices == [bob1])
        #expect(push.issuedTime == world.now.unixMilliseconds)
        // The push expires when the call stops ringing: counted from call.start.
        #expect(push.expiresTime == world.records[0].times.startedTime + 60_000)
    }

    @Test("A ring decision naming only the caller's device ends with destination_unavailable")
    func decisionWithOnlyTheCaller() {
        var world = world()
        world.call(from: alice, to: "alice", callID: id)
        world.route(id, .ringDevices([alice]))
        #expect(world.log(alice) == ["result", "call.ended:error"])
        #expect(world.ended(alice)?.error?.code == .destinationUnavailable)
    }

    @Test("The caller hangs up while routing: canceled, no leg to close, the late decision is ignored")
    func hangUpWhileRouting() {
        var world = world()
        world.call(from: alice, to: "bob", callID: id)
        world.hangup(alice, id)
        #expect(world.log(alice) == ["result", "result", "call.ended:canceled"])
        #expect(world.mediaLog.isEmpty)
        world.route(id, .ringDevices([bob1]))
        #expect(world.log(bob1) == [])
        // Requests of devices the call never reached: not their call.
        world.ack(bob1, id)
        #expect(world.log(bob1) == ["error:invalid_state"])
    }

    @Test("A callee device cannot act on a call still routing")
    func calleeWhileRouting() {
        var world = world()
        world.call(from: alice, to: "bob", callID: id)
        world.answer(bob1, id)
        #expect(world.log(bob1) == ["error:call_not_found"])
        #expect(world.registry.record(of: id)?.state == .initiating)
    }

    @Test("The caller drops while routing: its grace runs, then inactive; resuming keeps the call")
    func callerDropsWhileRouting() throws {
        var configuration = CallConfiguration()
        configuration.reconnectGrace = .seconds(5)
        configuration.routingTimeout = .seconds(30)
        var world = world(configuration: configuration)
        world.call(from: alice, to: "bob", callID: id)
        world.disconnect(alice)
        world.advance(by: .seconds(2))
        world.connect(alice, resumed: true)
        world.advance(by: .seconds(10))
        #expect(world.registry.record(of: id)?.state == .initiating)
        world.disconnect(alice)
        world.advance(by: .seconds(5))
        #expect(world.ended(alice)?.cause == .inactive)
        #expect(world.mediaLog.isEmpty)
    }
}
