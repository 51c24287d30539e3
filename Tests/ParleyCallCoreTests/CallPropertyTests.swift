import ParleyCallModel
import ParleyCallCore
import ParleySignaling
import ParleyTestSupport
import Testing

/// Random input sequences (seeded, bounded): the engine never traps, keeps each device's
/// events in the protocol's order, and ends every call once the clock runs long enough.
/// A third of the seeds route through a router that answers late (or never): their
/// sequences also deliver routing decisions of every kind at random moments.
@Suite("Call engine under random inputs")
struct CallPropertyTests {
    static let users = ["alice", "bob", "carol"]
    static let devices = users.flatMap { user in [CallWorld.device(user, "\(user)-1"), CallWorld.device(user, "\(user)-2")] }

    /// The rank of a caller event: each must come after every lower rank.
    static let callerRank: [String: Int] = [
        "call.media": 0, "call.progress": 1, "call.ringing": 2, "call.answered": 3, "call.established": 4, "call.ended": 5,
    ]
    static let calleeRank: [String: Int] = ["call.incoming": 0, "call.answered": 1, "call.established": 2, "call.ended": 3]

    @Test("Random sequences never trap, keep event order and end every call", arguments: 0..<20)
    func randomSequences(seedBase: Int) {
        for seed in (seedBase * 10)..<(seedBase * 10 + 10) {
            run(seed: UInt64(seed))
        }
    }

    /// Runs one seeded sequence and returns the end causes its calls reached (and
    /// `established` if one got that far), to show the sequences go deep enough.
    @discardableResult
    func run(seed: UInt64) -> Set<String> {
        var random = SeededGenerator(seed: seed)
        var configuration = CallConfiguration()
        configuration.ringTimeout = .seconds(5 + random.below(60))
        configuration.mediaSetupTimeout = .seconds(1 + random.below(30))
        configuration.reconnectGrace = .seconds(1 + random.below(30))
        configuration.maximumCallLength = .seconds(60 + random.below(600))
        // Chosen by the seed, not the generator, so that the other seeds' sequences stay as they were.
        let lateRouting = seed % 3 == 1
        if lateRouting { configuration.routingTimeout = .seconds(1 + random.below(20)) }
        var world = CallWorld(configuration: configuration, router: lateRouting ? LateRouter() : PresenceRouter())
        world.autoMedia = random.below(2) == 0
        let callIDs = (0..<5).map { _ in CallID.random(using: &random) }
        var started: Set<String> = []
        var destinations: [String: (caller: Device, callee: String)] = [:]

        /// A late decision: mostly what presence says now, else any other kind.
        func anyDecision(_ id: String) -> RoutingDecision {
            let callees = Self.devices.filter { _ in random.below(2) == 0 }
            switch random.below(10) {
            case 0: return .dialNumber(PhoneRoute(number: "+46701234567"))
            case 1: return .dialSIP(uri: "sip:bob@pbx.example.com", headers: [:])
            case 2: return .joinRoom("room")
            case 3: return .reject(.init(code: .destinationNotFound, message: "destination user not found"))
            case 4: return .pushDevices(callees)
            case 5: return .ringDevices(callees)
            default:
                guard let destination = destinations[id],
                      let decision = world.presenceDecision(from: destination.caller, to: destination.callee) else { return .ringDevices([]) }
                return decision
            }
        }

        func anyDevice() -> Device { Self.devices[random.below(Self.devices.count)] }
        func anyCall() -> String { callIDs[random.below(callIDs.count)] }
        /// Half the time a device of the call's callee (the answering one once there is
        /// one), so that sequences get past ringing.
        func calleeDevice(_ id: String) -> Device {
            guard random.below(2) == 0, let record = world.registry.record(of: id) else { return anyDevice() }
            let callee = AppUser(applicationKey: record.applicationKey, userID: record.callee.address)
            let deviceID = record.answeredDeviceID ?? "\(callee.userID)-\(1 + random.below(2))"
            return Device(user: callee, deviceID: deviceID)
        }
        func anyLeg(_ id: String) -> CallLegID { random.below(3) == 0 ? .caller : .callee(.device(calleeDevice(id))) }

        // Most devices start connected, so that calls ring; the sequence drops and
        // reconnects them now and then.
        for device in Self.devices where random.below(4) != 0 { world.connect(device) }

        for _ in 0..<150 {
            let id = anyCall()
            let device = random.below(3) == 0 ? anyDevice() : calleeDevice(id)
            switch random.below(lateRouting ? 27 : 24) {
            case 0: world.connect(device, resumed: random.below(2) == 0)
            case 1: world.disconnect(device)
            case 2, 3, 4:
                let callee = random.below(8) == 0 ? "zed" : Self.users[random.below(Self.users.count)]
                if world.registry.record(of: id) == nil { destinations[id] = (device, callee) }
                world.call(from: device, to: callee, callID: id)
                started.insert(id)
            case 24, 25, 26: world.route(id, anyDecision(id))
            case 5, 6: world.ack(device, id)
            case 7, 8, 9: world.answer(device, id)
            case 10: world.decline(device, id)
            case 11: world.hangup(device, id)
            case 12:
                let dtmf = SignalingMessage.callDTMF(.init(requestID: "d", callID: id, digits: "1"))
                world.perform(world.registry.handleRequest(dtmf, from: device, now: world.now))
            case 13: world.media(.callerLegReady(sdp: CallWorld.anchorAnswer), id)
            case 14, 15: world.media(.calleeLegReady(.device(device), sdp: CallWorld.anchorOffer(device)), id)
            case 16:
                switch random.below(3) {
                case 0: world.media(.legFailed(anyLeg(id), reason: "random failure"), id)
                case 1: world.media(.legInactive(anyLeg(id)), id)
                default: world.perform((try? world.registry.hangUp(callID: id, now: world.now)) ?? [])
                }
            case 17: world.advance(by: .milliseconds(random.below(40_000)))
            default: world.media(.legConnected(anyLeg(id)), id)
            }
        }

        // Long enough for every timer: every call must end.
        world.advance(by: configuration.maximumCallLength + .seconds(1))
        #expect(world.registry.activeCalls.isEmpty, "seed \(seed): calls left")
        #expect(world.registry.nextDeadline == nil, "seed \(seed): deadline left")
        checkOrder(world, seed: seed)
        checkEveryoneEnded(world, started: started, seed: seed)
        var reached: Set<String> = []
        for message in world.inbox.values.joined() {
            if case .callEnded(let ended) = message {
                reached.insert(ended.cause.rawValue)
                if ended.error?.message.hasPrefix("no routing decision") == true { reached.insert("routing timeout") }
                if ended.error?.code == .notImplemented { reached.insert("not implemented") }
            }
            if case .callEstablished = message { reached.insert("established") }
        }
        return reached
    }

