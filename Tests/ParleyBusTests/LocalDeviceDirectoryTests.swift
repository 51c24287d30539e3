import ParleyBus
import ParleyCallCore
import Testing

/// The in-process directory: a user's devices in the order their sessions started, the
/// node of each, a session that moved not ended by its old node's late end.
@Suite struct LocalDeviceDirectoryTests {
    static let alice = AppUser(applicationKey: "app", userID: "alice")
    static let phone = Device(user: alice, deviceID: "phone")
    static let tablet = Device(user: alice, deviceID: "tablet")
    static let otherApp = Device(user: AppUser(applicationKey: "other", userID: "alice"), deviceID: "phone")

    @Test func listsAUsersDevicesWithTheirNodesInOrder() {
        let directory = LocalDeviceDirectory()
        directory.sessionStarted(Self.tablet, on: NodeID("a"))
        directory.sessionStarted(Self.phone, on: NodeID("b"))
        directory.sessionStarted(Self.otherApp, on: NodeID("a"))
        #expect(directory.devices(of: Self.alice) == [
            DeviceDirectoryEntry(device: Self.tablet, node: NodeID("a")),
            DeviceDirectoryEntry(device: Self.phone, node: NodeID("b")),
        ])
        #expect(directory.node(of: Self.phone) == NodeID("b"))
        #expect(directory.devices(on: NodeID("a")).count == 2)
        directory.sessionEnded(Self.tablet, on: NodeID("a"))
        #expect(directory.devices(of: Self.alice).map(\.device) == [Self.phone])
        directory.sessionEnded(Self.phone, on: NodeID("b"))
        #expect(directory.devices(of: Self.alice).isEmpty)
        #expect(directory.node(of: Self.phone) == nil)
    }

    @Test func aSessionThatMovedIsNotEndedByItsOldNode() {
        let directory = LocalDeviceDirectory()
        directory.sessionStarted(Self.phone, on: NodeID("a"))
        directory.sessionStarted(Self.phone, on: NodeID("b"))  // reconnected to another node
        directory.sessionEnded(Self.phone, on: NodeID("a"))     // a's grace ran out later
        #expect(directory.node(of: Self.phone) == NodeID("b"))
        #expect(directory.devices(of: Self.alice).count == 1)
    }
}
