public import Foundation

/// Why a call ended with `ParleyCallEndCause.error`: the code and message of the server's
/// `call.ended` error or `error` reply (e.g. `destination_not_found` / "destination user
/// not found"), or one of the SDK's own (`media_failed`, `request_timeout`).
public struct ParleyCallError: LocalizedError, Sendable, Hashable, CustomStringConvertible {
    /// Machine-readable code, snake_case. Unknown codes mean `internal_error`.
    public var code: String
    /// One line for people and logs.
    public var message: String

    /// An error with this code and message.
    public init(code: String, message: String) {
        self.code = code
        self.message = message
    }

    /// `code: message`.
    public var description: String { "\(code): \(message)" }

    /// What `localizedDescription` shows (and the guides print): "Call failed: " and the
    /// message, e.g. "Call failed: destination user not found"; the code when there is
    /// no message.
    public var errorDescription: String? { "Call failed: " + (message.isEmpty ? code : message) }
}
