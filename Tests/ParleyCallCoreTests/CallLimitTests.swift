import ParleyCallModel
import ParleyCallCore
import ParleySignaling
import ParleyTestSupport
import Testing

/// `maxCallsPerUser` and `maxCallsPerApplication` (docs/calls.md, "Limits"): a `call.start`
/// beyond them is refused with `too_many_calls` and creates nothing; an ended call frees
/// its place.
@Suite("Call limits per user and per application")
struct CallLimitTests {
    let alice = CallWorld.device("alice", "a1")
    let carol = CallWorld.device("carol", "c1")
    let bob = CallWorld.device("bob", "b1")

    func world(perUser: Int, perApplication: Int) -> CallWorld {
        var configuration = CallConfiguration()
        configuration.maxCallsPerUser = perUser
        configuration.maxCallsPerApplication = perApplication
        var world = CallWorld(configuration: configuration)
        for device in [alice, carol, bob] { world.connect(device) }
        return world
    }

    func callID(_ index: Int) -> String {
        "00000000-0000-4000-8000-" + String(String(index, radix: 16).reversed()).padding(toLength: 12, withPad: "0", startingAt: 0)
    }

    @Test("A user's call.start beyond maxCallsPerUser is refused with too_many_calls; other users still call")
    func perUser() throws {
        var world = world(perUser: 2, perApplication: 100)
        world.call(from: alice, to: "bob", callID: callID(1))
        world.call(from: alice, to: "bob", callID: callID(2))
        let records = world.records.count
        world.call(from: alice, to: "bob", callID: callID(3))
        guard case .error(let error) = world.inbox[alice]?.last else { throw TestFailure("no error reply") }
        #expect(error.code == .tooManyCalls)
        #expect(error.message.contains("2 calls in progress"))
        #expect(world.records.count == records, "a refused start makes no record")
        #expect(world.registry.record(of: callID(3)) == nil)
        // Another user of the same application is not limited by alice's calls.
        world.call(from: carol, to: "bob", callID: callID(4))
        #expect(world.registry.record(of: callID(4)) != nil)
        // Ending one of alice's calls frees a place.
        world.perform(world.registry.handleRequest(.callHangup(.init(requestID: "h", callID: callID(1))), from: alice, now: world.now))
        world.call(from: alice, to: "bob", callID: callID(5))
        #expect(world.registry.record(of: callID(5)) != nil)
    }

    @Test("A call.start beyond maxCallsPerApplication is refused with too_many_calls")
    func perApplication() throws {
        var world = world(perUser: 100, perApplication: 3)
        world.call(from: alice, to: "bob", callID: callID(1))
        world.call(from: alice, to: "bob", callID: callID(2))
        world.call(from: carol, to: "bob", callID: callID(3))
        world.call(from: carol, to: "bob", callID: callID(4))
        guard case .error(let error) = world.inbox[carol]?.last else { throw TestFailure("no error reply") }
        #expect(error.code == .tooManyCalls)
        #expect(world.registry.activeCalls.count == 3)
        // A call that ends at once (unknown callee) frees its place too.
        world.perform(world.registry.handleRequest(.callHangup(.init(requestID: "h", callID: callID(2))), from: alice, now: world.now))
        world.call(from: carol, to: "nobody", callID: callID(5))
        world.call(from: carol, to: "bob", callID: callID(6))
        #expect(world.registry.record(of: callID(6)) != nil)
    }
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
