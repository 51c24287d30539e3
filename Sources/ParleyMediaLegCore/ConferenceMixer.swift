public import ParleyICECore
public import ParleyMediaCore
import ParleyRTP

/// The topology of a conference room: any number of legs in `.decode` mode, mixed on a
/// 20 ms clock of the topology's own (`nextTopologyDeadline`, `handleTopologyTimeout`, with
/// catch-up bounded as `GatewayBridge` bounds it).
///
/// Each tick every joined leg's received audio is taken from its jitter buffer and decoded
/// (`MediaLegCore.playout`: Opus with FEC and concealment, G.711 faded) at the room's rate
/// (16 or 48 kHz: a leg made with `MediaLegConfiguration.audioRate` equal to the room's
/// rate decodes straight to it; any other is resampled) and handed to an `AudioMixer`, which picks the talkers by
/// voice activity and makes one shared mix of them and, for each talker, the mix of the
/// others (N-1). Then each leg is sent 20 ms:
///
/// - a talker gets its N-1 mix, encoded by its own leg (`MediaLegCore.sendAudio`);
/// - everyone else gets the shared mix, encoded once per encoder configuration
///   (`MediaLegCore.encoderConfiguration`: codec, and for Opus bitrate, complexity, DTX and
///   FEC) by an encoder the mixer keeps for that configuration, and the same payload goes to every
///   such leg through its own packetizer (`MediaLegCore.sendEncodedAudio`: its SSRC,
///   numbering, RED, SRTP). So a room's encoding costs one encode per talker plus one per
///   configuration among the listeners, however many listen;
/// - a leg on hold (`setOnHold`) is out of the mix and gets frames from its hold source
///   instead, as does a leg alone in the room (`Configuration.holdMusic`, silence when
///   none), each encoded by its own leg.
///
/// The cost of sharing: a leg that moves from listener to talker (or back) changes
/// encoders mid-stream. Its RTP stream goes on unbroken (one SSRC, numbering and timing),
/// but the peer's Opus decoder was predicting from the other encoder's state, so the first
/// frame or two after the switch decode slightly wrong (a short, quiet artefact rather than
/// a gap), and the leg's own encoder and resampler resume from where they were when it last
/// talked. Each shared encoder keeps its state from tick to tick (so its listeners' Opus
/// prediction stays continuous) and is dropped after `sharedEncoderIdleTicks` ticks unused.
///
/// Muted legs (`setMuted`) still hear the room and are never talkers. Who talks is
/// `talkers`; every change is also an `Event` (`takeEvents`), for the owner to tell the
/// room's apps. RFC 4733 telephone events a leg receives come out as
/// `.receivedTelephoneEvent(leg:, event, timestamp:)` and go to no other leg.
///
/// Work per tick is bounded: one playout, at most one resample each way, per joined leg
/// (at most `maximumParticipants`); `maximumTalkers` + 1 mixes; one encode per talker, per
/// listener configuration and per leg on hold; and at most `maximumCatchUpTicks` ticks per
/// call (the rest counted in `skippedTicks`).
public final class ConferenceMixer<LegID: Hashable & Sendable>: MediaTopology {
    /// How the room mixes and paces.
    public struct Configuration: Sendable, Hashable {
        /// The mix: the room's rate, talkers, voice activity, limiter.
        public var mixer = AudioMixer<LegID>.Configuration()
        /// The most legs joined at once.
        public var maximumParticipants = 100
        /// The most ticks run at once after a late `handleTopologyTimeout`.
        public var maximumCatchUpTicks = 5
        /// A tick run later than this after its deadline counts as late.
        public var lateTickThreshold: Duration = .milliseconds(5)
        /// What a leg alone in the room, or on hold without a source of its own, hears,
        /// looped; silence when nil.
        public var holdMusic: WAVFile?
        /// Ticks a shared encoder is kept without a listener before it is dropped.
        public var sharedEncoderIdleTicks = 50
        /// Events kept for `takeEvents` at most; older ones are dropped (and counted).
        public var maximumQueuedEvents = 256

