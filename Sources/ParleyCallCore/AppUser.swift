/// A user of one application: user ids are unique within an application only.
/// JSON: `{"applicationKey": "...", "userId": "..."}`.
public struct AppUser: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The application's key.
    public var applicationKey: String
    /// The user id (1-255 bytes of `A-Z a-z 0-9 - _ =`).
    public var userID: String

    enum CodingKeys: String, CodingKey {
        case applicationKey, userID = "userId"
    }

    public init(applicationKey: String, userID: String) {
        self.applicationKey = applicationKey
        self.userID = userID
    }

    public var description: String { "\(applicationKey)/\(userID)" }
}
