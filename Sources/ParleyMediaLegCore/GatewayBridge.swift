public import ParleyICECore
import ParleyMediaCore
import ParleyRTP

/// The topology of a call between two parties whose legs speak different codecs, as when
/// an app's WebRTC leg (Opus at 48 kHz, maybe RED) meets a SIP leg (PCMU or PCMA at 8 kHz,
/// or Opus) on the server: legs in `.decode` mode, and a 20 ms clock of the topology's own
/// (`nextTopologyDeadline`) on which each joined leg's received audio is taken from its
/// jitter buffer and decoded (`MediaLegCore.playout`: Opus with FEC and concealment, G.711
/// faded), resampled and encoded for the other leg in its negotiated codec, 20 ms a packet
/// (`MediaLegCore.sendAudio`: that leg's SSRC, sequence numbers, timestamps, marker on the
/// first packet and the first after a gap).
///
/// When the two joined legs negotiated the same codec and clock rate, nothing needs
/// transcoding: both legs go to `.forward` mode and packets are relayed in place as
/// `RelayBridge` relays them (`Path.relay`; `Configuration.relayWhenCodecsMatch` turns
/// this off).
///
/// RFC 4733 telephone events go both ways: an event a leg receives (`MediaLegCore`
/// reports it as it begins and as it ends) is re-sent on the other leg with that leg's
/// telephone-event payload type and clock, paced on the clock by a
/// `TelephoneEventGenerator` (marker on the first packet, the duration growing a tick at a
/// time, the end three times); while it is on the wire the tone's own audio is left out
/// of that leg, so the far end plays the event and not the tone twice. Each received event
/// also comes out as `.receivedTelephoneEvent(leg:, event, timestamp:)` (the DTMF key is
/// `event.key`), for the owner to tell the app. `sendDTMF(_:on:)` sends an app's digits on
/// a leg, paced as `MediaLeg.sendDTMF` paces them.
///
/// Each leg keeps its own RTCP: its reports describe its half of the call, and nothing of
/// one leg's RTCP crosses to the other. A datagram one leg drops (malformed, unauthenticated,
/// from a foreign source) is counted (`LegCounters.datagramsDropped`, and by reason in the
/// leg's statistics) and goes no further. Work is bounded: a tick decodes and encodes one
/// frame per joined leg and sends at most one event packet per leg; a stalled caller gets
/// at most `Configuration.maximumCatchUpTicks` ticks at once (the rest are counted in
/// `skippedTicks`).
///
/// A recorded call (`startRecording`) is transcoded whatever its codecs, so that every
/// tick has both directions decoded: each tick hands the caller's 20 ms and the other
/// leg's to the recording's `CallRecordingSink`. It stays transcoded after
/// `stopRecording`: moving a stream back to relaying would renumber it a second time.
///
/// Two legs are joined at most; others may exist unjoined (they receive, nothing flows).
public final class GatewayBridge<LegID: Hashable & Sendable>: MediaTopology {
    /// How the gateway transcodes and paces.
    public struct Configuration: Sendable, Hashable {
        /// Relay in place rather than transcode when both joined legs negotiated the same
        /// codec (name, clock rate and channels).
        public var relayWhenCodecsMatch = true
        /// The most ticks run at once after a late `handleTopologyTimeout`.
        public var maximumCatchUpTicks = 5
        /// A digit's tone and the silence after it, for `sendDTMF` (as `MediaLeg.sendDTMF`).
        public var toneDuration: Duration = .milliseconds(100)
        public var toneGap: Duration = .milliseconds(70)
        /// How long a forwarded event goes on when its end never arrives (all its end
        /// packets lost) before the gateway ends it.
        public var maximumForwardedEventDuration: Duration = .seconds(3)
        /// Events waiting to be sent on one leg at most (digits and forwarded events).
        public var maximumQueuedEvents = 80

        public init() {}
    }

    /// What the gateway does with the audio of its two joined legs.
    public enum Path: String, Sendable, Hashable, Encodable {
        /// Fewer than two legs joined, or their codecs not negotiated yet.
        case undecided
        /// Different codecs: decoded, resampled and encoded on the clock.
        case transcode
        /// The same codec: packets relayed in place, nothing decoded.
        case relay
    }

