/// Who is connected, sans-I/O: the users each application has seen, and each user's
/// connected devices in the order they connected (every one of them rings).
///
/// parleyd seeds `markKnown` from its store at startup (users seen in earlier runs), and
/// a connecting device makes its user known.
public struct Presence: Sendable {
    private var known: Set<AppUser> = []
    private var connected: [AppUser: [String]] = [:]
    /// Devices with at least one push token, per user, sorted.
    private var pushable: [AppUser: [String]] = [:]

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

    /// Sets which of the user's devices have a push token (parleyd keeps this in step
    /// with `push.register`, `push.unregister` and tokens a provider said are gone).
    public mutating func setPushDevices(_ user: AppUser, deviceIDs: Set<String>) {
        if !deviceIDs.isEmpty { known.insert(user) }
        pushable[user] = deviceIDs.isEmpty ? nil : deviceIDs.sorted()
    }

    /// The user's devices that have a push token.
    public func pushDevices(of user: AppUser) -> [Device] {
        (pushable[user] ?? []).map { Device(user: user, deviceID: $0) }
    }

    /// How many devices are connected, over all applications.
    public var connectedDeviceCount: Int {
        connected.values.reduce(0) { $0 + $1.count }
    }
}
