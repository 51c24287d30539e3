/// Where a topology that records a call (`GatewayBridge.startRecording`,
/// `PromptTopology.startRecording`) hands its audio: both directions of each 20 ms tick,
/// decoded, at `AudioPayloadCodec.interfaceRate` (48 kHz, mono each, 960 samples).
///
/// It is called on the topology's clock, which runs on a media thread every 20 ms: it must
/// return at once (queue the frame for a writer of its own, never write a file or wait
/// for one), and it must bound what it keeps.
public protocol CallRecordingSink: AnyObject {
    /// One tick of the call: `caller` is what the caller's leg received (the caller's
    /// voice), `other` what the other side sent it (the callee's voice, or the server's
    /// prompts). Either is silence when that side had nothing to say.
    func record(caller: [Int16], other: [Int16])
}
