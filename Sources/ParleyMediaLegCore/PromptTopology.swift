public import ParleyICECore
import ParleyMediaCore
import ParleyRTP

/// The topology of a call the server answered itself (an IVR: a backend's `say`,
/// `playFiles`, `runMenu` or `park`): one leg, the caller's, with the server as the other
/// end. On a 20 ms clock of its own it plays a queue of PCM clips (any rate the
/// `Resampler` takes: 8, 16, 22.05, 48 kHz...) into that leg, encoded in the leg's
/// negotiated codec (`MediaLegCore.sendAudio`), silence when the queue is empty, and RFC
/// 4733 digits when asked (`sendDTMF`). Each clip that played to its end comes out of
/// `takeEvents()` as `.clipFinished`; a clip queued with `loop` starts again until
/// `stopPlaying` (a parked call's hold prompt). Received audio is played out of the jitter
/// buffer every tick and dropped, so the buffer keeps its pace; received RFC 4733 events
/// come out as the leg's `.receivedTelephoneEvent` actions, as a gateway's do.
///
/// Everything else is an inner `GatewayBridge` (`gateway`): the same leg can later be
/// joined there with a callee's, and from the moment it is joined the prompt clock leaves
/// it alone, so the call goes on as any gateway call without touching its leg.
///
/// A recording (`startRecording`) gets, each prompt tick, the caller's audio and what the
/// clock sent it (the prompt, or silence while nothing or a digit plays); once the leg is
/// joined in the gateway, the gateway's recording goes on with the callee's audio.
///
/// Memory is bounded: at most `Configuration.maximumQueuedClips` clips and
/// `Configuration.maximumQueuedSamples` samples wait, beyond which `enqueue` refuses.
public final class PromptTopology<LegID: Hashable & Sendable>: MediaTopology {
    /// Limits and pacing.
    public struct Configuration: Sendable, Hashable {
        /// Clips waiting (the one playing included) at most.
        public var maximumQueuedClips = 64
        /// Samples of the waiting clips together at most, at their own rates (10 minutes at
        /// 16 kHz by default).
        public var maximumQueuedSamples = 9_600_000
        /// The most ticks run at once after a late `handleTopologyTimeout`.
        public var maximumCatchUpTicks = 5
        /// A digit's tone and the silence after it, for `sendDTMF`.
        public var toneDuration: Duration = .milliseconds(100)
        public var toneGap: Duration = .milliseconds(70)

        public init() {}
    }

    /// A sound to play: mono 16-bit PCM at `sampleRate`.
    public struct Clip: Sendable, Hashable {
        public var samples: [Int16]
        public var sampleRate: Int

        public init(samples: [Int16], sampleRate: Int) {
            self.samples = samples
            self.sampleRate = sampleRate
        }

        /// The clip's length.
        public var duration: Duration { .microseconds(Int64(samples.count) * 1_000_000 / Int64(max(1, sampleRate))) }
    }

    /// What the prompt clock did, for the owner.
    public enum Event: Sendable, Hashable {
        /// The clip queued under `id` played to its end (a looping clip never does).
        case clipFinished(id: UInt64)
    }

    /// Why `enqueue` refused a clip.
    public enum EnqueueError: Error, Sendable, Hashable, CustomStringConvertible {
        case unsupportedRate(Int)
        case queueFull(clips: Int, samples: Int)

        public var description: String {
            switch self {
            case .unsupportedRate(let rate): "a clip at \(rate) Hz cannot be resampled to \(AudioPayloadCodec.interfaceRate) Hz"
            case .queueFull(let clips, let samples): "the prompt queue is full (\(clips) clips, \(samples) samples waiting)"
            }
        }
    }

    /// What the prompt clock did so far.
    public struct Counters: Sendable, Hashable {
        /// 20 ms frames of clip audio sent.
        public var clipFrames: UInt64 = 0
        /// 20 ms frames of silence sent between and after clips.
        public var silenceFrames: UInt64 = 0
        /// Telephone-event packets sent (`sendDTMF`).
        public var telephoneEventPackets: UInt64 = 0
        /// Clips played to their end (loops count each pass).
        public var clipsFinished: UInt64 = 0
        /// Frames the codec could not encode.
        public var encodeFailures: UInt64 = 0

