public import ParleyRTP

/// Paces RFC 4733 telephone events onto one outgoing RTP stream, sans-I/O: at most one
/// packet per 20 ms tick, for digits to send (a fixed duration each, then a gap) and for
/// events forwarded from another stream as they begin and end there.
///
/// Each event is a run of packets sharing the RTP timestamp the stream had when it began
/// (RFC 4733 §2.5.1.2), the first with the marker bit, the duration growing by one tick
/// per packet (in this stream's telephone-event clock); its final packet, with the E bit
/// and the whole duration, goes out three times a tick apart (§2.5.1.4), so one lost copy
/// does not lose the end. While an event is on the wire (`isSending`) its ticks belong to
/// it: the sender leaves the audio out (`MediaLegCore.skipAudioFrame`), so the far end
/// plays the event and not also the tone it stands for.
///
/// An event forwarded from another stream has no length until its end arrives there: it
/// grows a tick at a time until `forwardEnd` gives its duration, and is ended by the
/// generator with the duration reached when its end never comes (`maximumOpenTicks`, or
/// the 16-bit duration field full: 1.36 s at 48 kHz; long events are not split into the
/// segments RFC 4733 provides for them), or when the next event from the same source
/// begins.
public struct TelephoneEventGenerator: Sendable {
    /// One packet to send: `MediaLegCore.sendTelephoneEvent(event, eventTimestamp:
    /// timestamp, marker: marker, now:)`.
    public struct Packet: Sendable, Hashable {
        public var event: TelephoneEvent
        public var timestamp: UInt32
        public var marker: Bool
    }

    /// The stream's telephone-event clock rate (8000 for G.711, 48000 for Opus).
    public let clockRate: UInt32
    /// Duration units in one tick.
    public let unitsPerTick: UInt32
    /// Packets of a digit's tone before its end (its duration in ticks).
    public let toneTicks: Int
    /// Ticks from a digit's end to the next event's start.
    public let gapTicks: Int
    /// Ticks a forwarded event may last without its end before the generator ends it.
    public let maximumOpenTicks: Int
    /// Events waiting (digits and forwarded events) at most; more are refused.
    public let maximumQueued: Int

    private enum Length: Sendable, Hashable {
        /// The whole duration is known, in units.
        case fixed(UInt32)
        /// A forwarded event still going on at its source, named by its source timestamp.
        case open(key: UInt32)
    }

    private struct Pending: Sendable {
        var code: UInt8
        var volume: UInt8
        var length: Length
        var gapTicks: Int
        /// A forwarded event whose first packets never arrived: only its end is sent.
        var endOnly: Bool
    }

    private struct Current: Sendable {
        var pending: Pending
        var timestamp: UInt32
        /// The duration the last packet carried.
        var sent: UInt32 = 0
        var packets = 0
        var endsSent = 0
    }

    private var queue: [Pending] = []
    private var current: Current?
    private var gapRemaining = 0
    /// The source timestamps of the last forwarded events, so a late end of an event the
    /// generator already closed is not sent again as a new one.
    private var recentKeys: [UInt32] = []

    /// Packets sent so far.
    public private(set) var packetsSent: UInt64 = 0

    /// - Parameters:
    ///   - clockRate: the stream's telephone-event clock rate.
    ///   - tick: how often `tick(timestamp:)` is called (20 ms, the packet interval).
    ///   - toneDuration, gap: a digit's tone and the silence after it (rounded up to ticks),
    ///     as `MediaLeg.sendDTMF` paces them.
    ///   - maximumOpenDuration: how long a forwarded event may go on without its end.
    ///   - maximumQueued: the most events waiting at once.
    public init(clockRate: UInt32, tick: Duration = .milliseconds(20), toneDuration: Duration = .milliseconds(100),
                gap: Duration = .milliseconds(70), maximumOpenDuration: Duration = .seconds(3), maximumQueued: Int = 80) {
        self.clockRate = max(clockRate, 50)
        let tick = max(tick, .milliseconds(1))
        unitsPerTick = max(1, UInt32(clamping: Int((Double(self.clockRate) * (tick / .seconds(1))).rounded())))
        func ticks(_ duration: Duration) -> Int { max(1, Int((duration / tick).rounded(.up))) }
        toneTicks = ticks(toneDuration)
        gapTicks = ticks(gap)
        maximumOpenTicks = ticks(maximumOpenDuration)
        self.maximumQueued = max(1, maximumQueued)
    }

    /// An event is on the wire (its updates or its end's copies): the tick is its.
    public var isSending: Bool { current != nil }

    /// Nothing on the wire, nothing waiting.
    public var isIdle: Bool { current == nil && queue.isEmpty }

