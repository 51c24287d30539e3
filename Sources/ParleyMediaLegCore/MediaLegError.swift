/// Why a leg could not be set up or had to fail: bad SDP, a certificate fingerprint that
/// does not match, an ICE or DTLS failure, a codec problem.
public struct MediaLegError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure this is.
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
        enum Code: String, Sendable { case sdp, negotiation, ice, dtls, fingerprint, srtp, codec, socket, timeout, state }
        let code: Code
        init(_ code: Code) { self.code = code }

        /// The remote SDP could not be parsed.
        public static let sdp = Kind(.sdp)
        /// Offer and answer have nothing in common we can run (codec, transport, role).
        public static let negotiation = Kind(.negotiation)
        /// ICE failed: no pair worked, or consent expired (RFC 7675).
        public static let ice = Kind(.ice)
        /// The DTLS handshake failed or timed out.
        public static let dtls = Kind(.dtls)
        /// The peer's certificate does not match the fingerprint in its SDP.
        public static let fingerprint = Kind(.fingerprint)
        /// SRTP contexts could not be created from the exported keys.
        public static let srtp = Kind(.srtp)
        /// The codec could not be created or failed.
        public static let codec = Kind(.codec)
        /// A socket could not be opened or used.
        public static let socket = Kind(.socket)
        /// The leg did not connect in time.
        public static let timeout = Kind(.timeout)
        /// The call does not fit the leg's state (e.g. an answer before an offer).
        public static let state = Kind(.state)

        public var description: String { code.rawValue }
    }

    public let kind: Kind
    /// One line for logs and for the user.
    public let detail: String

    public init(_ kind: Kind, _ detail: String) {
        self.kind = kind
        self.detail = detail
    }

    public var description: String { "\(kind): \(detail)" }
}
