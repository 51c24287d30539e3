public import ParleyRTP
import ParleyWireCore

/// An adaptive jitter buffer for one audio RTP stream, sans-I/O: the caller pushes
/// packets with their arrival time and pops one frame per playout tick, passing the
/// tick's time. It holds encoded payloads and never decodes; the caller decodes `.packet`
/// and conceals `.lost` (PLC, or Opus in-band FEC from the packet that follows).
///
/// Time: `now` is monotonic nanoseconds (see `MediaClock`). Ticks are
/// `Configuration.frameDuration` apart (20 ms by default).
///
/// Playout follows RTP timestamps, not packet counts: a 40 or 60 ms packet plays as one
/// `.packet` and then `.continuation` ticks; 10 ms packets take two `pop` calls per tick
/// (see `tickComplete`). Timestamp gaps with consecutive sequence numbers (DTX, silence
/// suppression) are silence, during which the delay is re-aligned for free.
///
/// Adaptation (see docs/media-jitter.md): the target delay is a high percentile of
/// packet delay over a sliding window, between `minimumDelay` and `maximumDelay`. The
/// buffer grows by stretching (`.stretch`: one frame of concealment without consuming
/// audio) at once when the target rises, and shrinks by dropping one frame at a time,
/// at most once per `shrinkIntervalTicks`, or by shortening silence. Both decisions use
/// the earliest playout phase of the recent ticks (a late wake-up is not extra delay), and
/// a drop needs the delay `shrinkHysteresis` beyond target + one frame, so a drop never
/// leaves the delay under the target: on a steady path the buffer holds still.
public struct JitterBuffer: Sendable {
    /// Tuning; the defaults suit Opus at 48 kHz with 20 ms frames.
    public struct Configuration: Sendable, Hashable {
        /// RTP clock rate of the stream.
        public var clockRate: UInt32 = 48_000
        /// Playout tick: the duration `pop` produces per tick.
        public var frameDuration: Duration = .milliseconds(20)
        public var minimumDelay: Duration = .milliseconds(20)
        public var maximumDelay: Duration = .milliseconds(400)
        /// Packets held at most; beyond it the oldest is evicted (a flood cannot grow memory).
        public var capacity: Int = 100
        /// Packets over which the delay percentile is taken (250 = 5 s of 20 ms packets).
        public var delayWindow: Int = 250
        /// Percentile of the packet delay spread the target covers, in per-mille.
        public var delayPercentilePerMille: Int = 980
        /// Packets between regular re-estimates of the target.
        public var targetUpdateInterval: Int = 25
        /// How much one re-estimate may lower the target.
        public var targetShrinkStep: Duration = .milliseconds(10)
        /// Ticks between two frames dropped to shrink the delay (beyond `maximumDelay`
        /// plus a frame, one is dropped every tick). Also the number of recent ticks whose
        /// earliest wake-up gives the playout phase the decisions use.
        public var shrinkIntervalTicks: Int = 25
        /// How far beyond target + one frame the delay must sit before a frame is dropped.
        /// Dropping a frame lowers the delay by a frame, so this margin is what keeps the
        /// delay at or above the target afterwards: a shrink can never cause a stretch.
        public var shrinkHysteresis: Duration = .milliseconds(5)
        /// Wake-up lateness the playout ticks may show. Playout starts (and re-aligns in
        /// silence) this much beyond the target, so a first tick that woke late does not
        /// leave the steady delay under the target. Must stay below `shrinkHysteresis`.
        public var wakeUpTolerance: Duration = .milliseconds(3)
        /// Sequence number distance from the highest seen that counts as a jump.
        public var maximumSequenceJump: Int64 = 500
        /// Change of relative delay (arrival minus timestamp) that counts as a jump.
        public var maximumTimestampJump: Duration = .seconds(2)
        /// Longest packet duration believed from timestamps (larger gaps are silence).
        public var maximumPacketDuration: Duration = .milliseconds(120)

        public init() {}
    }

