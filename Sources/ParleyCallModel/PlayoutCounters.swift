/// What a device's playout did with the audio it received on a call, in 20 ms frames
/// unless named otherwise: what the device sends in `call.stats` and what the call record
/// keeps for that leg (`CallLegPlayout`).
public struct PlayoutCounters: Sendable, Hashable, Codable {
    /// Frames played from received packets.
    public var framesPlayed: Int64
    /// Frames of concealment in a talk spurt (FEC, PLC or comfort noise).
    public var framesConcealed: Int64
    /// Of those, frames rebuilt from the next packet's in-band FEC.
    public var framesFECRecovered: Int64
    /// Of those, frames played as comfort noise once PLC had faded.
    public var framesComfortNoise: Int64
    /// Frames of silence between talk spurts or before the first packet.
    public var framesSilent: Int64
    /// Frames the jitter buffer inserted to grow its delay.
    public var framesStretched: Int64
    /// Packets the jitter buffer dropped to shrink its delay.
    public var framesShrunk: Int64
    /// Packets that arrived after their slot had played.
    public var packetsLate: Int64
    /// The jitter buffer's target delay when the leg closed, whole milliseconds.
    public var targetDelayMilliseconds: Int64

    public init(framesPlayed: Int64 = 0, framesConcealed: Int64 = 0, framesFECRecovered: Int64 = 0,
                framesComfortNoise: Int64 = 0, framesSilent: Int64 = 0, framesStretched: Int64 = 0,
                framesShrunk: Int64 = 0, packetsLate: Int64 = 0, targetDelayMilliseconds: Int64 = 0) {
        self.framesPlayed = framesPlayed
        self.framesConcealed = framesConcealed
        self.framesFECRecovered = framesFECRecovered
        self.framesComfortNoise = framesComfortNoise
        self.framesSilent = framesSilent
        self.framesStretched = framesStretched
        self.framesShrunk = framesShrunk
        self.packetsLate = packetsLate
        self.targetDelayMilliseconds = targetDelayMilliseconds
    }
}