    /// What the gateway did for one leg (the leg named is the one sent on, but for
    /// `datagramsDropped`, the one received on).
    public struct LegCounters: Sendable, Hashable, Encodable {
        /// 20 ms frames of the other leg's audio encoded and sent on this leg.
        public var framesTranscoded: UInt64 = 0
        /// Packets of the other leg relayed onto this leg.
        public var packetsRelayed: UInt64 = 0
        /// The other leg's audio left out while an event was on this leg's wire: frames when
        /// transcoding, packets when relaying.
        public var audioLeftOutForEvents: UInt64 = 0
        /// RFC 4733 packets sent on this leg (updates and end copies).
        public var telephoneEventPacketsSent: UInt64 = 0
        /// Digits the owner asked this leg to send (`sendDTMF`).
        public var digitsQueued: UInt64 = 0
        /// Events received on the other leg and re-sent on this one.
        public var eventsForwarded: UInt64 = 0
        /// Events received on the other leg that this leg could not carry: it negotiated no
        /// telephone-event, the code is not a DTMF key (0-15), or its queue was full.
        public var eventsNotForwarded: UInt64 = 0
        /// The other leg's audio not sent on this one because the call was on hold
        /// (`isSilenced`): frames replaced by silence when transcoding, packets dropped when
        /// relaying.
        public var audioLeftOutForHold: UInt64 = 0
        /// Datagrams received on this leg and dropped by its core.
        public var datagramsDropped: UInt64 = 0
        /// Frames the codec or SRTP could not encode or protect (not sent).
        public var encodeFailures: UInt64 = 0

        public init() {}
    }

    /// The clock's period: one frame, one packet.
    public static var tick: Duration { .milliseconds(20) }

    /// A class, because a `MediaLegCore` cannot be copied into a collection.
    private final class Slot {
        var core: MediaLegCore
        /// Events to send on this leg; made once its telephone-event clock is known.
        var events: TelephoneEventGenerator?
        var counters = LegCounters()
        /// Relaying: a packet went out on this leg since the last tick.
        var relayedSinceTick = false
        /// The last event received on this leg (its RTP timestamp), to count each once.
        var lastEventKey: UInt32?
        init(core: consuming MediaLegCore) { self.core = core }
    }

    public let configuration: Configuration
    private var slots: [LegID: Slot] = [:]
    /// The joined legs, in the order they joined; two at most.
    public private(set) var joined: [LegID] = []
    public private(set) var path: Path = .undecided
    /// Whether the call is on hold by an app party (docs/calls.md, "Hold"): while set,
    /// neither leg's audio reaches the other. Transcoding, each leg is sent 20 ms of
    /// silence a tick in place of the other's audio (the other's jitter buffer is still
    /// played out, so it keeps its pace), so a far side keeps a steady stream and no RTP
    /// timeout of its own fires; relaying, nothing is relayed (each leg's clock goes on
    /// through the gap). Telephone events still go both ways.
    public var isSilenced = false
    /// Ticks run so far.
    public private(set) var ticks: UInt64 = 0
    /// Ticks given up after stalls (the caller late by more than the catch-up allows).
    public var skippedTicks: UInt64 { skippedBeforeClock + (pacer?.skippedTicks ?? 0) }
    private var skippedBeforeClock: UInt64 = 0
    private var pacer: AudioPacer?
    /// The latest time the owner passed in: the clock starts from it once a leg joins.
    private var lastNow: ContinuousClock.Instant?
    /// The recording in progress: the caller's leg (the left of the two directions) and
    /// where the audio goes.
    private var recording: (caller: LegID, sink: any CallRecordingSink)?
    /// Ticks whose audio went to a recording.
    public private(set) var recordedTicks: UInt64 = 0

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    public func mediaMode(for leg: LegID) -> MediaLegMode { .decode }

    public func add(_ leg: LegID, core: consuming MediaLegCore) {
        slots[leg] = Slot(core: core)
    }

