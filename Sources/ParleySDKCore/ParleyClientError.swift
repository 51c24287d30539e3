public import Foundation

/// Why a `ParleyClient` could not be created, started or kept running.
///
/// `code` is machine-readable: a protocol error code from the server (`token_expired`,
/// `token_bad_signature`, `unsupported_version`, ...) or one of the SDK's own
/// (`invalid_argument`, `server_unreachable`, `registration_failed`, `connection_closed`,
/// `replaced`, `not_started`, `user_mismatch`,
/// `authentication_failed`). `message` is one line for people and logs.
public struct ParleyClientError: LocalizedError, Sendable, Hashable, CustomStringConvertible {
    /// Machine-readable code, snake_case.
    public var code: String
    /// One line for people and logs, e.g. "bad token" or "server unreachable: connection refused".
    public var message: String

    /// An error with this code and message.
    public init(code: String, message: String) {
        self.code = code
        self.message = message
    }

    /// `code: message`.
    public var description: String { "\(code): \(message)" }

    /// What `localizedDescription` shows (and the guides print): the message, e.g.
    /// "server unreachable: connection refused"; the code when there is no message.
    public var errorDescription: String? { message.isEmpty ? code : message }
}