    /// A buffered packet as pushed.
    public struct Packet: Sendable, Hashable {
        public var payload: ArraySlice<UInt8>
        public var sequenceNumber: UInt16
        public var timestamp: UInt32
        public var marker: Bool
        /// Arrival time, monotonic nanoseconds.
        public var arrival: UInt64
    }

    /// A packet to decode and play.
    public struct Frame: Sendable, Hashable {
        public var packet: Packet
        /// Duration of the packet in RTP timestamp units (from the next packet's timestamp
        /// when present, else the last known duration).
        public var samples: Int
        /// Time the packet waited in the buffer: `now` of this pop minus its arrival.
        public var bufferDelayNanoseconds: Int64

        public var payload: ArraySlice<UInt8> { packet.payload }
        public var sequenceNumber: UInt16 { packet.sequenceNumber }
        public var timestamp: UInt32 { packet.timestamp }
    }

    /// A slot whose packet is missing: conceal `samples` of audio.
    public struct Loss: Sendable, Hashable {
        /// The sequence number that should have played here.
        public var expectedSequenceNumber: UInt16
        /// Duration to conceal, in RTP timestamp units.
        public var samples: Int
        /// The packet with the next sequence number, if already buffered: its Opus in-band
        /// FEC data (LBRR) can rebuild this slot. It stays in the buffer and plays next.
        public var nextPacket: Packet?

        /// Whether the next packet is already buffered (FEC possible).
        public var nextPacketAvailable: Bool { nextPacket != nil }
    }

    /// What to play for one tick.
    public enum Playout: Sendable, Hashable {
        /// Decode and play this packet.
        case packet(Frame)
        /// The packet for this slot is missing: conceal.
        case lost(Loss)
        /// The last packet is longer than a tick and still covers this one: play the
        /// rest of its decoded audio.
        case continuation
        /// The buffer is growing its delay: play one frame of concealment (or comfort
        /// noise) without consuming any packet.
        case stretch
        /// Nothing to play: before the first packet is due, in silence (DTX), or an
        /// underrun (the next packet is late, lost, or was never sent). Play silence or
        /// comfort noise, or concealment for a few ticks after speech.
        case empty
    }

    /// What became of a pushed packet.
    public enum PushOutcome: Sendable, Hashable {
        case buffered
        /// Buffered as the first packet of a new stream (SSRC change or confirmed jump).
        case bufferedAfterReset
        case duplicate
        /// Its playout slot has passed.
        case late
        /// A sequence or timestamp jump; dropped unless the next packet confirms it.
        case discardedJump
    }

    private struct Entry: Sendable {
        var sequence: Int64
        /// Extended timestamp relative to the stream's first packet.
        var timestamp: Int64
        var packet: Packet
    }

    public let configuration: Configuration
    public private(set) var statistics = JitterBufferStatistics()

    private let frameSamples: Int64
    private let maximumPacketSamples: Int64
    private let frameNanoseconds: Int64
    private let maximumDelayNanoseconds: Int64
    private let timestampJumpNanoseconds: Int64

    private var ssrc: UInt32?
    private var sequenceUnwrapper = SequenceNumberUnwrapper()
    private var timestampUnwrapper = TimestampUnwrapper()
    private var timestampBase: Int64 = 0
    /// Sorted by sequence, at most `capacity`.
    private var entries: [Entry] = []
    private var highestSequence: Int64?
    /// The sequence number the next slot belongs to; nil until playout starts.
    private var nextSequence: Int64?
    /// Timestamp (relative) where the audio not yet handed out begins.
    private var playout: Int64 = 0
    /// Samples of the last packet still to be covered by `.continuation` ticks.
    private var carry: Int64 = 0
    /// Samples of the current tick not yet produced (0: the next pop starts a tick).
    private var tickRemaining: Int64 = 0
    private var lastDuration: Int64
    /// Bit i set: sequence `nextSequence - 1 - i` was played (tells duplicates from late).
    private var playedMask: UInt64 = 0
    private var jumpCandidate: UInt16?
    private var ticksSinceShrink = 0
    private var estimator: JitterBufferDelayEstimator
    /// The playout phase of recent ticks, earliest wake-up first.
    private var phase: JitterBufferPlayoutPhase
    private let shrinkHysteresisNanoseconds: Int64
    private let wakeUpToleranceNanoseconds: Int64