    public func remove(_ leg: LegID, now: ContinuousClock.Instant) -> (actions: [MediaTopologyAction<LegID>], statistics: MediaLegStatistics)? {
        note(now)
        guard let slot = slots.removeValue(forKey: leg) else { return nil }
        if joined.contains(leg) {
            joined.removeAll { $0 == leg }
            for other in joined { slots[other]?.events?.closeOpenEvents() }
            undecide()
        }
        if joined.isEmpty { stopClock() }
        let actions = translate(slot.core.close(now: now), on: leg, now: now)
        return (actions, slot.core.statistics)
    }

    public func join(_ leg: LegID) throws(MediaTopologyError) {
        guard slots[leg] != nil else { throw MediaTopologyError(.unknownLeg, "no leg \(leg) to join") }
        if joined.contains(leg) { return }
        guard joined.count < 2 else { throw MediaTopologyError(.full, "a gateway bridge joins two legs; \(joined) already are") }
        joined.append(leg)
        decidePath()
    }

    public var legIDs: [LegID] { Array(slots.keys) }

    public func withLeg<Result, Failure: Error>(_ leg: LegID, _ body: (inout MediaLegCore) throws(Failure) -> Result) throws(Failure) -> Result? {
        guard let slot = slots[leg] else { return nil }
        return try body(&slot.core)
    }

    /// What the gateway did for the leg so far; nil when there is no such leg.
    public func counters(of leg: LegID) -> LegCounters? { slots[leg]?.counters }

    public func start(_ leg: LegID, now: ContinuousClock.Instant) throws(MediaLegError) -> [MediaTopologyAction<LegID>] {
        note(now)
        guard let slot = slots[leg] else { throw MediaLegError(.state, "no leg \(leg) to start") }
        return translate(try slot.core.start(now: now), on: leg, now: now)
    }

    public func receive(_ datagram: [UInt8], from source: ICETransportAddress, on leg: LegID, local: ICETransportAddress,
                        now: ContinuousClock.Instant) -> [MediaTopologyAction<LegID>] {
        note(now)
        guard let slot = slots[leg] else { return [] }
        let media = Self.isRTP(datagram.first, datagram.count > 1 ? datagram[1] : nil) && slot.core.mediaMode == .decode
        let actions = slot.core.receive(datagram, from: source, on: local, now: now)
        return receivedMedia(media, actions, on: leg) + translate(actions, on: leg, now: now)
    }

    /// Relaying, RTP of the negotiated codec is decrypted in the buffer with this leg's keys
    /// and re-encrypted there with the other's (`MediaLegCore.relay(buffer:length:now:)`),
    /// as `RelayBridge` does; anything else, and everything while transcoding, goes through
    /// the leg's `receive`.
    public func receive(buffer: UnsafeMutableRawBufferPointer, length: Int, from source: ICETransportAddress, on leg: LegID,
                        local: ICETransportAddress, now: ContinuousClock.Instant) -> MediaTopologyReceipt<LegID> {
        note(now)
        guard let slot = slots[leg] else { return MediaTopologyReceipt(actions: []) }
        let media = length > 1 && length <= buffer.count && Self.isRTP(buffer[0], buffer[1]) && slot.core.mediaMode == .decode
        switch slot.core.receive(buffer: buffer, length: length, from: source, on: local, now: now) {
        case .handled(let actions):
            return MediaTopologyReceipt(actions: receivedMedia(media, actions, on: leg) + translate(actions, on: leg, now: now))
        case .media(let plain):
            var actions: [MediaTopologyAction<LegID>] = [.receivedMedia(leg: leg)]
            guard path == .relay, let peer = peer(of: leg) else { return MediaTopologyReceipt(actions: actions) }
            if isSilenced {
                peer.slot.counters.audioLeftOutForHold &+= 1
                return MediaTopologyReceipt(actions: actions)
            }
            if peer.slot.events?.isSending == true {
                peer.slot.counters.audioLeftOutForEvents &+= 1
                return MediaTopologyReceipt(actions: actions)
            }
            // A peer that wraps in RED needs a bigger packet than the buffer holds.
            if peer.slot.core.sendsRedundancy {
                if let packet = try? RTPPacket(parsing: [UInt8](UnsafeRawBufferPointer(rebasing: buffer[..<plain]))) {
                    relay(packet, from: leg, now: now, into: &actions)
                }
                return MediaTopologyReceipt(actions: actions)
            }
            guard let sent = peer.slot.core.relay(buffer: buffer, length: plain, now: now) else {
                return MediaTopologyReceipt(actions: actions)
            }
            peer.slot.counters.packetsRelayed &+= 1
            peer.slot.relayedSinceTick = true
            actions.append(.forwarded(from: leg, to: peer.id))
            return MediaTopologyReceipt(actions: actions, send: .init(leg: peer.id, length: sent.length, from: sent.from, to: sent.to))
        }
    }