        public init() {}
    }

    /// One clip waiting or playing, resampled a frame at a time as it plays.
    private struct Queued {
        let id: UInt64
        let clip: Clip
        let loop: Bool
        var resampler: Resampler
        /// Input samples consumed so far.
        var position = 0
        /// Resampled samples not sent yet.
        var pending: [Int16] = []
    }

    /// The clock's period: one frame, one packet.
    public static var tick: Duration { .milliseconds(20) }
    /// Samples in one 20 ms frame at the interface rate.
    static var frameSamples: Int { AudioPayloadCodec.interfaceRate / 50 }

    public let configuration: Configuration
    /// Everything but the prompt clock.
    public let gateway: GatewayBridge<LegID>
    /// The leg prompts play into (set by `playInto`).
    public private(set) var promptLeg: LegID?
    public private(set) var counters = Counters()
    private var queue: [Queued] = []
    private var queuedSamples = 0
    private var nextID: UInt64 = 1
    private var events: [Event] = []
    private var digits: TelephoneEventGenerator?
    private var pacer: AudioPacer?
    private var lastNow: ContinuousClock.Instant?
    /// Where a recording's audio goes while prompting (the gateway has its own).
    private var recording: (any CallRecordingSink)?

    public init(configuration: Configuration = Configuration(), gateway: GatewayBridge<LegID> = GatewayBridge()) {
        self.configuration = configuration
        self.gateway = gateway
    }

    // MARK: Prompts

    /// Plays prompts into `leg` from now on (its clock runs while the leg exists and is not
    /// joined in the gateway).
    public func playInto(_ leg: LegID) {
        promptLeg = leg
    }

    /// Queues `clip` behind the clips waiting; returns its id (named again by
    /// `.clipFinished`). A `loop` clip plays again and again until `stopPlaying`.
    public func enqueue(_ clip: Clip, loop: Bool = false) throws(EnqueueError) -> UInt64 {
        guard queue.count < configuration.maximumQueuedClips,
              queuedSamples + clip.samples.count <= configuration.maximumQueuedSamples else {
            throw .queueFull(clips: queue.count, samples: queuedSamples)
        }
        let resampler: Resampler
        do { resampler = try Resampler(from: clip.sampleRate, to: AudioPayloadCodec.interfaceRate) } catch {
            throw .unsupportedRate(clip.sampleRate)
        }
        let id = nextID
        nextID &+= 1
        queue.append(Queued(id: id, clip: clip, loop: loop, resampler: resampler))
        queuedSamples += clip.samples.count
        return id
    }

    /// Drops every clip waiting or playing (none reports `.clipFinished`); silence follows.
    public func stopPlaying() {
        queue.removeAll()
        queuedSamples = 0
    }

    /// Clips waiting or playing.
    public var queuedClipCount: Int { queue.count }

    /// Whether a clip is playing or waiting.
    public var isPlaying: Bool { !queue.isEmpty }

    /// Sends `digits` (`0`-`9`, `*`, `#`, `A`-`D`) into the prompt leg as RFC 4733 events,
    /// paced on the clock. False, and nothing queued, when the leg negotiated no
    /// telephone-event, a character is not a key, or the queue is full.
    public func sendDTMF(_ digits: String) -> Bool {
        let codes = digits.map { $0.isLowercase ? nil : TelephoneEvent.eventCode(for: $0) }
        guard (1...64).contains(codes.count), codes.allSatisfy({ $0 != nil }), let leg = promptLeg else { return false }
        if self.digits == nil {
            guard let rate = gateway.withLeg(leg, { (core: inout MediaLegCore) in core.telephoneEventClockRate }) ?? nil else { return false }
            self.digits = TelephoneEventGenerator(
                clockRate: rate, tick: Self.tick, toneDuration: configuration.toneDuration, gap: configuration.toneGap,
                maximumOpenDuration: .seconds(3), maximumQueued: 80)
        }
        return self.digits?.enqueueDigits(codes.compactMap { $0 }) ?? false
    }

