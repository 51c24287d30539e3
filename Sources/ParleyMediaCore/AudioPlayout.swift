/// Turns a `JitterBuffer`'s playout decisions into audio, one 20 ms tick at a time, so that
/// every missing frame inside a talk spurt is concealed and none plays as digital silence.
///
/// - `.packet`: decoded (an undecodable payload is concealed instead).
/// - `.lost`: Opus in-band FEC from the next packet when the buffer holds it, else Opus PLC
///   (G.711: the last frame faded).
/// - `.stretch`: concealment (the buffer is growing its delay).
/// - `.empty` in a talk spurt (an underrun: the next packet is late or lost while the
///   buffer is empty): concealment as for a loss; if that slot's packet shows up late,
///   or its successor arrives, they play as usual.
/// - Concealment that has faded to zeros (long losses; G.711 after 60 ms) is replaced by
///   comfort noise: low-level noise rather than digital silence.
///
/// A talk spurt begins with a decoded packet and ends at a DTX packet (an Opus payload of
/// at most 2 bytes), a timestamp gap (the buffer's silence), or after
/// `maximumConcealedTicks` ticks with nothing played; outside a spurt `.empty` is silence.
///
/// Holds the codec (libopus state), so like `AudioPayloadCodec` it is not `Sendable`.
public struct AudioPlayout {
    /// What one tick played.
    public enum Kind: Sendable, Hashable {
        /// Decoded audio from a packet (or the rest of a longer packet).
        case packet
        /// Concealment: FEC, PLC or comfort noise.
        case concealed
        /// Silence: before the first packet, or between talk spurts.
        case silent
    }

    /// One tick of audio.
    public struct Tick {
        /// One 20 ms frame at the codec's audio rate (`AudioPayloadCodec.samplesPerFrame`
        /// samples, mono).
        public var samples: [Int16]
        public var kind: Kind
        /// RTP timestamps of the packets decoded in this tick.
        public var decodedTimestamps: [UInt32] = []
        /// Payloads in this tick that did not decode (concealed instead).
        public var undecodable = 0
    }

    /// Counters of what the ticks played, beyond the buffer's own statistics.
    public struct Statistics: Sendable, Hashable, Encodable {
        /// Frames rebuilt from the next packet's in-band FEC.
        public var fecRecovered: UInt64 = 0
        /// Frames of concealment (PLC, FEC or comfort noise) for an underrun in a talk spurt.
        public var underrunsConcealed: UInt64 = 0
        /// Concealed frames that had faded to zeros and played as comfort noise instead.
        public var comfortNoiseFrames: UInt64 = 0

        public init() {}
    }

    /// Ticks of concealment in a row after which a talk spurt counts as over (the far end
    /// stopped sending), and `.empty` plays silence: 2 s.
    public static let maximumConcealedTicks = 100
    /// Peak amplitude of comfort noise: about -60 dBFS.
    public static let comfortNoiseAmplitude: Int32 = 32

    public let codec: AudioPayloadCodec
    public private(set) var statistics = Statistics()
    /// Whether a talk spurt is playing (missing frames are concealed, not silent).
    public private(set) var inTalkSpurt = false
    private var concealedTicks = 0
    private var pending: [Int16] = []
    private var noiseState: UInt64

    /// - Parameter noiseSeed: seeds the comfort noise (any value; 0 is replaced).
    public init(codec: AudioPayloadCodec, noiseSeed: UInt64) {
        self.codec = codec
        noiseState = noiseSeed == 0 ? 0x9E37_79B9_7F4A_7C15 : noiseSeed
    }

    /// Plays the tick at `now` (monotonic nanoseconds) from `buffer`.
    public mutating func tick(from buffer: inout JitterBuffer, now: UInt64) -> Tick {
        let frame = codec.samplesPerFrame
        // Audio samples per RTP timestamp unit: 1/3 for Opus (48 kHz clock) played at
        // 16 kHz, 6 for G.711 (8 kHz clock) at 48 kHz.
        let audioRate = codec.audioRate, clockRate = codec.clockRate
        func audioSamples(_ units: Int) -> Int { units * audioRate / clockRate }
        var result = Tick(samples: [], kind: .silent)
        var played = false
        var concealed = false
        var rounds = 0
        repeat {
            rounds += 1
            let underrunsBefore = buffer.statistics.underruns
            switch buffer.pop(now: now) {
            case .packet(let packet):
                played = true
                if let decoded = try? codec.decode(packet.payload) {
                    pending += decoded
                    result.decodedTimestamps.append(packet.timestamp)
                } else {
                    result.undecodable += 1
                    pending += conceal(audioSamples(packet.samples), next: nil)
                }
                // An Opus DTX frame (1-2 bytes) ends the spurt: what follows is silence.
                inTalkSpurt = !(codec.kind == .opus && packet.payload.count <= 2)
                concealedTicks = 0
            case .lost(let loss):
                concealed = true
                pending += conceal(audioSamples(loss.samples), next: loss.nextPacket?.payload)
            case .continuation:
                played = true
            case .stretch:
                concealed = true
                pending += conceal(frame, next: nil)
            case .empty:
                let underrun = buffer.statistics.underruns != underrunsBefore
                if underrun, inTalkSpurt, concealedTicks < Self.maximumConcealedTicks {
                    concealed = true
                    statistics.underrunsConcealed &+= 1
                    pending += conceal(frame, next: nil)
                } else if !underrun {
                    // Before the first packet, or a timestamp gap (DTX): silence by design.
                    inTalkSpurt = false
                }
            }
        } while !buffer.tickComplete && rounds < 16
        if played {
            result.kind = .packet
        } else if concealed {
            result.kind = .concealed
            concealedTicks += 1
        } else {
            inTalkSpurt = inTalkSpurt && concealedTicks < Self.maximumConcealedTicks
        }
        if pending.count < frame { pending += [Int16](repeating: 0, count: frame - pending.count) }
        result.samples = Array(pending.prefix(frame))
        pending.removeFirst(frame)
        // Never let undelivered audio pile up (a peer sending faster than real time).
        if pending.count > frame * 10 { pending.removeFirst(pending.count - frame * 10) }
        return result
    }

    /// Concealment for `count` samples: the codec's FEC or PLC, or comfort noise where that
    /// has faded to zeros.
    private mutating func conceal(_ count: Int, next: ArraySlice<UInt8>?) -> [Int16] {
        var out = codec.conceal(samples: count, nextPayload: next)
        if codec.lastConcealmentUsedFEC { statistics.fecRecovered &+= 1 }
        if out.allSatisfy({ $0 == 0 }) {
            statistics.comfortNoiseFrames &+= 1
            for index in out.indices { out[index] = comfortNoiseSample() }
        }
        return out
    }

    /// Uniform noise in ±`comfortNoiseAmplitude` (xorshift64*: the noise needs no quality
    /// beyond sounding like a quiet room, and must not cost a system call per sample).
    private mutating func comfortNoiseSample() -> Int16 {
        noiseState ^= noiseState >> 12
        noiseState ^= noiseState << 25
        noiseState ^= noiseState >> 27
        let value = noiseState &* 0x2545_F491_4F6C_DD1D
        let span = UInt64(2 * Self.comfortNoiseAmplitude + 1)
        return Int16(Int32((value >> 32) % span) - Self.comfortNoiseAmplitude)
    }
}
