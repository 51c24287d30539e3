/// Where a media leg is in its life: its transport comes up (ICE checks, then a DTLS
/// handshake; at once for plain RTP), then media.
public enum MediaLegState: String, Sendable, Hashable, Encodable, CustomStringConvertible {
    /// Created; nothing sent or received yet.
    case new
    /// The transport is coming up: ICE checks and the DTLS handshake are running.
    case checking
    /// The transport is up (ICE selected a pair and DTLS-SRTP keys are in place; a plain
    /// RTP leg once started): media flows.
    case connected
    /// The transport failed (ICE, DTLS, consent, SRTP keys); see the leg's failure reason.
    case failed
    /// Closed by its owner.
    case closed

    public var description: String { rawValue }
}
