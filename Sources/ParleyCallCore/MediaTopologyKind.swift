/// What a call's media does between its legs, chosen when its media is created
/// (`MediaInstruction.answerCaller`) from where the call goes: the media anchor builds the
/// matching topology and every leg the call later gets lives in it.
public enum MediaTopologyKind: String, Sendable, Hashable, CaseIterable {
    /// Device to device: both legs WebRTC (Opus), packets relayed without decoding.
    case relay
    /// App to a SIP endpoint or a phone: the caller's WebRTC leg and a plain RTP leg whose
    /// codec may differ, transcoded where it does, RFC 4733 events carried both ways.
    case gateway
    /// A conference room: every participant's leg (each a call of its own) decoded, mixed
    /// N-1 and encoded on the room's mixer, which the calls of one room share.
    case mixer
}
