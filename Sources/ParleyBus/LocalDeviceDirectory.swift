public import ParleyCallCore
import Synchronization

/// The device directory within one process, under a lock (any engine thread may ask).
public final class LocalDeviceDirectory: DeviceDirectory {
    private struct State {
        /// Per user, their devices' entries in the order the sessions started.
        var byUser: [AppUser: [DeviceDirectoryEntry]] = [:]
    }

    private let state = Mutex(State())

    public init() {}

    public func sessionStarted(_ device: Device, on node: NodeID) {
        state.withLock { state in
            var entries = state.byUser[device.user, default: []]
            if let index = entries.firstIndex(where: { $0.device == device }) {
                entries[index].node = node
            } else {
                entries.append(DeviceDirectoryEntry(device: device, node: node))
            }
            state.byUser[device.user] = entries
        }
    }

    public func sessionEnded(_ device: Device, on node: NodeID) {
        state.withLock { state in
            guard var entries = state.byUser[device.user] else { return }
            entries.removeAll { $0.device == device && $0.node == node }
            state.byUser[device.user] = entries.isEmpty ? nil : entries
        }
    }

    public func node(of device: Device) -> NodeID? {
        state.withLock { $0.byUser[device.user]?.first { $0.device == device }?.node }
    }

    public func devices(of user: AppUser) -> [DeviceDirectoryEntry] {
        state.withLock { $0.byUser[user] ?? [] }
    }

    public func devices(on node: NodeID) -> [Device] {
        state.withLock { state in
            state.byUser.values.flatMap { $0 }.filter { $0.node == node }.map(\.device)
                .sorted { $0.description < $1.description }
        }
    }
}