    public init(configuration: Configuration = Configuration()) {
        var configuration = configuration
        configuration.clockRate = max(configuration.clockRate, 1)
        configuration.capacity = max(configuration.capacity, 2)
        self.configuration = configuration
        let rate = configuration.clockRate
        let frameNs = max(configuration.frameDuration.wholeNanoseconds, 1_000_000)
        frameNanoseconds = frameNs
        frameSamples = max(Int64(MediaClock.rtpUnits(nanoseconds: UInt64(frameNs), clockRate: rate)), 1)
        maximumPacketSamples = max(Int64(clamping: MediaClock.rtpUnits(
            nanoseconds: UInt64(max(configuration.maximumPacketDuration.wholeNanoseconds, 0)), clockRate: rate)), frameSamples)
        lastDuration = frameSamples
        maximumDelayNanoseconds = configuration.maximumDelay.wholeNanoseconds
        timestampJumpNanoseconds = max(configuration.maximumTimestampJump.wholeNanoseconds, maximumDelayNanoseconds)
        estimator = JitterBufferDelayEstimator(
            windowSize: configuration.delayWindow,
            percentilePerMille: configuration.delayPercentilePerMille,
            minimum: configuration.minimumDelay.wholeNanoseconds,
            maximum: maximumDelayNanoseconds,
            shrinkStep: configuration.targetShrinkStep.wholeNanoseconds,
            updateInterval: configuration.targetUpdateInterval)
        statistics.targetDelayNanoseconds = estimator.target
        phase = JitterBufferPlayoutPhase(ticks: configuration.shrinkIntervalTicks)
        shrinkHysteresisNanoseconds = max(configuration.shrinkHysteresis.wholeNanoseconds, 0)
        wakeUpToleranceNanoseconds = min(max(configuration.wakeUpTolerance.wholeNanoseconds, 0), shrinkHysteresisNanoseconds)
        entries.reserveCapacity(configuration.capacity + 1)
    }

    /// Samples (RTP timestamp units) per tick.
    public var samplesPerTick: Int { Int(frameSamples) }

    /// False after a `pop` that produced less than a tick (a packet shorter than the
    /// tick, e.g. 10 ms packets with 20 ms ticks): call `pop` again for the rest of the tick.
    public var tickComplete: Bool { tickRemaining == 0 }

    // MARK: Push

    /// Accounts for one arriving RTP packet.
    @discardableResult
    public mutating func push(_ packet: RTPPacket, now: UInt64) -> PushOutcome {
        push(payload: packet.payload, sequenceNumber: packet.sequenceNumber, timestamp: packet.timestamp,
             ssrc: packet.ssrc, marker: packet.marker, now: now)
    }