    /// Records the call: the prompt leg's audio and what plays into it while prompting,
    /// then the gateway's two legs once the prompt leg is joined there
    /// (`GatewayBridge.startRecording`, with the prompt leg as the caller). Replaces a
    /// recording in progress; false, and nothing recorded, without a prompt leg.
    @discardableResult
    public func startRecording(into sink: any CallRecordingSink) -> Bool {
        guard let leg = promptLeg else { return false }
        recording = sink
        gateway.startRecording(caller: leg, into: sink)
        return true
    }

    /// Hands no more audio to the recording's sink.
    public func stopRecording() {
        recording = nil
        gateway.stopRecording()
    }

    /// The events since the last call, in order.
    public func takeEvents() -> [Event] {
        defer { events = [] }
        return events
    }

    /// Whether the prompt clock runs: the prompt leg exists and the gateway does not carry it.
    private var prompting: Bool {
        guard let leg = promptLeg else { return false }
        return gateway.legIDs.contains(leg) && !gateway.joined.contains(leg)
    }

    // MARK: MediaTopology

    public func mediaMode(for leg: LegID) -> MediaLegMode { .decode }

    public func add(_ leg: LegID, core: consuming MediaLegCore) {
        gateway.add(leg, core: core)
    }

    public func remove(_ leg: LegID, now: ContinuousClock.Instant) -> (actions: [MediaTopologyAction<LegID>], statistics: MediaLegStatistics)? {
        if leg == promptLeg {
            stopPlaying()
            pacer = nil
            digits = nil
        }
        return gateway.remove(leg, now: now)
    }

    public func join(_ leg: LegID) throws(MediaTopologyError) {
        try gateway.join(leg)
    }

    public var legIDs: [LegID] { gateway.legIDs }

    public func withLeg<Result, Failure: Error>(_ leg: LegID, _ body: (inout MediaLegCore) throws(Failure) -> Result) throws(Failure) -> Result? {
        try gateway.withLeg(leg, body)
    }

    public func start(_ leg: LegID, now: ContinuousClock.Instant) throws(MediaLegError) -> [MediaTopologyAction<LegID>] {
        note(now)
        return try gateway.start(leg, now: now)
    }

    public func receive(_ datagram: [UInt8], from source: ICETransportAddress, on leg: LegID, local: ICETransportAddress,
                        now: ContinuousClock.Instant) -> [MediaTopologyAction<LegID>] {
        note(now)
        return gateway.receive(datagram, from: source, on: leg, local: local, now: now)
    }

    public func receive(buffer: UnsafeMutableRawBufferPointer, length: Int, from source: ICETransportAddress, on leg: LegID,
                        local: ICETransportAddress, now: ContinuousClock.Instant) -> MediaTopologyReceipt<LegID> {
        note(now)
        return gateway.receive(buffer: buffer, length: length, from: source, on: leg, local: local, now: now)
    }

    public func handleTimeout(of leg: LegID, now: ContinuousClock.Instant) -> [MediaTopologyAction<LegID>] {
        note(now)
        return gateway.handleTimeout(of: leg, now: now)
    }

    public func nextDeadline(of leg: LegID) -> ContinuousClock.Instant? { gateway.nextDeadline(of: leg) }

    /// The gateway's clock or the prompt clock, whichever is first.
    public var nextTopologyDeadline: ContinuousClock.Instant? {
        let own: ContinuousClock.Instant? = prompting ? (pacer?.nextTick ?? lastNow) : nil
        switch (own, gateway.nextTopologyDeadline) {
        case (let a?, let b?): return min(a, b)
        case (let a?, nil): return a
        case (nil, let b): return b
        }
    }

    public func handleTopologyTimeout(now: ContinuousClock.Instant) -> [MediaTopologyAction<LegID>] {
        note(now)
        var out = gateway.handleTopologyTimeout(now: now)
        guard prompting, let leg = promptLeg else {
            pacer = nil
            return out
        }
        if pacer == nil {
            pacer = AudioPacer(start: now, frameDuration: Self.tick, maximumCatchUp: configuration.maximumCatchUpTicks)
        }
        let due = pacer!.dueTicks(now: now)
        for _ in 0..<due { tick(leg, now: now, into: &out) }
        return out
    }

    // MARK: The prompt clock

