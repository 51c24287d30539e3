public import ParleyICECore
import ParleyRTP

/// The topology of a two-party call anchored on the server: legs in `.forward` mode, and
/// each authenticated RTP packet from one joined leg sent on by the other joined leg with
/// its own SSRC, payload type and numbering (`MediaLegCore.relay`), never decoded.
///
/// Any number of legs may exist (a call rings several devices, each with a leg of its own);
/// at most two are joined, and only between two joined legs do packets flow. A leg that is
/// removed leaves the bridge, so another may join in its place.
public final class RelayBridge<LegID: Hashable & Sendable>: MediaTopology {
    /// A class, because a `MediaLegCore` cannot be copied into a collection.
    private final class Slot {
        var core: MediaLegCore
        init(core: consuming MediaLegCore) { self.core = core }
    }

    private var slots: [LegID: Slot] = [:]
    /// The joined legs, in the order they joined; two at most.
    public private(set) var joined: [LegID] = []

    public init() {}

    public func mediaMode(for leg: LegID) -> MediaLegMode { .forward }

    public func add(_ leg: LegID, core: consuming MediaLegCore) {
        slots[leg] = Slot(core: core)
    }

    public func remove(_ leg: LegID, now: ContinuousClock.Instant) -> (actions: [MediaTopologyAction<LegID>], statistics: MediaLegStatistics)? {
        guard let slot = slots.removeValue(forKey: leg) else { return nil }
        joined.removeAll { $0 == leg }
        let actions = translate(slot.core.close(now: now), on: leg, now: now)
        return (actions, slot.core.statistics)
    }

    public func join(_ leg: LegID) throws(MediaTopologyError) {
        guard slots[leg] != nil else { throw MediaTopologyError(.unknownLeg, "no leg \(leg) to join") }
        if joined.contains(leg) { return }
        guard joined.count < 2 else { throw MediaTopologyError(.full, "a relay bridge joins two legs; \(joined) already are") }
        joined.append(leg)
    }

    public var legIDs: [LegID] { Array(slots.keys) }

    public func withLeg<Result, Failure: Error>(_ leg: LegID, _ body: (inout MediaLegCore) throws(Failure) -> Result) throws(Failure) -> Result? {
        guard let slot = slots[leg] else { return nil }
        return try body(&slot.core)
    }

    public func start(_ leg: LegID, now: ContinuousClock.Instant) throws(MediaLegError) -> [MediaTopologyAction<LegID>] {
        guard let slot = slots[leg] else { throw MediaLegError(.state, "no leg \(leg) to start") }
        return translate(try slot.core.start(now: now), on: leg, now: now)
    }

    public func receive(_ datagram: [UInt8], from source: ICETransportAddress, on leg: LegID, local: ICETransportAddress,
                        now: ContinuousClock.Instant) -> [MediaTopologyAction<LegID>] {
        guard let slot = slots[leg] else { return [] }
        return translate(slot.core.receive(datagram, from: source, on: local, now: now), on: leg, now: now)
    }

    /// The relay's per-packet path: RTP of the negotiated codec from a joined leg is
    /// decrypted in the buffer with that leg's keys, rewritten onto the other joined leg's
    /// stream and encrypted with its keys, in place (`MediaLegCore.receive(buffer:...)`,
    /// then `relay(buffer:length:now:)`); the owner sends it from the buffer.
    public func receive(buffer: UnsafeMutableRawBufferPointer, length: Int, from source: ICETransportAddress, on leg: LegID,
                        local: ICETransportAddress, now: ContinuousClock.Instant) -> MediaTopologyReceipt<LegID> {
        guard let slot = slots[leg] else { return MediaTopologyReceipt(actions: []) }
        switch slot.core.receive(buffer: buffer, length: length, from: source, on: local, now: now) {
        case .handled(let actions):
            return MediaTopologyReceipt(actions: translate(actions, on: leg, now: now))
        case .media(let plain):
            // A peer that wraps in RED needs a bigger packet than the buffer holds.
            if let peer = peer(of: leg), peer.slot.core.sendsRedundancy {
                guard let packet = try? RTPPacket(parsing: [UInt8](UnsafeRawBufferPointer(rebasing: buffer[..<plain]))) else {
                    return MediaTopologyReceipt(actions: [.receivedMedia(leg: leg)])
                }
                let relayed = peer.slot.core.relay(packet, now: now)
                var actions: [MediaTopologyAction<LegID>] = [.receivedMedia(leg: leg)]
                if !relayed.isEmpty { actions.append(.forwarded(from: leg, to: peer.id)) }
                return MediaTopologyReceipt(actions: actions + translate(relayed, on: peer.id, now: now))
            }
            guard let peer = peer(of: leg), let sent = peer.slot.core.relay(buffer: buffer, length: plain, now: now) else {
                return MediaTopologyReceipt(actions: [.receivedMedia(leg: leg)])
            }
            return MediaTopologyReceipt(
                actions: [.receivedMedia(leg: leg), .forwarded(from: leg, to: peer.id)],
                send: .init(leg: peer.id, length: sent.length, from: sent.from, to: sent.to))
        }
    }

    public func handleTimeout(of leg: LegID, now: ContinuousClock.Instant) -> [MediaTopologyAction<LegID>] {
        guard let slot = slots[leg] else { return [] }
        return translate(slot.core.handleTimeout(now: now), on: leg, now: now)
    }

    public func nextDeadline(of leg: LegID) -> ContinuousClock.Instant? { slots[leg]?.core.nextDeadline }

    /// The other joined leg, when `leg` is one of two joined legs.
    private func peer(of leg: LegID) -> (id: LegID, slot: Slot)? {
        guard joined.count == 2, let index = joined.firstIndex(of: leg) else { return nil }
        let other = joined[1 - index]
        return slots[other].map { (other, $0) }
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
                guard let peer = peer(of: leg) else { continue }
                // A relayed packet yields only sends, never another received packet.
                let relayed = peer.slot.core.relay(packet, now: now)
                if !relayed.isEmpty { out.append(.forwarded(from: leg, to: peer.id)) }
                out += translate(relayed, on: peer.id, now: now)
            case .receivedTelephoneEvent(let event, let timestamp):
                out.append(.receivedTelephoneEvent(leg: leg, event, timestamp: timestamp))
            case .dropped(let reason, let from, let detail):
                out.append(.dropped(leg: leg, reason, from: from, detail: detail))
            }
        }
        return out
    }
}