    /// Accounts for one arriving packet, given its RTP header fields and payload.
    @discardableResult
    public mutating func push(payload: ArraySlice<UInt8>, sequenceNumber: UInt16, timestamp: UInt32, ssrc: UInt32,
                              marker: Bool = false, now: UInt64) -> PushOutcome {
        statistics.received &+= 1
        let arrival = Int64(clamping: now)
        var outcome = PushOutcome.buffered
        if let current = self.ssrc, current != ssrc {
            restartStream()
            outcome = .bufferedAfterReset
        }
        var sequence: Int64
        var relativeTimestamp: Int64
        if highestSequence == nil {
            (sequence, relativeTimestamp) = startStream(ssrc: ssrc, sequenceNumber: sequenceNumber, timestamp: timestamp)
        } else {
            // Unwrap, and put the unwrappers back if the packet is refused (one generic
            // call each rather than a peek and then an unwrap).
            let savedSequenceUnwrapper = sequenceUnwrapper
            let savedTimestampUnwrapper = timestampUnwrapper
            sequence = sequenceUnwrapper.unwrap(sequenceNumber)
            relativeTimestamp = timestampUnwrapper.unwrap(timestamp) &- timestampBase
            if let highest = highestSequence, let baseline = estimator.baseline {
                let relative = arrival &- nanoseconds(relativeTimestamp)
                let sequenceJump = (sequence &- highest).magnitude
                let timeJump = relative.subtractingReportingOverflow(baseline).partialValue.magnitude
                if sequenceJump > configuration.maximumSequenceJump.magnitude || timeJump > timestampJumpNanoseconds.magnitude {
                    // As RFC 3550 A.1 does for sequence numbers: believe a jump only when
                    // the next packet follows it, so one stray packet cannot reset the stream.
                    if let candidate = jumpCandidate, sequenceNumber == candidate &+ 1 {
                        restartStream()
                        outcome = .bufferedAfterReset
                        (sequence, relativeTimestamp) = startStream(ssrc: ssrc, sequenceNumber: sequenceNumber, timestamp: timestamp)
                    } else {
                        sequenceUnwrapper = savedSequenceUnwrapper
                        timestampUnwrapper = savedTimestampUnwrapper
                        jumpCandidate = sequenceNumber
                        statistics.jumpDiscarded &+= 1
                        return .discardedJump
                    }
                }
            }
        }
        jumpCandidate = nil
        let relativeDelay = arrival &- nanoseconds(relativeTimestamp)
        let packet = Packet(payload: payload, sequenceNumber: sequenceNumber, timestamp: timestamp, marker: marker, arrival: now)

        if let next = nextSequence, sequence < next {
            let back = next &- 1 &- sequence
            if back < 64, playedMask >> UInt64(back) & 1 == 1 {
                statistics.duplicates &+= 1
                return .duplicate
            }
            // Its delay still tells the estimator the target is too small.
            estimator.add(relativeDelay)
            statistics.targetDelayNanoseconds = estimator.target
            statistics.late &+= 1
            return .late
        }
        let index = insertionIndex(for: sequence)
        if index < entries.count, entries[index].sequence == sequence {
            statistics.duplicates &+= 1
            return .duplicate
        }
        estimator.add(relativeDelay)
        statistics.targetDelayNanoseconds = estimator.target
        if let highest = highestSequence, sequence < highest {
            statistics.reordered &+= 1
        }
        highestSequence = max(highestSequence ?? sequence, sequence)
        entries.insert(Entry(sequence: sequence, timestamp: relativeTimestamp, packet: packet), at: index)
        if entries.count > configuration.capacity {
            let evicted = entries.removeFirst()
            statistics.overflowed &+= 1
            if let next = nextSequence, evicted.sequence >= next {
                advance(to: evicted.sequence + 1, played: false)
            }
        }
        statistics.bufferedPackets = entries.count
        return outcome
    }

    /// The least target delay the buffer keeps while something upstream needs it, zero
    /// for none: a leg receiving RED that carries frames two packets back sets two frames
    /// and a margin, so those copies arrive before their slot. A higher floor applies at
    /// once (the next tick stretches); a lower one lets the target come down through the
    /// usual shrink steps.
    public var delayFloor: Duration {
        get { .nanoseconds(estimator.floor) }
        set {
            estimator.setFloor(max(newValue.wholeNanoseconds, 0))
            statistics.targetDelayNanoseconds = estimator.target
        }
    }

    // MARK: Pop