    private func tick(_ leg: LegID, now: ContinuousClock.Instant, into out: inout [MediaTopologyAction<LegID>]) {
        // The caller's audio is played out every tick, so its jitter buffer keeps pace, and
        // dropped unless it is recorded.
        let heard = gateway.withLeg(leg) { (core: inout MediaLegCore) in core.playout(now: now) } ?? []
        if digits != nil {
            let packet = gateway.withLeg(leg) { (core: inout MediaLegCore) in digits?.tick(timestamp: core.nextRTPTimestamp) } ?? nil
            if let packet {
                let sent = gateway.withLeg(leg) { (core: inout MediaLegCore) -> [MediaLegAction] in
                    defer { core.skipAudioFrame() }
                    return core.sendTelephoneEvent(packet.event, eventTimestamp: packet.timestamp, marker: packet.marker, now: now)
                } ?? []
                if !sent.isEmpty { counters.telephoneEventPackets &+= 1 }
                out += Self.translate(sent, on: leg)
                record(heard, [])
                // The clip waits while the digit's slot is on the wire.
                return
            }
        }
        let (samples, fromClip) = nextFrame()
        record(heard, samples)
        let sent: [MediaLegAction]
        do {
            sent = try gateway.withLeg(leg) { (core: inout MediaLegCore) throws(MediaLegError) -> [MediaLegAction] in
                try core.sendAudio(AudioFrame(samples: samples, sampleRate: AudioPayloadCodec.interfaceRate), now: now)
            } ?? []
        } catch {
            counters.encodeFailures &+= 1
            return
        }
        if fromClip { counters.clipFrames &+= 1 } else { counters.silenceFrames &+= 1 }
        out += Self.translate(sent, on: leg)
    }

    /// Hands a prompt tick to the recording: the caller's audio and what played to it,
    /// each padded with silence to a whole frame.
    private func record(_ caller: [Int16], _ played: [Int16]) {
        guard let recording else { return }
        let size = Self.frameSamples
        func frame(_ samples: [Int16]) -> [Int16] {
            samples.count == size ? samples : Array(samples.prefix(size)) + [Int16](repeating: 0, count: max(0, size - samples.count))
        }
        recording.record(caller: frame(caller), other: frame(played))
    }

    /// The next 20 ms at the interface rate: the playing clip's (the last frame of a clip
    /// padded with silence, never mixed with the next clip), or silence.
    private func nextFrame() -> (samples: [Int16], fromClip: Bool) {
        let size = Self.frameSamples
        guard !queue.isEmpty else { return ([Int16](repeating: 0, count: size), false) }
        var current = queue[0]
        let inputPerFrame = max(1, current.clip.sampleRate / 50)
        while current.pending.count < size, current.position < current.clip.samples.count {
            let end = min(current.clip.samples.count, current.position + inputPerFrame)
            current.pending += current.resampler.process(Array(current.clip.samples[current.position..<end]))
            current.position = end
        }
        var frame: [Int16]
        if current.pending.count >= size {
            frame = Array(current.pending[..<size])
            current.pending.removeFirst(size)
        } else {
            frame = current.pending
            frame += [Int16](repeating: 0, count: size - frame.count)
            current.pending = []
        }
        let finished = current.position >= current.clip.samples.count && current.pending.isEmpty
        if finished {
            counters.clipsFinished &+= 1
            if current.loop {
                current.position = 0
                current.resampler.reset()
                queue[0] = current
            } else {
                queue.removeFirst()
                queuedSamples -= current.clip.samples.count
                events.append(.clipFinished(id: current.id))
            }
        } else {
            queue[0] = current
        }
        return (frame, true)
    }

    private func note(_ now: ContinuousClock.Instant) {
        if lastNow.map({ now > $0 }) ?? true { lastNow = now }
    }

    private static func translate(_ actions: [MediaLegAction], on leg: LegID) -> [MediaTopologyAction<LegID>] {
        actions.compactMap { action -> MediaTopologyAction<LegID>? in
            switch action {
            case .send(let bytes, let from, let to): .send(leg: leg, bytes: bytes, from: from, to: to)
            case .stateChanged(let state): .stateChanged(leg: leg, state)
            case .receivedTelephoneEvent(let event, let timestamp): .receivedTelephoneEvent(leg: leg, event, timestamp: timestamp)
            case .dropped(let reason, let from, let detail): .dropped(leg: leg, reason, from: from, detail: detail)
            case .receivedRTP: nil
            }
        }
    }
}
