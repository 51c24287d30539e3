/// The media record of one leg of a call: whose it is and its statistics.
public struct CallLeg: Sendable, Hashable, Codable {
    public var role: CallLegRole
    /// The user on this leg (the caller, or the callee).
    public var userId: String
    /// The device, when known.
    public var deviceId: String?
    /// When these statistics were taken (Unix ms).
    public var updatedTime: Int64
    public var statistics: CallLegStatistics
    /// What the device's playout reported for this leg (`call.stats`); nil when it did not.
    public var playout: CallLegPlayout?

    public init(role: CallLegRole, userId: String, deviceId: String? = nil, updatedTime: Int64, statistics: CallLegStatistics,
                playout: CallLegPlayout? = nil) {
        self.role = role
        self.userId = userId
        self.deviceId = deviceId
        self.updatedTime = updatedTime
        self.statistics = statistics
        self.playout = playout
    }
}