        public init() {}
    }

    /// What the owner is told about the room.
    public enum Event: Sendable, Hashable {
        /// The talkers are now these legs, loudest first (empty: nobody talks).
        case talkersChanged([LegID])
    }

    /// What the mixer did so far.
    public struct Counters: Sendable, Hashable, Encodable {
        /// Ticks run.
        public var ticks: UInt64 = 0
        /// Calls of `handleTopologyTimeout` that ran later than `lateTickThreshold`.
        public var lateTicks: UInt64 = 0
        /// Frames of the shared mix encoded (one per listener configuration per tick).
        public var sharedEncodes: UInt64 = 0
        /// N-1 mixes encoded for talkers.
        public var talkerEncodes: UInt64 = 0
        /// Hold-source frames encoded (legs on hold, a leg alone).
        public var holdEncodes: UInt64 = 0
        /// Frames sent to listeners from a shared encode.
        public var sharedFramesSent: UInt64 = 0
        /// Talker frames summed into the mixes.
        public var framesMixed: UInt64 = 0
        /// Frames that could not be encoded, protected or mixed (not sent).
        public var encodeFailures: UInt64 = 0
        /// Datagrams the legs dropped.
        public var datagramsDropped: UInt64 = 0
        /// RFC 4733 events received (each once).
        public var telephoneEventsReceived: UInt64 = 0
        /// Events dropped because the owner did not take them.
        public var eventsDropped: UInt64 = 0

        public init() {}
    }

    /// The encodes of one tick.
    public struct TickEncodes: Sendable, Hashable, Encodable {
        /// Shared-mix encodes: one per listener encoder configuration.
        public var shared = 0
        /// N-1 encodes: one per talker with a connected leg.
        public var talker = 0
        /// Hold-source encodes.
        public var hold = 0

        public init(shared: Int = 0, talker: Int = 0, hold: Int = 0) {
            self.shared = shared
            self.talker = talker
            self.hold = hold
        }

        /// Every encode of the tick.
        public var total: Int { shared + talker + hold }
    }

    /// The clock's period: one frame, one packet.
    public static var tick: Duration { .milliseconds(20) }

    /// A class, because a `MediaLegCore` cannot be copied into a collection.
    private final class Slot {
        let id: LegID
        var core: MediaLegCore
        var muted = false
        var onHold = false
        /// Where hold frames come from while on hold or alone; made when first needed.
        var holdSource: (any AudioSource)?
        /// The source is the configured hold music (looped), not one the owner gave.
        var holdSourceLoops = false
        /// The leg's playout to the room's rate; nil when the leg plays at the room's rate.
        var decodeResampler: Resampler?
        /// The last event received on this leg (its RTP timestamp), to count each once.
        var lastEventKey: UInt32?
        init(id: LegID, core: consuming MediaLegCore) {
            self.id = id
            self.core = core
        }
    }

    /// A shared stream's encoder, kept from tick to tick for its Opus prediction.
    private final class SharedEncoder {
        let codec: AudioPayloadCodec
        var lastUsedTick: UInt64
        init(codec: AudioPayloadCodec, tick: UInt64) {
            self.codec = codec
            lastUsedTick = tick
        }
    }

