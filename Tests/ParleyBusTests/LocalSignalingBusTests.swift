import ParleyBus
import ParleyCallCore
import ParleySignaling
import Synchronization
import Testing

/// The in-process bus keeps the port's contract: delivery to the attached node only, in
/// order, dropped (false) for a node that is not attached.
@Suite struct LocalSignalingBusTests {
    static let bob = Device(user: AppUser(applicationKey: "app", userID: "bob"), deviceID: "phone")

    @Test func deliversToTheAttachedNodeInOrderAndDropsForOthers() {
        let bus = LocalSignalingBus()
        let received = Mutex<[(SignalingMessage, Device)]>([])
        bus.attach(node: NodeID("b")) { message, device in received.withLock { $0.append((message, device)) } }
        let messages = (1...3).map { SignalingMessage.callRinging(.init(callID: "c-\($0)", time: Int64($0))) }
        for message in messages { #expect(bus.deliver(message, to: Self.bob, on: NodeID("b"))) }
        #expect(!bus.deliver(messages[0], to: Self.bob, on: NodeID("c")))
        #expect(received.withLock { $0.map(\.0) } == messages)
        #expect(received.withLock { $0.allSatisfy { $0.1 == Self.bob } })
        bus.detach(node: NodeID("b"))
        #expect(!bus.deliver(messages[0], to: Self.bob, on: NodeID("b")))
        #expect(received.withLock { $0.count } == 3)
    }

    @Test func aReceiverMayDeliverAgainWithoutDeadlock() {
        let bus = LocalSignalingBus()
        let count = Mutex(0)
        bus.attach(node: NodeID("a")) { message, device in
            let first = count.withLock { value -> Bool in
                value += 1
                return value == 1
            }
            if first { bus.deliver(message, to: device, on: NodeID("a")) }
        }
        #expect(bus.deliver(.pong(.init(replyTo: "p")), to: Self.bob, on: NodeID("a")))
        #expect(count.withLock { $0 } == 2)
    }
}