    /// What to play for the tick at `now` (call once per tick; again while
    /// `tickComplete` is false).
    public mutating func pop(now: UInt64) -> Playout {
        let now = Int64(clamping: now)
        let tickStart = tickRemaining == 0
        if tickStart {
            tickRemaining = frameSamples
            ticksSinceShrink &+= 1
        }
        if carry > 0 {
            let covered = min(carry, tickRemaining)
            carry -= covered
            tickRemaining -= covered
            return .continuation
        }
        guard var head = entries.first else {
            tickRemaining = 0
            if nextSequence != nil {
                // Underrun. The missing packet may be late, lost, or not sent at all
                // (DTX), so its sequence number stays expected; the playout point moves
                // on, so that if packets were lost this tick stands in for one of them
                // and the delay does not grow.
                statistics.underruns &+= 1
                playout &+= frameSamples
            }
            return .empty
        }
        let baseline = estimator.baseline ?? (now &- nanoseconds(head.timestamp))
        let target = estimator.target
        statistics.targetDelayNanoseconds = target

        let inSilence = head.sequence == nextSequence && head.timestamp > playout + frameSamples / 2
        if nextSequence == nil || inSilence {
            // Before playout starts, or in silence: the head plays once it is due, which
            // re-aligns the delay to the target without touching speech. The start waits
            // `wakeUpTolerance` beyond the target, so a late first tick cannot leave the
            // steady delay under the target (a stretch one tick later).
            let delay = delay(of: head.timestamp, now: now, baseline: baseline)
            statistics.currentDelayNanoseconds = delay
            guard delay >= target + wakeUpToleranceNanoseconds else {
                tickRemaining = 0
                return .empty
            }
            nextSequence = head.sequence
            playout = head.timestamp
            phase.restart(with: now &- nanoseconds(playout))
        } else if tickStart {
            // Decide on the playout phase of the recent ticks (the earliest wake-up among
            // them), not on this tick alone: wake-up lateness only ever adds delay, so
            // one late tick must not look like a delay to shrink.
            phase.record(now &- nanoseconds(playout))
            let delay = phase.earliest &- baseline
            statistics.currentDelayNanoseconds = delay
            if delay < target {
                // Grow at once: hold playout back one tick.
                statistics.stretched &+= 1
                tickRemaining = 0
                phase.shift(by: frameNanoseconds)
                return .stretch
            }
            // Hysteresis: after dropping a frame the delay is still >= target + margin.
            let tooLong = delay >= target + frameNanoseconds + shrinkHysteresisNanoseconds
            let farTooLong = delay > maximumDelayNanoseconds + frameNanoseconds
            if tooLong, ticksSinceShrink >= configuration.shrinkIntervalTicks || farTooLong,
               head.sequence == nextSequence, entries.count >= 2, entries[1].sequence == head.sequence + 1 {
                // Shrink: drop one frame; never into an underrun.
                let duration = duration(at: 0)
                entries.removeFirst()
                advance(to: head.sequence + 1, played: true)
                playout = head.timestamp + duration
                statistics.discardedForDelay &+= 1
                ticksSinceShrink = 0
                phase.shift(by: -nanoseconds(duration))
                head = entries[0]
            }
        }

        if let next = nextSequence, head.sequence > next {
            // Packets next..<head are missing. Time left before the head's timestamp is
            // concealed slot by slot; sequence numbers beyond the time left (their time
            // already went by in underrun ticks, or none passed) are skipped first, so
            // each `.lost` names a slot whose successor may hold its FEC.
            let missing = head.sequence - next
            let gap = head.timestamp - playout
            let slots = gap > 0 ? (gap + lastDuration - 1) / lastDuration : 0
            if missing > slots {
                let skipped = missing - slots
                advance(to: next + skipped, played: false)
                statistics.lost &+= UInt64(skipped)
            }
            if slots > 0, let expected = nextSequence {
                let samples = min(lastDuration, gap)
                let following = head.sequence == expected + 1 ? head.packet : nil
                advance(to: expected + 1, played: false)
                produce(samples)
                statistics.lost &+= 1
                statistics.bufferedPackets = entries.count
                return .lost(Loss(expectedSequenceNumber: UInt16(truncatingIfNeeded: expected), samples: Int(samples),
                                  nextPacket: following))
            }
        }

        let samples = duration(at: 0)
        entries.removeFirst()
        lastDuration = samples
        advance(to: head.sequence + 1, played: true)
        if head.timestamp != playout {
            // A late packet after underrun ticks moves playout back to it (the delay
            // grew by those ticks): the remembered ticks move with it.
            phase.shift(by: nanoseconds(playout &- head.timestamp))
        }
        playout = head.timestamp
        produce(samples)
        let waited = now &- Int64(clamping: head.packet.arrival)
        statistics.played &+= 1
        statistics.lastBufferDelayNanoseconds = waited
        statistics.totalBufferDelayNanoseconds &+= waited
        statistics.bufferedPackets = entries.count
        return .packet(Frame(packet: head.packet, samples: Int(samples), bufferDelayNanoseconds: waited))
    }

