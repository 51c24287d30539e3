/// Where a media leg is in its life: ICE checks, then a DTLS handshake, then media.
public enum MediaLegState: String, Sendable, Hashable, Encodable, CustomStringConvertible {
    /// Created; nothing sent or received yet.
    case new
    /// ICE checks and the DTLS handshake are running.
    case checking
    /// ICE selected a pair and DTLS-SRTP keys are in place: media flows.
    case connected
    /// ICE, DTLS or consent failed; see the leg's failure reason.
    case failed
    /// Closed by its owner.
    case closed

    public var description: String { rawValue }
}
