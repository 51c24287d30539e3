/// Why a call with cause `error` failed, as its record keeps it: an error code
/// (`a-z 0-9 _`) and a one-line message, as in `call.ended`'s `error` member.
public struct CallError: Sendable, Hashable, Codable {
    /// For example `destination_not_found`.
    public var code: String
    /// For example `destination user not found`.
    public var message: String

    public init(code: String, message: String) {
        self.code = code
        self.message = message
    }

    /// What restart recovery records for calls a restart found open.
    public static let serverRestarted = CallError(code: "server_restarted", message: "server restarted")
}