    public let configuration: Configuration
    /// The joined legs, in the order they joined.
    public var joined: [LegID] { joinedSlots.map(\.id) }
    public private(set) var counters = Counters()
    /// The encodes of the last tick.
    public private(set) var lastTickEncodes = TickEncodes()
    /// How late the ticks ran (each `handleTopologyTimeout` that ran a tick).
    public private(set) var lateness = TickLateness()
    /// Ticks given up after stalls (the caller late by more than the catch-up allows).
    public var skippedTicks: UInt64 { skippedBeforeClock + (pacer?.skippedTicks ?? 0) }
    private var skippedBeforeClock: UInt64 = 0
    private var slots: [LegID: Slot] = [:]
    /// The joined legs' slots, in the order they joined: the tick walks these, so it hashes
    /// no leg id.
    private var joinedSlots: [Slot] = []
    /// The mixer's inputs, kept from tick to tick so their storage is reused.
    private var inputs: [AudioMixer<LegID>.Input] = []
    private var mixer: AudioMixer<LegID>
    private var sharedEncoders: [AudioEncoderConfiguration: SharedEncoder] = [:]
    /// The shared mix from the room's rate to a listener encoder's other audio rate, by
    /// that rate; none while every listener encodes at the room's rate.
    private var sharedResamplers: [Int: Resampler] = [:]
    private var pacer: AudioPacer?
    private var lastNow: ContinuousClock.Instant?
    private var events: [Event] = []

    /// - Throws: `CodecError` `.invalidArgument` for a mixer configuration `AudioMixer`
    ///   refuses (a rate other than 16 or 48 kHz, talkers outside 1...16).
    public init(configuration: Configuration = Configuration()) throws(CodecError) {
        self.configuration = configuration
        // The mixer must take every leg the room may join.
        var mixing = configuration.mixer
        mixing.maximumParticipants = max(mixing.maximumParticipants, configuration.maximumParticipants)
        mixer = try AudioMixer(configuration: mixing)
    }

    // MARK: Legs

    public func mediaMode(for leg: LegID) -> MediaLegMode { .decode }

    public func add(_ leg: LegID, core: consuming MediaLegCore) {
        let slot = Slot(id: leg, core: core)
        slot.core.setMediaMode(.decode)
        let rate = configuration.mixer.sampleRate, legRate = slot.core.configuration.audioRate
        if legRate != rate {
            slot.decodeResampler = try? Resampler(from: legRate, to: rate)
        }
        slots[leg] = slot
    }

    public func remove(_ leg: LegID, now: ContinuousClock.Instant) -> (actions: [MediaTopologyAction<LegID>], statistics: MediaLegStatistics)? {
        note(now)
        guard let slot = slots.removeValue(forKey: leg) else { return nil }
        if joinedSlots.contains(where: { $0 === slot }) {
            joinedSlots.removeAll { $0 === slot }
            let wasTalking = mixer.talkers.contains(leg)
            mixer.remove(leg)
            if wasTalking { post(.talkersChanged(mixer.talkers)) }
        }
        if joinedSlots.isEmpty { stopClock() }
        let actions = translate(slot.core.close(now: now), on: leg)
        return (actions, slot.core.statistics)
    }

    public func join(_ leg: LegID) throws(MediaTopologyError) {
        guard let slot = slots[leg] else { throw MediaTopologyError(.unknownLeg, "no leg \(leg) to join") }
        if joinedSlots.contains(where: { $0 === slot }) { return }
        guard joinedSlots.count < configuration.maximumParticipants else {
            throw MediaTopologyError(.full, "the room holds \(configuration.maximumParticipants) legs")
        }
        joinedSlots.append(slot)
    }

    public var legIDs: [LegID] { Array(slots.keys) }

    public func withLeg<Result, Failure: Error>(_ leg: LegID, _ body: (inout MediaLegCore) throws(Failure) -> Result) throws(Failure) -> Result? {
        guard let slot = slots[leg] else { return nil }
        return try body(&slot.core)
    }

    public func start(_ leg: LegID, now: ContinuousClock.Instant) throws(MediaLegError) -> [MediaTopologyAction<LegID>] {
        note(now)
        guard let slot = slots[leg] else { throw MediaLegError(.state, "no leg \(leg) to start") }
        return translate(try slot.core.start(now: now), on: leg)
    }

    // MARK: Controls

