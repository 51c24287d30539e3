public import ParleyICECore

/// What a call does with the media of its legs, sans-I/O: which legs exist, which take part
/// in the media, and what a packet arriving on one leg becomes on the others.
///
/// The owner (parleyd's media anchor) keeps everything that touches the system: ports,
/// sockets, timers, loops. It hands each datagram to `receive`, calls `handleTimeout` when a
/// leg's `nextDeadline` passes, and carries out the actions that come back. A topology owns
/// its legs' cores; `withLeg` reaches one for negotiation and statistics.
///
/// `RelayBridge` (two legs, packets forwarded undecoded) and `GatewayBridge` (two legs whose
/// codecs differ, transcoded on a 20 ms clock of its own, RFC 4733 events both ways)
/// implement it, as a mixer (N legs in `.decode` mode) will: legs come and go with
/// `add`/`remove`, `join` says which take part, and each leg's mode comes from
/// `mediaMode(for:)`. A topology with a clock of its own names its next tick in
/// `nextTopologyDeadline`, which the owner reads again after every call into the
/// topology, and runs it in `handleTopologyTimeout`; one without (the relay) keeps the
/// defaults, nil and nothing.
public protocol MediaTopology<LegID>: AnyObject {
    /// How the owner names a leg (for parleyd: caller, or callee by device).
    associatedtype LegID: Hashable & Sendable

    /// The mode a new leg must be configured with before it is added.
    func mediaMode(for leg: LegID) -> MediaLegMode

    /// Adds a leg, negotiated or not; a leg already there under `leg` is replaced (the
    /// owner closes the old one with `remove` first).
    func add(_ leg: LegID, core: consuming MediaLegCore)

    /// Closes and removes a leg; returns the goodbye datagrams to send and its final
    /// statistics, or nil when there is no such leg.
    func remove(_ leg: LegID, now: ContinuousClock.Instant) -> (actions: [MediaTopologyAction<LegID>], statistics: MediaLegStatistics)?

    /// From now on the leg takes part in the call's media.
    func join(_ leg: LegID) throws(MediaTopologyError)

    /// The legs, in no particular order.
    var legIDs: [LegID] { get }

    /// Runs `body` on the leg's core; nil when there is no such leg.
    func withLeg<Result, Failure: Error>(_ leg: LegID, _ body: (inout MediaLegCore) throws(Failure) -> Result) throws(Failure) -> Result?

    /// Starts the leg's ICE and DTLS once it is negotiated (`MediaLegCore.start`).
    func start(_ leg: LegID, now: ContinuousClock.Instant) throws(MediaLegError) -> [MediaTopologyAction<LegID>]

    /// One datagram that arrived on the leg's socket (`local`) from `source`.
    func receive(_ datagram: [UInt8], from source: ICETransportAddress, on leg: LegID, local: ICETransportAddress,
                 now: ContinuousClock.Instant) -> [MediaTopologyAction<LegID>]

    /// The same for a datagram in the first `length` bytes of the owner's receive buffer
    /// (with room past it for an SRTP tag): a topology that relays may decrypt and
    /// re-encrypt it there and ask for it to be sent from the buffer (`receipt.send`),
    /// with no copy. The default copies it out and calls `receive(_:from:on:local:now:)`.
    func receive(buffer: UnsafeMutableRawBufferPointer, length: Int, from source: ICETransportAddress, on leg: LegID,
                 local: ICETransportAddress, now: ContinuousClock.Instant) -> MediaTopologyReceipt<LegID>

    /// The leg's deadline passed (ICE, DTLS, RTCP, connect timeout).
    func handleTimeout(of leg: LegID, now: ContinuousClock.Instant) -> [MediaTopologyAction<LegID>]

    /// When to call `handleTimeout(of:now:)` for the leg next.
    func nextDeadline(of leg: LegID) -> ContinuousClock.Instant?

    /// When to call `handleTopologyTimeout(now:)` next: the topology's own clock (a
    /// gateway's or a mixer's 20 ms tick), apart from its legs' deadlines; nil when it has
    /// none now. An instant already past means at once. It may change after any call into
    /// the topology.
    var nextTopologyDeadline: ContinuousClock.Instant? { get }

    /// The topology's own deadline passed: the ticks that are due (audio decoded, encoded
    /// and sent, telephone events paced).
    func handleTopologyTimeout(now: ContinuousClock.Instant) -> [MediaTopologyAction<LegID>]
}

extension MediaTopology {
    /// A topology without a clock of its own: never.
    public var nextTopologyDeadline: ContinuousClock.Instant? { nil }

    public func handleTopologyTimeout(now: ContinuousClock.Instant) -> [MediaTopologyAction<LegID>] { [] }

    public func receive(buffer: UnsafeMutableRawBufferPointer, length: Int, from source: ICETransportAddress, on leg: LegID,
                        local: ICETransportAddress, now: ContinuousClock.Instant) -> MediaTopologyReceipt<LegID> {
        let datagram = [UInt8](UnsafeRawBufferPointer(rebasing: buffer[..<min(max(length, 0), buffer.count)]))
        return MediaTopologyReceipt(actions: receive(datagram, from: source, on: leg, local: local, now: now))
    }
}
