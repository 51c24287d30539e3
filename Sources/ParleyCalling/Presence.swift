/// Who is connected, sans-I/O: the users each application has seen, and each user's
/// connected devices in the order they connected (every one of them rings).
///
/// parleyd seeds `markKnown` from its store at startup (users seen in earlier runs), and
/// a connecting device makes its user known.
public struct Presence: Sendable {
    private var known: Set<AppUser> = []
    private var connected: [AppUser: [String]] = [:]

    public init() {}

    /// Records that the application has seen this user (a past login, a stored call).
    public mutating func markKnown(_ user: AppUser) {
        known.insert(user)
    }

    /// Whether the application has ever seen this user.
    public func isKnown(_ user: AppUser) -> Bool {
        known.contains(user)
    }

    /// A device authenticated (`hello.ok`). Connecting twice is harmless.
    public mutating func connect(_ device: Device) {
        known.insert(device.user)
        var devices = connected[device.user, default: []]
        if !devices.contains(device.deviceID) { devices.append(device.deviceID) }
        connected[device.user] = devices
    }

    /// A device's connection closed (and, for parleyd, its session is gone or suspended).
    public mutating func disconnect(_ device: Device) {
        guard var devices = connected[device.user] else { return }
        devices.removeAll { $0 == device.deviceID }
        connected[device.user] = devices.isEmpty ? nil : devices
    }

    /// Whether this device is connected now.
    public func isConnected(_ device: Device) -> Bool {
        connected[device.user]?.contains(device.deviceID) ?? false
    }

    /// The user's connected devices, in the order they connected.
    public func devices(of user: AppUser) -> [Device] {
        (connected[user] ?? []).map { Device(user: user, deviceID: $0) }
    }

    /// What a call to `user` can reach now.
    public func reach(_ user: AppUser) -> CalleeReach {
        guard known.contains(user) else { return .unknownUser }
        let devices = devices(of: user)
        return devices.isEmpty ? .unavailable : .devices(devices)
    }

    /// How many devices are connected, over all applications.
    public var connectedDeviceCount: Int {
        connected.values.reduce(0) { $0 + $1.count }
    }
}
