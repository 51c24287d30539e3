/// What a leg does with the media its transport carries. The transport (ICE + DTLS-SRTP or
/// plain RTP, `MediaLegConfiguration.transport`) is chosen apart from it: any mode runs on
/// any transport.
public enum MediaLegMode: String, Sendable, Hashable, Encodable {
    /// Packets pass through unchanged but for the header fields that must be this leg's
    /// (SSRC, payload type, sequence and timestamp offsets): received RTP comes out as
    /// `.receivedRTP` actions and `relay(_:now:)` sends a packet from another leg. Nothing
    /// is decoded; `sendAudio` and `playout` are not used. A relay bridge's legs.
    case forward
    /// Received RTP goes through the jitter buffer and the decoder (`playout`), and audio
    /// given to `sendAudio` is encoded: a device's leg, or a leg a mixer or gateway
    /// transcodes.
    case decode
}