    /// Forgets the stream (buffered packets, sequence and timing state); the next packet
    /// starts a new one. Statistics and the learned target delay are kept.
    public mutating func reset() {
        restartStream()
        statistics.resets &-= 1
    }

    // MARK: Internals

    /// The first packet of a stream: its timestamp becomes the origin.
    private mutating func startStream(ssrc: UInt32, sequenceNumber: UInt16, timestamp: UInt32) -> (Int64, Int64) {
        self.ssrc = ssrc
        timestampBase = timestampUnwrapper.unwrap(timestamp)
        return (sequenceUnwrapper.unwrap(sequenceNumber), 0)
    }

    private mutating func restartStream() {
        ssrc = nil
        sequenceUnwrapper = SequenceNumberUnwrapper()
        timestampUnwrapper = TimestampUnwrapper()
        timestampBase = 0
        entries.removeAll(keepingCapacity: true)
        highestSequence = nil
        nextSequence = nil
        playout = 0
        carry = 0
        tickRemaining = 0
        lastDuration = frameSamples
        playedMask = 0
        jumpCandidate = nil
        estimator.clearWindow()
        statistics.resets &+= 1
        statistics.bufferedPackets = 0
    }

    /// Hands out `samples` of audio from `playout` on: this tick's share now, the rest
    /// as continuation ticks.
    private mutating func produce(_ samples: Int64) {
        let now = min(samples, tickRemaining)
        tickRemaining -= now
        carry = samples - now
        playout += samples
    }

    /// Moves the next slot to `sequence`, remembering whether the slot just left played.
    private mutating func advance(to sequence: Int64, played: Bool) {
        guard let next = nextSequence else {
            nextSequence = sequence
            playedMask = played ? 1 : 0
            return
        }
        let step = sequence - next
        guard step > 0 else { return }
        playedMask = step >= 64 ? 0 : playedMask << UInt64(step)
        if played { playedMask |= 1 }
        nextSequence = sequence
    }

    /// Duration of entry `index`: up to the next packet's timestamp when that packet
    /// follows it directly and the gap is believable, else the last known duration.
    private func duration(at index: Int) -> Int64 {
        let entry = entries[index]
        if index + 1 < entries.count, entries[index + 1].sequence == entry.sequence + 1 {
            let gap = entries[index + 1].timestamp - entry.timestamp
            if gap > 0, gap <= maximumPacketSamples { return gap }
        }
        return lastDuration
    }

    /// How far behind the window's fastest packet a sample with this timestamp plays at `now`.
    private func delay(of timestamp: Int64, now: Int64, baseline: Int64) -> Int64 {
        now &- nanoseconds(timestamp) &- baseline
    }

    private func nanoseconds(_ rtpUnits: Int64) -> Int64 {
        MediaClock.nanoseconds(rtpUnits: rtpUnits, clockRate: configuration.clockRate)
    }

    private func insertionIndex(for sequence: Int64) -> Int {
        // Packets mostly arrive in order: check the end first.
        if let last = entries.last, last.sequence < sequence { return entries.count }
        var low = 0
        var high = entries.count
        while low < high {
            let mid = (low + high) / 2
            if entries[mid].sequence < sequence { low = mid + 1 } else { high = mid }
        }
        return low
    }
}
