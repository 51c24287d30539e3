public import ParleySignaling

/// Why the call engine refused a request: the `error` reply parleyd sends back.
///
/// Carries the call id the request named, the field at fault (for `too_large`) and a
/// one-line description such as `call 6f1c…: cannot answer in state established`.
public struct CallingError: Error, Sendable, Hashable, CustomStringConvertible {
    enum Code: Sendable, Hashable {
        case callNotFound
        case callExists
        case invalidState
        case notImplemented
        case tooLarge
        case badRequest
        case tooManyCalls
        case destinationNotAllowed
        case destinationNotFound
        case destinationUnavailable
        case internalError
    }

    let code: Code
    /// The call the request named, when it named one.
    public let callID: String?
    /// The offending member of the request, e.g. `headers`.
    public let field: String?
    /// What is wrong.
    public let reason: String

    init(_ code: Code, callID: String?, field: String? = nil, _ reason: String) {
        self.code = code
        self.callID = callID
        self.field = field
        self.reason = reason
    }

    /// The server is stopping: it starts no call (`internal_error`).
    public static func stopping(callID: String?) -> CallingError {
        CallingError(.internalError, callID: callID, "the server is stopping")
    }

    /// The protocol's error code for this refusal (`call_not_found`, `invalid_state`, ...).
    public var signalingCode: SignalingErrorCode {
        switch code {
        case .callNotFound: .callNotFound
        case .callExists: .callExists
        case .invalidState: .invalidState
        case .notImplemented: .notImplemented
        case .tooLarge: .tooLarge
        case .badRequest: .badRequest
        case .tooManyCalls: .tooManyCalls
        case .destinationNotAllowed: .destinationNotAllowed
        case .destinationNotFound: .destinationNotFound
        case .destinationUnavailable: .destinationUnavailable
        case .internalError: .internalError
        }
    }

    public var description: String {
        if let callID { return "call \(callID): \(reason)" }
        return reason
    }

    /// The `error` frame answering the request whose `id` was `requestID`.
    public func errorReply(to requestID: String?) -> SignalingMessage {
        .error(.init(replyTo: requestID, code: signalingCode, message: description.prefixUTF8(1024), field: field))
    }
}
