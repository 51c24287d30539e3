/// The `code` of an `error` frame, and of the error inside a `call.ended` event.
///
/// An open set of snake_case strings: clients must treat a code they do not know like
/// `internal_error`. The constants below are the codes this protocol version defines;
/// docs/protocol.md lists when each is sent.
public struct SignalingErrorCode: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    public var description: String { rawValue }

    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(String.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    // MARK: Frame errors, detected by `SignalingCodec.decode`

    /// The frame is not one UTF-8 JSON object (syntax, encoding, duplicate key, nesting).
    public static let malformed = Self(rawValue: "malformed")
    /// A field is missing, of the wrong JSON type, or breaks its rule.
    public static let badRequest = Self(rawValue: "bad_request")
    /// `v` names a protocol version the receiver does not speak; `supported` lists those it does.
    public static let unsupportedVersion = Self(rawValue: "unsupported_version")
    /// `type` is not a message of this version, or not one the sender may send.
    public static let unknownType = Self(rawValue: "unknown_type")
    /// The frame, or one field of it, is over its size limit.
    public static let tooLarge = Self(rawValue: "too_large")

    // MARK: Session errors, sent by the server

    /// A request other than `hello` or `ping` arrived before authentication succeeded.
    public static let notAuthenticated = Self(rawValue: "not_authenticated")
    /// A second `hello` on an authenticated connection.
    public static let alreadyAuthenticated = Self(rawValue: "already_authenticated")
    /// The token is not a well-formed JWT of the accepted kind (HS256, known `kid` form).
    public static let tokenMalformed = Self(rawValue: "token_malformed")
    /// The token's signature does not verify with the application's secret.
    public static let tokenBadSignature = Self(rawValue: "token_bad_signature")
    /// The token's `exp` is in the past.
    public static let tokenExpired = Self(rawValue: "token_expired")
    /// The token's `iat` (or `nbf`) is in the future.
    public static let tokenNotYetValid = Self(rawValue: "token_not_yet_valid")
    /// The token was issued for another application than `hello.appKey`, or the application is unknown.
    public static let tokenWrongApplication = Self(rawValue: "token_wrong_application")
    /// The token's `nonce` was already used.
    public static let tokenReplayed = Self(rawValue: "token_replayed")
    /// The device sends faster than the server allows.
    public static let rateLimited = Self(rawValue: "rate_limited")
    /// `call.start` refused: the user or the application has as many calls in progress as
    /// the server allows (`maxCallsPerUser`, `maxCallsPerApplication`).
    public static let tooManyCalls = Self(rawValue: "too_many_calls")

    // MARK: Call request errors, sent by the server

    /// No call with this `callId` involves this device.
    public static let callNotFound = Self(rawValue: "call_not_found")
    /// `call.start` named a `callId` that is already in use.
    public static let callExists = Self(rawValue: "call_exists")
    /// The request does not fit the call's state (answering a call that already ended, ...).
    public static let invalidState = Self(rawValue: "invalid_state")
    /// The server does not implement this request or destination kind yet.
    public static let notImplemented = Self(rawValue: "not_implemented")
    /// The push payload's signature is wrong or it is too old.
    public static let pushPayloadInvalid = Self(rawValue: "push_payload_invalid")

    // MARK: Call end errors (inside `call.ended` with cause `error`)

    /// The callee was never seen by this application.
    public static let destinationNotFound = Self(rawValue: "destination_not_found")
    /// The callee has no connected device and no push token.
    public static let destinationUnavailable = Self(rawValue: "destination_unavailable")
    /// The application's dialling settings do not let it call this phone number or SIP address.
    public static let destinationNotAllowed = Self(rawValue: "destination_not_allowed")
    /// The media leg could not be set up (bad SDP, ICE or DTLS failure).
    public static let mediaFailed = Self(rawValue: "media_failed")
    /// The SIP endpoint or trunk of a call to a SIP address or phone number ended it with a
    /// final status that no end cause stands for (or failed after the answer); the message
    /// names the status and its reason phrase, e.g. `SIP 503 Service Unavailable`.
    public static let sipError = Self(rawValue: "sip_error")

    // MARK: Anywhere

    /// The server failed; the request may be retried.
    public static let internalError = Self(rawValue: "internal_error")
    /// The server is shutting down; reconnect (to another node) and retry.
    public static let shuttingDown = Self(rawValue: "shutting_down")
}