    public func handleTimeout(of leg: LegID, now: ContinuousClock.Instant) -> [MediaTopologyAction<LegID>] {
        note(now)
        guard let slot = slots[leg] else { return [] }
        return translate(slot.core.handleTimeout(now: now), on: leg, now: now)
    }

    public func nextDeadline(of leg: LegID) -> ContinuousClock.Instant? { slots[leg]?.core.nextDeadline }

    /// The next tick while a leg is joined; before the clock's first tick, the latest time
    /// the owner passed in (due at once), so the clock starts on the owner's next call.
    public var nextTopologyDeadline: ContinuousClock.Instant? {
        guard !joined.isEmpty else { return nil }
        return pacer?.nextTick ?? lastNow
    }

    /// Runs the ticks that are due: for each joined leg, its next telephone-event packet if
    /// one is due, and the other leg's next 20 ms of audio encoded for it (transcoding) or
    /// the stream's clock kept going through silences (relaying).
    public func handleTopologyTimeout(now: ContinuousClock.Instant) -> [MediaTopologyAction<LegID>] {
        note(now)
        guard !joined.isEmpty else { return [] }
        if pacer == nil {
            pacer = AudioPacer(start: now, frameDuration: Self.tick, maximumCatchUp: configuration.maximumCatchUpTicks)
        }
        let due = pacer!.dueTicks(now: now)
        var out: [MediaTopologyAction<LegID>] = []
        for _ in 0..<due { tick(now: now, into: &out) }
        return out
    }

    /// Sends `digits` on `leg`, toward its party, as RFC 4733 events: each a tone of
    /// `configuration.toneDuration` (a packet a tick, its end three times) then
    /// `configuration.toneGap` of silence, in the leg's telephone-event payload type and
    /// clock, behind any event already waiting. False, and nothing sent, unless `digits`
    /// is 1-64 of `0`-`9`, `*`, `#`, `A`-`D` (upper case, as `ParleyCall.sendDTMF` takes
    /// them) and the leg is joined, connected and negotiated telephone-event, with room in
    /// its queue.
    public func sendDTMF(_ digits: String, on leg: LegID) -> Bool {
        let codes = digits.map { $0.isLowercase ? nil : TelephoneEvent.eventCode(for: $0) }
        guard (1...64).contains(codes.count), codes.allSatisfy({ $0 != nil }), joined.contains(leg), let slot = slots[leg],
              slot.core.state == .connected, makeGenerator(for: slot),
              slot.events?.enqueueDigits(codes.compactMap { $0 }) == true else { return false }
        slot.counters.digitsQueued &+= UInt64(codes.count)
        return true
    }

    // MARK: Recording

    /// Records the call from the next tick on which both joined legs are transcoded: each
    /// tick hands `sink` the audio `caller`'s leg received and the audio the other joined
    /// leg received. A call that relays turns to transcoding now (both legs to `.decode`);
    /// one not decided yet transcodes when it is. Replaces a recording in progress.
    public func startRecording(caller: LegID, into sink: any CallRecordingSink) {
        recording = (caller, sink)
        if path == .relay {
            for leg in joined { slots[leg]?.core.setMediaMode(.decode) }
            path = .transcode
        }
    }

    /// Hands no more audio to the recording's sink. The call goes on transcoding.
    public func stopRecording() {
        recording = nil
    }

    /// Whether a recording takes the call's audio.
    public var isRecording: Bool { recording != nil }

    // MARK: The clock