    /// Mutes or unmutes a leg: muted, it is never mixed (nor a talker) but still hears the
    /// room. Takes effect at the next tick.
    public func setMuted(_ muted: Bool, leg: LegID) throws(MediaTopologyError) {
        guard let slot = slots[leg] else { throw MediaTopologyError(.unknownLeg, "no leg \(leg) to mute") }
        slot.muted = muted
    }

    /// Puts a leg on hold or takes it off: on hold it is out of the mix and hears `source`
    /// (nil: the configured hold music, looped, or silence) instead of the room; a source
    /// that runs out is followed by silence. Taking it off hold forgets the source.
    public func setOnHold(_ onHold: Bool, leg: LegID, source: (any AudioSource)? = nil) throws(MediaTopologyError) {
        guard let slot = slots[leg] else { throw MediaTopologyError(.unknownLeg, "no leg \(leg) to hold") }
        slot.onHold = onHold
        slot.holdSource = onHold ? source : nil
        slot.holdSourceLoops = false
    }

    /// Whether the leg is muted; nil when there is no such leg.
    public func isMuted(_ leg: LegID) -> Bool? { slots[leg]?.muted }

    /// Whether the leg is on hold; nil when there is no such leg.
    public func isOnHold(_ leg: LegID) -> Bool? { slots[leg]?.onHold }

    /// Who talks now, loudest first.
    public var talkers: [LegID] { mixer.talkers }

    /// The events since the last call, oldest first.
    public func takeEvents() -> [Event] {
        defer { events.removeAll(keepingCapacity: true) }
        return events
    }

    /// What the room's mixer counted (ticks mixed, frames limited, talker changes).
    public var mixerCounters: AudioMixer<LegID>.Counters { mixer.counters }

    // MARK: Datagrams and timers

    public func receive(_ datagram: [UInt8], from source: ICETransportAddress, on leg: LegID, local: ICETransportAddress,
                        now: ContinuousClock.Instant) -> [MediaTopologyAction<LegID>] {
        note(now)
        guard let slot = slots[leg] else { return [] }
        let media = datagram.count > 1 && (128...191).contains(datagram[0]) && !(192...223).contains(datagram[1])
        let actions = slot.core.receive(datagram, from: source, on: local, now: now)
        let counted = media && !actions.contains(where: { if case .dropped = $0 { true } else { false } })
        // One array, in the order `.receivedMedia` then the leg's own: every datagram of
        // every participant comes here.
        return translate(actions, on: leg, after: counted ? .receivedMedia(leg: leg) : nil)
    }

    public func handleTimeout(of leg: LegID, now: ContinuousClock.Instant) -> [MediaTopologyAction<LegID>] {
        note(now)
        guard let slot = slots[leg] else { return [] }
        return translate(slot.core.handleTimeout(now: now), on: leg)
    }

    public func nextDeadline(of leg: LegID) -> ContinuousClock.Instant? { slots[leg]?.core.nextDeadline }

    /// The next tick while a leg is joined; before the clock's first tick, the latest time
    /// the owner passed in (due at once), so the clock starts on the owner's next call.
    public var nextTopologyDeadline: ContinuousClock.Instant? {
        guard !joinedSlots.isEmpty else { return nil }
        return pacer?.nextTick ?? lastNow
    }

    /// Runs the ticks that are due (at most `maximumCatchUpTicks`), and records how late
    /// the first of them ran.
    public func handleTopologyTimeout(now: ContinuousClock.Instant) -> [MediaTopologyAction<LegID>] {
        note(now)
        guard !joinedSlots.isEmpty else { return [] }
        if pacer == nil {
            pacer = AudioPacer(start: now, frameDuration: Self.tick, maximumCatchUp: configuration.maximumCatchUpTicks)
        }
        let scheduled = pacer!.nextTick
        let due = pacer!.dueTicks(now: now)
        guard due > 0 else { return [] }
        let late = scheduled.duration(to: now)
        lateness.record(late)
        if late > configuration.lateTickThreshold { counters.lateTicks &+= 1 }
        var out: [MediaTopologyAction<LegID>] = []
        out.reserveCapacity(joinedSlots.count * due)  // a send per leg per tick, in one array
        for _ in 0..<due { tick(now: now, into: &out) }
        return out
    }

