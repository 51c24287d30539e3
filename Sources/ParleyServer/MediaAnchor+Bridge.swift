import ParleySDP

/// A bridge's media (docs/sip.md, "Bridged calls"): a call in over SIP bridged to a call
/// out joins two plain RTP legs in one `GatewayBridge`, which relays packets untouched but
/// for their SSRC, numbers and timestamps when both legs run one codec, and transcodes
/// when they do not.
extension MediaAnchor {
    /// The codecs a bridge's call out offers, in order: the one the caller's leg runs first
    /// (its label, `PCMU/8000`, from `MediaLegStatistics.codec`), then the others of
    /// `codecs` as they come. A callee that takes the first makes the bridge a relay; one
    /// that takes another is transcoded. Without a label (the caller's leg did not
    /// negotiate, which `answerSIPCaller` would have reported), `codecs` unchanged.
    static func bridgedCalleeCodecs(callerCodec label: String?, from codecs: [AudioCodec]) -> [AudioCodec] {
        guard let label, let running = codecs.first(where: { label.lowercased() == Self.label(of: $0).lowercased() }) else {
            return codecs
        }
        return [running] + codecs.filter { $0 != running }
    }

    /// A codec as `MediaLegStatistics.codec` names it.
    private static func label(of codec: AudioCodec) -> String {
        "\(codec.name)/\(codec.clockRate)" + (codec.channels > 1 ? "/\(codec.channels)" : "")
    }
}
