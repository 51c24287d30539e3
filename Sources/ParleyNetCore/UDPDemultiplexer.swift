/// The protocol of a datagram on a media port, from its first byte (RFC 7983 § 7, which
/// updates RFC 5764 § 5.1.2):
///
/// ```
///                 +----------------+
///                 |        [0..3] -+--> STUN
///                 |      [16..19] -+--> ZRTP      (dropped here)
///  packet -->     |      [20..63] -+--> DTLS
///                 |      [64..79] -+--> TURN Channel (dropped here)
///                 |    [128..191] -+--> RTP/RTCP
///                 +----------------+    anything else: dropped
/// ```
public enum DatagramKind: Hashable, Sendable {
    case stun
    case dtls
    /// RTP or RTCP (SRTP/SRTCP on the wire); RFC 5761 § 4 tells them apart by payload type.
    case rtp

    /// Classifies by first byte; nil for empty datagrams and every range Parley does not serve.
    public static func classify(firstByte: UInt8) -> DatagramKind? {
        switch firstByte {
        case 0...3: return .stun
        case 20...63: return .dtls
        case 128...191: return .rtp
        default: return nil
        }
    }

    /// Classifies a datagram; nil when it is empty or of an unserved kind.
    public static func classify(_ datagram: UnsafeRawBufferPointer) -> DatagramKind? {
        guard let first = datagram.first else { return nil }
        return classify(firstByte: first)
    }
}

/// Routes the datagrams of one shared UDP port to the call legs using it. Pure logic, no
/// socket: the I/O loop asks ``route(_:from:)`` for every received datagram.
///
/// A leg is found by the datagram's remote address, once bound with ``bind(_:to:)``. Before
/// that, only STUN may come in from an unknown address: ICE matches the USERNAME of the
/// Binding request to a leg and then binds the address (RFC 8445 § 7.3: a check from a new
/// address is a peer-reflexive candidate). Anything else from an unknown address is dropped
/// and counted, as are datagrams whose first byte is outside RFC 7983's ranges.
///
/// Not thread-safe (a value type): keep one per socket, on the socket's loop.
public struct UDPDemultiplexer<LegID: Hashable & Sendable>: Sendable {
    /// Where a datagram goes.
    public enum Route: Hashable, Sendable {
        /// To the leg bound to the source address.
        case leg(LegID, DatagramKind)
        /// STUN from an address no leg is bound to: hand it to ICE.
        case unboundSTUN
        /// Dropped (and counted).
        case drop(DropReason)
    }

    /// Why a datagram was dropped.
    public enum DropReason: Hashable, Sendable {
        /// Empty datagram.
        case empty
        /// First byte outside the STUN, DTLS and RTP/RTCP ranges.
        case unknownKind
        /// DTLS or RTP from an address no leg is bound to.
        case unknownSource
    }

    /// Counters since creation.
    public struct Counters: Hashable, Sendable {
        public var routed = 0
        public var unboundSTUN = 0
        public var droppedEmpty = 0
        public var droppedUnknownKind = 0
        public var droppedUnknownSource = 0
    }

    private var legsByAddress: [SocketAddress: LegID] = [:]
    private var addressesByLeg: [LegID: Set<SocketAddress>] = [:]
    /// What happened to the datagrams routed so far.
    public private(set) var counters = Counters()

    public init() {}

    /// Routes a datagram that arrived from `source`, and counts it.
    public mutating func route(_ datagram: UnsafeRawBufferPointer, from source: SocketAddress) -> Route {
        guard let first = datagram.first else {
            counters.droppedEmpty += 1
            return .drop(.empty)
        }
        return route(firstByte: first, from: source)
    }

    /// Routes a datagram by its first byte and source, and counts it.
    public mutating func route(firstByte: UInt8, from source: SocketAddress) -> Route {
        guard let kind = DatagramKind.classify(firstByte: firstByte) else {
            counters.droppedUnknownKind += 1
            return .drop(.unknownKind)
        }
        if let leg = legsByAddress[source] {
            counters.routed += 1
            return .leg(leg, kind)
        }
        if kind == .stun {
            counters.unboundSTUN += 1
            return .unboundSTUN
        }
        counters.droppedUnknownSource += 1
        return .drop(.unknownSource)
    }

    /// Sends datagrams from `address` to `leg` from now on. An address belongs to one leg:
    /// binding it again moves it. A leg may have several addresses (e.g. after an ICE restart).
    public mutating func bind(_ address: SocketAddress, to leg: LegID) {
        if let previous = legsByAddress.updateValue(leg, forKey: address), previous != leg {
            removeAddress(address, fromLeg: previous)
        }
        addressesByLeg[leg, default: []].insert(address)
    }

    /// Forgets `address`; its datagrams count as unknown again.
    public mutating func unbind(_ address: SocketAddress) {
        guard let leg = legsByAddress.removeValue(forKey: address) else { return }
        removeAddress(address, fromLeg: leg)
    }

    /// Forgets every address of `leg` (the leg closed).
    public mutating func unbindAll(of leg: LegID) {
        guard let addresses = addressesByLeg.removeValue(forKey: leg) else { return }
        for address in addresses { legsByAddress[address] = nil }
    }

    /// The leg `address` is bound to.
    public func leg(for address: SocketAddress) -> LegID? { legsByAddress[address] }

    /// The addresses bound to `leg`.
    public func addresses(of leg: LegID) -> Set<SocketAddress> { addressesByLeg[leg] ?? [] }

    /// Number of bound addresses.
    public var boundAddressCount: Int { legsByAddress.count }

    private mutating func removeAddress(_ address: SocketAddress, fromLeg leg: LegID) {
        addressesByLeg[leg]?.remove(address)
        if addressesByLeg[leg]?.isEmpty == true { addressesByLeg[leg] = nil }
    }
}