    /// Queues one tone per event code (0-15 for DTMF), each `toneTicks` long and followed
    /// by `gapTicks` of silence; all or none: false when they do not fit the queue.
    public mutating func enqueueDigits(_ codes: [UInt8], volume: UInt8 = 10) -> Bool {
        guard queue.count + codes.count <= maximumQueued else { return false }
        let duration = min(UInt32(toneTicks) * unitsPerTick, UInt32(UInt16.max))
        for code in codes {
            queue.append(Pending(code: code, volume: min(volume, 63), length: .fixed(duration), gapTicks: gapTicks, endOnly: false))
        }
        return true
    }

    /// An event began on the source stream (`key`: its RTP timestamp there). An open event
    /// from that source that did not end (its end packets lost) is closed first. False when
    /// the queue is full (the event is not sent).
    public mutating func forwardBegin(event code: UInt8, volume: UInt8, key: UInt32) -> Bool {
        if case .open(key) = current?.pending.length { return true }
        if queue.contains(where: { $0.length == .open(key: key) }) { return true }
        closeOpenEvents()
        guard queue.count < maximumQueued else { return false }
        remember(key)
        queue.append(Pending(code: code, volume: min(volume, 63), length: .open(key: key), gapTicks: 0, endOnly: false))
        return true
    }

    /// The event `key` ended on the source stream after `duration` units of this stream's
    /// clock. An end whose beginning never arrived is sent as an end alone. False when the
    /// queue is full.
    public mutating func forwardEnd(event code: UInt8, volume: UInt8, key: UInt32, duration: UInt32) -> Bool {
        let total = min(max(duration, 1), UInt32(UInt16.max))
        if case .open(key) = current?.pending.length {
            current?.pending.length = .fixed(total)
            return true
        }
        if let index = queue.firstIndex(where: { $0.length == .open(key: key) }) {
            queue[index].length = .fixed(total)
            return true
        }
        // Closed already by the generator (its end came too late): nothing more to send.
        if recentKeys.contains(key) { return true }
        guard queue.count < maximumQueued else { return false }
        remember(key)
        queue.append(Pending(code: code, volume: min(volume, 63), length: .fixed(total), gapTicks: 0, endOnly: true))
        return true
    }

    /// Ends the forwarded events still open (their source's next event began, or the
    /// source is gone): the one on the wire with the duration it reached, those waiting
    /// with a digit's length (they began: a key was pressed).
    public mutating func closeOpenEvents() {
        if case .open = current?.pending.length, let sent = current?.sent {
            current?.pending.length = .fixed(max(sent, 1))
        }
        let tone = min(UInt32(toneTicks) * unitsPerTick, UInt32(UInt16.max))
        for index in queue.indices {
            if case .open = queue[index].length { queue[index].length = .fixed(tone) }
        }
    }

    private mutating func remember(_ key: UInt32) {
        recentKeys.append(key)
        if recentKeys.count > 8 { recentKeys.removeFirst() }
    }

    /// Drops everything waiting and on the wire (the stream is closing).
    public mutating func reset() {
        queue.removeAll()
        current = nil
        gapRemaining = 0
    }

    /// The packet for this tick, if any. `timestamp` is the RTP timestamp the stream's next
    /// audio frame would carry: where an event that begins now starts.
    public mutating func tick(timestamp: UInt32) -> Packet? {
        if current == nil {
            if gapRemaining > 0 {
                gapRemaining -= 1
                return nil
            }
            guard !queue.isEmpty else { return nil }
            current = Current(pending: queue.removeFirst(), timestamp: timestamp)
        }
        guard var event = current else { return nil }
        let marker = event.packets == 0
        event.packets += 1
        if case .open = event.pending.length, event.packets > maximumOpenTicks || event.sent >= UInt32(UInt16.max) {
            event.pending.length = .fixed(max(event.sent, 1))
        }
        let packet: Packet
        if case .fixed(let total) = event.pending.length, event.pending.endOnly || event.sent >= total {
            // Never shorter than what the updates already said.
            let duration = UInt16(clamping: max(total, event.sent))
            event.sent = UInt32(duration)
            event.endsSent += 1
            packet = Packet(
                event: TelephoneEvent(event: event.pending.code, isEnd: true, volume: event.pending.volume, duration: duration),
                timestamp: event.timestamp, marker: marker)
            if event.endsSent >= 3 {
                current = nil
                gapRemaining = max(0, event.pending.gapTicks - 3)
                packetsSent &+= 1
                return packet
            }
        } else {
            var limit = UInt32(UInt16.max)
            if case .fixed(let total) = event.pending.length { limit = min(limit, total) }
            event.sent = min(event.sent + unitsPerTick, limit)
            packet = Packet(
                event: TelephoneEvent(event: event.pending.code, volume: event.pending.volume, duration: UInt16(clamping: event.sent)),
                timestamp: event.timestamp, marker: marker)
        }
        current = event
        packetsSent &+= 1
        return packet
    }
}
