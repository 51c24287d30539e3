/// An error from the push engine: a bad payload, bad credentials, or a transport failure.
///
/// Compare ``kind``; ``description`` is one line for logs.
public struct PushError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong.
    public enum Kind: String, Sendable, Hashable {
        /// A push payload is forged, malformed or expired (`push_payload_invalid`).
        case payloadInvalid
        /// Push credentials (a .p8 key, a service-account file) cannot be used.
        case credentialsInvalid
        /// A signing or key operation failed inside OpenSSL.
        case crypto
        /// libcurl could not complete an HTTP exchange (connect, TLS, timeout).
        case transport
        /// A provider answered something the engine cannot read (e.g. a token endpoint's body).
        case badResponse
    }

    /// What kind of error this is.
    public let kind: Kind
    /// Details for people.
    public let detail: String

    public init(_ kind: Kind, _ detail: String) {
        self.kind = kind
        self.detail = detail
    }

    public var description: String { "push \(kind.rawValue): \(detail)" }
}