    // MARK: The clock

    private func tick(now: ContinuousClock.Instant, into out: inout [MediaTopologyAction<LegID>]) {
        counters.ticks &+= 1
        let frame = configuration.mixer.frameSamples
        inputs.removeAll(keepingCapacity: true)
        for slot in joinedSlots {
            // Played every tick, heard or not, so each leg's jitter buffer keeps its pace.
            let played = slot.core.playout(now: now)
            if slot.muted || slot.onHold {
                inputs.append(.init(id: slot.id, samples: [], muted: slot.muted, onHold: slot.onHold))
                continue
            }
            var samples = played
            if slot.decodeResampler != nil { samples = slot.decodeResampler!.process(played) }
            inputs.append(.init(id: slot.id, samples: Self.fit(samples, to: frame)))
        }
        let output: AudioMixer<LegID>.Output
        do { output = try mixer.mix(inputs) } catch {
            counters.encodeFailures &+= UInt64(joinedSlots.count)
            return
        }
        counters.framesMixed = mixer.counters.framesMixed
        if output.talkersChanged { post(.talkersChanged(output.talkers)) }

        var encodes = TickEncodes()
        let alone = joinedSlots.count == 1
        var sharedAtRate: [Int: [Int16]] = [:]
        // The tick's shared payloads, one per listener configuration: nearly always one,
        // so a list compared in turn, not a dictionary hashing every listener's key.
        var sharedPayloads: [(key: AudioEncoderConfiguration, payload: [UInt8])] = []
        for slot in joinedSlots where slot.core.state == .connected {
            let leg = slot.id
            do {
                let sent: [MediaLegAction]
                if slot.onHold || alone {
                    sent = try slot.core.sendAudio(holdFrame(for: slot), now: now)
                    encodes.hold += 1
                } else if let index = output.talkers.firstIndex(of: leg) {
                    let mix = AudioFrame(samples: output.talkerMixes[index], sampleRate: configuration.mixer.sampleRate)
                    sent = try slot.core.sendAudio(mix, now: now)
                    encodes.talker += 1
                } else {
                    guard let key = slot.core.encoderConfiguration else { continue }
                    let payload: [UInt8]
                    if let made = sharedPayloads.first(where: { $0.key == key }) {
                        payload = made.payload
                    } else {
                        let samples = try sharedMix(output.shared, at: key.audioRate, made: &sharedAtRate)
                        payload = try sharedEncoder(for: key).codec.encode(samples)
                        sharedPayloads.append((key, payload))
                        encodes.shared += 1
                    }
                    sent = try slot.core.sendEncodedAudio(payload: payload, now: now)
                    counters.sharedFramesSent &+= 1
                }
                translate(sent, on: leg, into: &out)
            } catch {
                counters.encodeFailures &+= 1
            }
        }
        lastTickEncodes = encodes
        counters.sharedEncodes &+= UInt64(encodes.shared)
        counters.talkerEncodes &+= UInt64(encodes.talker)
        counters.holdEncodes &+= UInt64(encodes.hold)
        let tick = counters.ticks
        let idle = UInt64(max(1, configuration.sharedEncoderIdleTicks))
        if sharedEncoders.values.contains(where: { tick - $0.lastUsedTick > idle }) {
            sharedEncoders = sharedEncoders.filter { tick - $0.value.lastUsedTick <= idle }
        }
    }

    private func sharedEncoder(for key: AudioEncoderConfiguration) throws(CodecError) -> SharedEncoder {
        if let encoder = sharedEncoders[key] {
            encoder.lastUsedTick = counters.ticks
            return encoder
        }
        let encoder = SharedEncoder(codec: try key.makeCodec(), tick: counters.ticks)
        sharedEncoders[key] = encoder
        return encoder
    }

