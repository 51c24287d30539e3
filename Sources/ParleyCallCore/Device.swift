/// One connected installation of a user: the unit that receives signaling messages.
///
/// parleyd maps a `Device` to the WebSocket connection (session) currently holding it;
/// a user may have several at once, and every one of them rings.
public struct Device: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The authenticated user of the connection.
    public var user: AppUser
    /// The `deviceId` of its `hello` (stable per installation).
    public var deviceID: String

    enum CodingKeys: String, CodingKey {
        case user, deviceID = "deviceId"
    }

    public init(user: AppUser, deviceID: String) {
        self.user = user
        self.deviceID = deviceID
    }

    public var description: String { "\(user)#\(deviceID)" }
}