    @Test("Random sequences reach every end cause, established calls, the routing timeout and refused late decisions")
    func coverage() {
        var reached: Set<String> = []
        for seed in 1000..<1050 { reached.formUnion(run(seed: UInt64(seed))) }
        let expected = Set(SignalingMessage.EndCause.allCases.map(\.rawValue) + ["established", "routing timeout", "not implemented"])
        #expect(reached == expected, "missing: \(expected.subtracting(reached).sorted())")
    }

    /// Per device and call: events in rank order, each at most once, nothing after `call.ended`.
    func checkOrder(_ world: CallWorld, seed: UInt64) {
        for (device, messages) in world.inbox {
            var lastRank: [String: (rank: Int, caller: Bool)] = [:]
            for message in messages {
                guard let callID = message.callID else { continue }
                let type = message.type.rawValue
                let isCaller: Bool
                if let known = lastRank[callID] {
                    isCaller = known.caller
                } else {
                    isCaller = type != "call.incoming"
                }
                let ranks = isCaller ? Self.callerRank : Self.calleeRank
                guard let rank = ranks[type] else {
                    Issue.record("seed \(seed): \(type) unexpected for \(isCaller ? "caller" : "callee") \(device)")
                    return
                }
                if let previous = lastRank[callID], rank <= previous.rank {
                    Issue.record("seed \(seed): \(type) after rank \(previous.rank) on \(device) for \(callID)")
                    return
                }
                lastRank[callID] = (rank, isCaller)
            }
        }
    }

    /// Every device that learned of a call (caller, or callee that got `call.incoming`)
    /// got exactly one `call.ended`, and every stored record ended.
    func checkEveryoneEnded(_ world: CallWorld, started: Set<String>, seed: UInt64) {
        for (device, messages) in world.inbox {
            var known: Set<String> = []
            var ended: [String: Int] = [:]
            for message in messages {
                // Everything the engine sends is a frame a device accepts (checked on a
                // fifth of the seeds: validation is slow in debug builds).
                if seed % 5 == 0 {
                    #expect(throws: Never.self, "seed \(seed)") { try SignalingCodec.validate(message) }
                }
                switch message {
                case .callIncoming(let incoming): known.insert(incoming.callID)
                case .callMedia(let media): known.insert(media.callID)
                case .callEnded(let end):
                    ended[end.callID, default: 0] += 1
                    #expect((end.cause == .error) == (end.error != nil), "seed \(seed)")
                default: break
                }
            }
            for callID in known {
                #expect(ended[callID] == 1, "seed \(seed): \(device) got \(ended[callID] ?? 0) call.ended for \(callID)")
            }
            for (callID, count) in ended {
                #expect(count == 1, "seed \(seed): \(device) got \(count) call.ended for \(callID)")
            }
        }
        var lastRecord: [String: CallRecord] = [:]
        for record in world.records { lastRecord[record.callID] = record }
        for (callID, record) in lastRecord {
            #expect(started.contains(callID))
            #expect(record.state == .ended, "seed \(seed): record of \(callID) not ended")
            #expect(record.endCause != nil && record.times.endedTime != nil, "seed \(seed)")
        }
    }
}