    /// The shared mix at a listener encoder's audio rate: as mixed at the room's rate, else
    /// resampled once per tick per rate (`made` keeps the tick's).
    private func sharedMix(_ samples: [Int16], at rate: Int, made: inout [Int: [Int16]]) throws(CodecError) -> [Int16] {
        if rate == configuration.mixer.sampleRate { return samples }
        if let done = made[rate] { return done }
        if sharedResamplers[rate] == nil {
            sharedResamplers[rate] = try Resampler(from: configuration.mixer.sampleRate, to: rate)
        }
        let resampled = Self.fit(sharedResamplers[rate]!.process(samples), to: rate / 50)
        made[rate] = resampled
        return resampled
    }

    /// The leg's next hold frame: its own source, else the hold music looped, else silence.
    private func holdFrame(for slot: Slot) -> AudioFrame {
        if slot.holdSource == nil, let music = configuration.holdMusic {
            slot.holdSource = WAVFileSource(music)
            slot.holdSourceLoops = true
        }
        if let frame = slot.holdSource?.nextFrame() { return frame }
        if slot.holdSourceLoops, let music = configuration.holdMusic {
            var source = WAVFileSource(music)
            let frame = source.nextFrame()
            slot.holdSource = source
            if let frame { return frame }
        }
        return AudioFrame.silence(sampleRate: slot.core.configuration.audioRate)
    }

    /// `samples` padded with silence or cut to `count` (a resampler's block may differ by
    /// one sample from the frame).
    private static func fit(_ samples: [Int16], to count: Int) -> [Int16] {
        if samples.count == count { return samples }
        if samples.count > count { return Array(samples.prefix(count)) }
        return samples + [Int16](repeating: 0, count: count - samples.count)
    }

    private func post(_ event: Event) {
        if events.count >= max(1, configuration.maximumQueuedEvents) {
            events.removeFirst()
            counters.eventsDropped &+= 1
        }
        events.append(event)
    }

    private func stopClock() {
        skippedBeforeClock &+= pacer?.skippedTicks ?? 0
        pacer = nil
    }

    private func note(_ now: ContinuousClock.Instant) {
        if lastNow.map({ now > $0 }) ?? true { lastNow = now }
    }

    // MARK: Actions

    private func translate(_ actions: [MediaLegAction], on leg: LegID,
                           after first: MediaTopologyAction<LegID>? = nil) -> [MediaTopologyAction<LegID>] {
        var out: [MediaTopologyAction<LegID>] = []
        if actions.isEmpty && first == nil { return out }
        out.reserveCapacity(actions.count + (first == nil ? 0 : 1))
        if let first { out.append(first) }
        translate(actions, on: leg, into: &out)
        return out
    }

    /// The same, appended to `out`: a tick gathers every leg's sends in one array.
    private func translate(_ actions: [MediaLegAction], on leg: LegID, into out: inout [MediaTopologyAction<LegID>]) {
        for action in actions {
            switch action {
            case .send(let bytes, let from, let to):
                out.append(.send(leg: leg, bytes: bytes, from: from, to: to))
            case .stateChanged(let state):
                out.append(.stateChanged(leg: leg, state))
            case .receivedRTP:
                // Only a forward-mode leg reports packets; the room's legs decode.
                out.append(.receivedMedia(leg: leg))
            case .receivedTelephoneEvent(let event, let timestamp):
                if let slot = slots[leg], slot.lastEventKey != timestamp {
                    slot.lastEventKey = timestamp
                    counters.telephoneEventsReceived &+= 1
                }
                out.append(.receivedTelephoneEvent(leg: leg, event, timestamp: timestamp))
            case .dropped(let reason, let from, let detail):
                counters.datagramsDropped &+= 1
                out.append(.dropped(leg: leg, reason, from: from, detail: detail))
            }
        }
    }
}