    private func tick(now: ContinuousClock.Instant, into out: inout [MediaTopologyAction<LegID>]) {
        ticks &+= 1
        decidePath()
        // What each joined leg received this tick (transcoding), for a recording.
        var heard: [(from: LegID, samples: [Int16])] = []
        for leg in joined {
            guard let slot = slots[leg] else { continue }
            let source = peer(of: leg)
            var eventSlot = false
            if slot.events != nil, let packet = slot.events?.tick(timestamp: slot.core.nextRTPTimestamp) {
                eventSlot = true
                let sent = slot.core.sendTelephoneEvent(packet.event, eventTimestamp: packet.timestamp, marker: packet.marker, now: now)
                if !sent.isEmpty { slot.counters.telephoneEventPacketsSent &+= 1 }
                out += translate(sent, on: leg, now: now)
            }
            switch path {
            case .transcode:
                guard let source else {
                    slot.core.skipAudioFrame()
                    continue
                }
                // Played every tick, sent or not, so the other leg's buffer keeps its pace.
                let samples = source.slot.core.playout(now: now)
                if recording != nil { heard.append((source.id, samples)) }
                if eventSlot {
                    slot.core.skipAudioFrame()
                    slot.counters.audioLeftOutForEvents &+= 1
                    continue
                }
                if isSilenced { slot.counters.audioLeftOutForHold &+= 1 }
                do {
                    let frame = isSilenced ? [Int16](repeating: 0, count: samples.count) : samples
                    let sent = try slot.core.sendAudio(AudioFrame(samples: frame, sampleRate: AudioPayloadCodec.interfaceRate), now: now)
                    if !sent.isEmpty {
                        slot.counters.framesTranscoded &+= 1
                        out.append(.forwarded(from: source.id, to: leg))
                    }
                    out += translate(sent, on: leg, now: now)
                } catch {
                    slot.counters.encodeFailures &+= 1
                }
            case .relay, .undecided:
                // Keeps the stream's clock going through the source's silences, so an event
                // that begins then gets a timestamp of its own.
                if eventSlot || !slot.relayedSinceTick { slot.core.skipAudioFrame() }
                slot.relayedSinceTick = false
            }
        }
        if let recording, path == .transcode, heard.count == 2 {
            let caller = heard.first { $0.from == recording.caller }
            let other = heard.first { $0.from != recording.caller }
            if let caller, let other {
                recordedTicks &+= 1
                recording.sink.record(caller: caller.samples, other: other.samples)
            }
        }
    }

    private func stopClock() {
        skippedBeforeClock &+= pacer?.skippedTicks ?? 0
        pacer = nil
    }

    private func note(_ now: ContinuousClock.Instant) {
        if lastNow.map({ now > $0 }) ?? true { lastNow = now }
    }

    // MARK: Relay or transcode

    /// Once two legs are joined and negotiated: relay when their codecs match, else
    /// transcode; each leg's mode follows.
    private func decidePath() {
        guard path == .undecided, joined.count == 2, let a = slots[joined[0]], let b = slots[joined[1]],
              let codecA = a.core.statistics.codec, let codecB = b.core.statistics.codec else { return }
        let relay = configuration.relayWhenCodecsMatch && codecA == codecB && recording == nil
        a.core.setMediaMode(relay ? .forward : .decode)
        b.core.setMediaMode(relay ? .forward : .decode)
        path = relay ? .relay : .transcode
    }

    /// A joined leg left: the one that stays transcodes again until a new pair decides.
    private func undecide() {
        path = .undecided
        for leg in joined { slots[leg]?.core.setMediaMode(.decode) }
    }

    /// The other joined leg, when `leg` is one of two joined legs.
    private func peer(of leg: LegID) -> (id: LegID, slot: Slot)? {
        guard joined.count == 2, let index = joined.firstIndex(of: leg) else { return nil }
        let other = joined[1 - index]
        return slots[other].map { (other, $0) }
    }

    private func relay(_ packet: RTPPacket, from leg: LegID, now: ContinuousClock.Instant, into out: inout [MediaTopologyAction<LegID>]) {
        guard path == .relay, let peer = peer(of: leg) else { return }
        if isSilenced {
            peer.slot.counters.audioLeftOutForHold &+= 1
            return
        }
        if peer.slot.events?.isSending == true {
            peer.slot.counters.audioLeftOutForEvents &+= 1
            return
        }
        // A relayed packet yields only sends, never another received packet.
        let relayed = peer.slot.core.relay(packet, now: now)
        if !relayed.isEmpty {
            peer.slot.counters.packetsRelayed &+= 1
            peer.slot.relayedSinceTick = true
            out.append(.forwarded(from: leg, to: peer.id))
        }
        out += translate(relayed, on: peer.id, now: now)
    }

