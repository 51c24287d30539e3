public import Foundation

/// Media figures of a call's leg, refreshed about once a second while it runs and once
/// when it closes. Zero before media starts.
///
/// The playout counters (`framesPlayed` to `currentDelayMilliseconds`) describe what the
/// device played of the audio it received: one frame is one 20 ms tick.
public struct ParleyCallStatistics: Sendable, Hashable {
    /// RTP packets sent.
    public var packetsSent: UInt64
    /// RTP packets received.
    public var packetsReceived: UInt64
    /// Packets the peer's sequence numbers say were lost on the way to us.
    public var packetsLost: Int64
    /// Interarrival jitter of what we receive, in milliseconds (RFC 3550).
    public var jitterMilliseconds: Double
    /// Round-trip time from RTCP reports, in milliseconds; nil until measured.
    public var roundTripTimeMilliseconds: Double?

    /// Frames played from received packets.
    public var framesPlayed: UInt64
    /// Frames rebuilt from the next packet's Opus in-band FEC (a subset of `framesConcealed`).
    public var framesFECRecovered: UInt64
    /// Frames of concealment inside a talk spurt: FEC, Opus PLC or comfort noise, for a
    /// lost packet, a stretch or an underrun.
    public var framesConcealed: UInt64
    /// Concealed frames that played as comfort noise because PLC had faded out (a subset
    /// of `framesConcealed`).
    public var framesComfortNoise: UInt64
    /// Frames of digital silence: before the first packet, between talk spurts, or while
    /// the leg was not connected. Not concealment.
    public var framesSilent: UInt64
    /// Frames the jitter buffer inserted (concealed) to grow its delay.
    public var framesStretched: UInt64
    /// Packets the jitter buffer dropped on purpose to shrink its delay.
    public var framesShrunk: UInt64
    /// Packets that arrived after their playout slot had passed (dropped; their slot was
    /// concealed).
    public var packetsLate: UInt64
    /// The delay the jitter buffer aims for, in milliseconds.
    public var targetDelayMilliseconds: Double
    /// How far behind the earliest packet of its window the buffer played at the last
    /// tick, in milliseconds.
    public var currentDelayMilliseconds: Double

    /// When the call's first frame of audio was taken from its source (microphone, file
    /// or tone), on the wall clock; nil until then.
    public var audioCaptureStartedAt: Date?
    /// When the call's first frame of received audio (or the silence before it) was
    /// handed to the output; nil until then. A recording's first sample is this instant.
    public var audioPlayoutStartedAt: Date?

    /// Statistics with the given values (zero by default).
    public init(packetsSent: UInt64 = 0, packetsReceived: UInt64 = 0, packetsLost: Int64 = 0,
                jitterMilliseconds: Double = 0, roundTripTimeMilliseconds: Double? = nil,
                framesPlayed: UInt64 = 0, framesFECRecovered: UInt64 = 0, framesConcealed: UInt64 = 0,
                framesComfortNoise: UInt64 = 0, framesSilent: UInt64 = 0, framesStretched: UInt64 = 0,
                framesShrunk: UInt64 = 0, packetsLate: UInt64 = 0, targetDelayMilliseconds: Double = 0,
                currentDelayMilliseconds: Double = 0) {
        self.packetsSent = packetsSent
        self.packetsReceived = packetsReceived
        self.packetsLost = packetsLost
        self.jitterMilliseconds = jitterMilliseconds
        self.roundTripTimeMilliseconds = roundTripTimeMilliseconds
        self.framesPlayed = framesPlayed
        self.framesFECRecovered = framesFECRecovered
        self.framesConcealed = framesConcealed
        self.framesComfortNoise = framesComfortNoise
        self.framesSilent = framesSilent
        self.framesStretched = framesStretched
        self.framesShrunk = framesShrunk
        self.packetsLate = packetsLate
        self.targetDelayMilliseconds = targetDelayMilliseconds
        self.currentDelayMilliseconds = currentDelayMilliseconds
    }
}