    // MARK: Telephone events

    private func makeGenerator(for slot: Slot) -> Bool {
        if slot.events != nil { return true }
        guard let clockRate = slot.core.telephoneEventClockRate else { return false }
        slot.events = TelephoneEventGenerator(
            clockRate: clockRate, tick: Self.tick, toneDuration: configuration.toneDuration, gap: configuration.toneGap,
            maximumOpenDuration: configuration.maximumForwardedEventDuration, maximumQueued: configuration.maximumQueuedEvents)
        return true
    }

    /// An event received on `leg` goes on to the other joined leg, its duration moved from
    /// `leg`'s telephone-event clock to the other's.
    private func forward(_ event: TelephoneEvent, timestamp: UInt32, from leg: LegID) {
        guard let source = slots[leg] else { return }
        let isNewEvent = source.lastEventKey != timestamp
        source.lastEventKey = timestamp
        guard let peer = peer(of: leg) else { return }
        guard event.event <= 15, let sourceRate = source.core.telephoneEventClockRate, makeGenerator(for: peer.slot),
              let targetRate = peer.slot.events?.clockRate else {
            if isNewEvent { peer.slot.counters.eventsNotForwarded &+= 1 }
            return
        }
        let accepted: Bool
        if event.isEnd {
            let duration = UInt32(clamping: (UInt64(event.duration) * UInt64(targetRate) + UInt64(sourceRate) / 2) / UInt64(sourceRate))
            accepted = peer.slot.events?.forwardEnd(event: event.event, volume: event.volume, key: timestamp, duration: duration) ?? false
        } else {
            accepted = peer.slot.events?.forwardBegin(event: event.event, volume: event.volume, key: timestamp) ?? false
        }
        guard isNewEvent else { return }
        if accepted { peer.slot.counters.eventsForwarded &+= 1 } else { peer.slot.counters.eventsNotForwarded &+= 1 }
    }

    // MARK: Actions

    /// RTP or RTCP by its first two bytes (RFC 7983; RFC 5761 §4 for RTCP's packet types).
    private static func isRTP(_ first: UInt8?, _ second: UInt8?) -> Bool {
        guard let first, let second else { return false }
        return (128...191).contains(first) && !(192...223).contains(second)
    }

    /// A decode-mode leg takes RTP into its jitter buffer without an action: one that it
    /// did not drop counts as received media, as the relay's packets do.
    private func receivedMedia(_ isRTP: Bool, _ actions: [MediaLegAction], on leg: LegID) -> [MediaTopologyAction<LegID>] {
        guard isRTP, !actions.contains(where: { if case .dropped = $0 { true } else { false } }) else { return [] }
        return [.receivedMedia(leg: leg)]
    }

    private func translate(_ actions: [MediaLegAction], on leg: LegID, now: ContinuousClock.Instant) -> [MediaTopologyAction<LegID>] {
        var out: [MediaTopologyAction<LegID>] = []
        out.reserveCapacity(actions.count)
        for action in actions {
            switch action {
            case .send(let bytes, let from, let to):
                out.append(.send(leg: leg, bytes: bytes, from: from, to: to))
            case .stateChanged(let state):
                out.append(.stateChanged(leg: leg, state))
            case .receivedRTP(let packet):
                out.append(.receivedMedia(leg: leg))
                relay(packet, from: leg, now: now, into: &out)
            case .receivedTelephoneEvent(let event, let timestamp):
                out.append(.receivedTelephoneEvent(leg: leg, event, timestamp: timestamp))
                forward(event, timestamp: timestamp, from: leg)
            case .dropped(let reason, let from, let detail):
                slots[leg]?.counters.datagramsDropped &+= 1
                out.append(.dropped(leg: leg, reason, from: from, detail: detail))
            }
        }
        return out
    }
}
