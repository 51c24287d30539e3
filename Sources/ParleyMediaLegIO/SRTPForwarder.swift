public import ParleyNetCore
public import ParleySRTP

/// The forwarding core of a relay that anchors a call between two SRTP legs: a packet from
/// one leg's remote peer is authenticated and decrypted with that leg's inbound session,
/// encrypted again with the other leg's outbound session, and sent to the other leg's peer.
///
/// Routes are keyed by the source address of a bound remote peer (the address ICE bound the
/// leg to). All the work happens in place in the caller's receive buffer:
///
/// ```
///  from A ──► [ SRTP  | tag A ]                 forward(buffer:length:from:)
///             unprotect (A inbound)   ──► [ RTP ]             replay check, auth check
///             protect   (B outbound)  ──► [ SRTP  | tag B ]   may grow: tag B > tag A
///  to B   ◄──
/// ```
///
/// Only RTP and RTCP are forwarded (RFC 7983 first byte 128-191); RTCP is told from RTP by
/// its packet type (RFC 5761 §4) and goes through the SRTCP operations. STUN and DTLS come
/// back as ``Verdict/notMedia(_:)`` for the caller to hand to the leg's ICE or DTLS. A packet
/// that fails authentication or the replay check is dropped and counted, never forwarded.
///
/// Not `Sendable` and not thread-safe (libsrtp sessions are not): keep a forwarder on the
/// I/O thread that owns its socket.
public final class SRTPForwarder {
    /// What to do with one received datagram.
    public enum Verdict: Hashable, Sendable {
        /// Send the first `length` bytes of the buffer to `destination`.
        case forward(length: Int, destination: SocketAddress)
        /// Not RTP or RTCP (STUN or DTLS): hand the datagram, untouched, to the leg.
        case notMedia(DatagramKind)
        /// Dropped, and counted under `reason`.
        case drop(DropReason)
    }

    /// Why a datagram was dropped.
    public enum DropReason: String, Hashable, Sendable, Codable {
        /// Empty, or a first byte outside RFC 7983's STUN, DTLS and RTP/RTCP ranges.
        case unknownKind
        /// RTP or RTCP from an address no route starts at.
        case unknownSource
        /// The authentication tag did not verify (forged, corrupted, other keys).
        case authFailure
        /// Already seen, or older than the replay window (RFC 3711 §3.3.2).
        case replay
        /// Too short for its header and tag, or otherwise refused by the inbound session.
        case malformed
        /// The buffer has no room for the outbound tag (or holds fewer bytes than `length`).
        case noRoom
        /// The outbound session refused to protect (e.g. the same sequence number twice, or
        /// its master key reached its packet limit).
        case protectFailure
    }

    /// What a route (or the whole forwarder) has done.
    public struct Counters: Hashable, Sendable, Codable {
        /// RTP packets forwarded.
        public var forwardedRTP: UInt64 = 0
        /// RTCP packets forwarded.
        public var forwardedRTCP: UInt64 = 0
        /// Dropped: authentication failed.
        public var authFailures: UInt64 = 0
        /// Dropped: replayed or too old.
        public var replays: UInt64 = 0
        /// Dropped: truncated or refused by the inbound session for another reason.
        public var malformed: UInt64 = 0
        /// Dropped: no room for the outbound tag.
        public var noRoom: UInt64 = 0
        /// Dropped: the outbound session refused to protect.
        public var protectFailures: UInt64 = 0

        public init() {}

        /// Packets forwarded, RTP and RTCP.
        public var forwarded: UInt64 { forwardedRTP &+ forwardedRTCP }
        /// Packets dropped after their route was found.
        public var dropped: UInt64 { authFailures &+ replays &+ malformed &+ noRoom &+ protectFailures }

        mutating func count(_ reason: DropReason) {
            switch reason {
            case .authFailure: authFailures &+= 1
            case .replay: replays &+= 1
            case .malformed: malformed &+= 1
            case .noRoom: noRoom &+= 1
            case .protectFailure: protectFailures &+= 1
            case .unknownKind, .unknownSource: break
            }
        }

        static func + (a: Counters, b: Counters) -> Counters {
            var sum = a
            sum.forwardedRTP &+= b.forwardedRTP
            sum.forwardedRTCP &+= b.forwardedRTCP
            sum.authFailures &+= b.authFailures
            sum.replays &+= b.replays
            sum.malformed &+= b.malformed
            sum.noRoom &+= b.noRoom
            sum.protectFailures &+= b.protectFailures
            return sum
        }
    }

    /// One direction of a bridge: packets from `source` go out to `destination`.
    private final class Route {
        let inbound: SRTPSession
        let outbound: SRTPSession
        let destination: SocketAddress
        var counters = Counters()

        init(inbound: SRTPSession, outbound: SRTPSession, destination: SocketAddress) {
            self.inbound = inbound
            self.outbound = outbound
            self.destination = destination
        }
    }

    private var routes: [SocketAddress: Route] = [:]
    /// Datagrams dropped before a route was found (they belong to no route).
    public private(set) var unknownKindDrops: UInt64 = 0
    /// RTP/RTCP datagrams from addresses no route starts at.
    public private(set) var unknownSourceDrops: UInt64 = 0
    /// STUN and DTLS datagrams handed back to the caller.
    public private(set) var notMediaCount: UInt64 = 0

    public init() {}

    /// Forwards packets from `source` to `destination`: unprotected with `inbound` (the
    /// source leg's receive session), protected with `outbound` (the other leg's send
    /// session). Replaces any route from `source`.
    ///
    /// - Precondition: `inbound` is an inbound session and `outbound` an outbound one
    ///   (programming errors, not input).
    public func addRoute(from source: SocketAddress, inbound: SRTPSession, outbound: SRTPSession, to destination: SocketAddress) {
        precondition(inbound.direction == .inbound && outbound.direction == .outbound,
                     "a route unprotects with an inbound session and protects with an outbound one")
        routes[source] = Route(inbound: inbound, outbound: outbound, destination: destination)
    }

    /// Bridges two anchored legs both ways: `a`'s remote peer to `b`'s and back. Each leg is
    /// its remote peer's address with the leg's receive and send sessions.
    public func bridge(
        _ a: (remote: SocketAddress, inbound: SRTPSession, outbound: SRTPSession),
        _ b: (remote: SocketAddress, inbound: SRTPSession, outbound: SRTPSession)
    ) {
        addRoute(from: a.remote, inbound: a.inbound, outbound: b.outbound, to: b.remote)
        addRoute(from: b.remote, inbound: b.inbound, outbound: a.outbound, to: a.remote)
    }

    /// Forgets the route from `source`; returns whether there was one.
    @discardableResult
    public func removeRoute(from source: SocketAddress) -> Bool {
        routes.removeValue(forKey: source) != nil
    }

    /// Number of routes.
    public var routeCount: Int { routes.count }

    /// The destination packets from `source` go to, if a route starts there.
    public func destination(from source: SocketAddress) -> SocketAddress? { routes[source]?.destination }

    /// What the route from `source` has done, if there is one.
    public func counters(from source: SocketAddress) -> Counters? { routes[source]?.counters }

    /// The sum over all current routes.
    public var totals: Counters { routes.values.reduce(Counters()) { $0 + $1.counters } }

    /// Forwards the datagram in the first `length` bytes of `buffer`, received from `source`.
    ///
    /// On ``Verdict/forward(length:destination:)`` the buffer holds the packet to send. On
    /// ``Verdict/notMedia(_:)`` it is untouched. On ``Verdict/drop(_:)`` its contents are
    /// unspecified: never send them. `buffer` should have room for the largest growth,
    /// `SRTPProfile.rtcpTrailerLength` bytes (20 for the profiles here), past `length`.
    public func forward(buffer: UnsafeMutableRawBufferPointer, length: Int, from source: SocketAddress) -> Verdict {
        guard length <= buffer.count else {
            // A caller bug rather than hostile input, but never read past the buffer.
            routes[source]?.counters.count(.noRoom)
            return .drop(.noRoom)
        }
        guard length > 0 else {
            unknownKindDrops &+= 1
            return .drop(.unknownKind)
        }
        switch DatagramKind.classify(firstByte: buffer[0]) {
        case nil:
            unknownKindDrops &+= 1
            return .drop(.unknownKind)
        case .stun?:
            notMediaCount &+= 1
            return .notMedia(.stun)
        case .dtls?:
            notMediaCount &+= 1
            return .notMedia(.dtls)
        case .rtp?:
            break
        }
        guard let route = routes[source] else {
            unknownSourceDrops &+= 1
            return .drop(.unknownSource)
        }
        // RFC 5761 §4: a second byte of 192-223 is an RTCP packet type (RTP avoids payload
        // types 64-95 on a muxed port for this reason). One byte is no packet at all.
        guard length >= 2 else {
            route.counters.count(.malformed)
            return .drop(.malformed)
        }
        let rtcp = (192...223).contains(buffer[1])
        let result = rtcp ? forwardRTCP(route, buffer, length) : forwardRTP(route, buffer, length)
        switch result {
        case .sent(let newLength):
            if rtcp { route.counters.forwardedRTCP &+= 1 } else { route.counters.forwardedRTP &+= 1 }
            return .forward(length: newLength, destination: route.destination)
        case .dropped(let reason):
            route.counters.count(reason)
            return .drop(reason)
        }
    }

    private func forwardRTP(_ route: Route, _ buffer: UnsafeMutableRawBufferPointer, _ length: Int) -> Step {
        // Checked before unprotecting, so a packet that could not be sent on does not use up
        // its index in the inbound replay window.
        let needed = length - route.inbound.profile.rtpTrailerLength + route.outbound.profile.rtpTrailerLength
        guard needed <= buffer.count else { return .dropped(.noRoom) }
        let plain: Int
        do throws(SRTPError) { plain = try route.inbound.unprotect(buffer: buffer, length: length) } catch { return .dropped(Self.reason(error)) }
        do throws(SRTPError) { return .sent(try route.outbound.protect(buffer: buffer, length: plain)) } catch { return .dropped(.protectFailure) }
    }

    private func forwardRTCP(_ route: Route, _ buffer: UnsafeMutableRawBufferPointer, _ length: Int) -> Step {
        let needed = length - route.inbound.profile.rtcpTrailerLength + route.outbound.profile.rtcpTrailerLength
        guard needed <= buffer.count else { return .dropped(.noRoom) }
        let plain: Int
        do throws(SRTPError) { plain = try route.inbound.unprotectRTCP(buffer: buffer, length: length) } catch { return .dropped(Self.reason(error)) }
        do throws(SRTPError) { return .sent(try route.outbound.protectRTCP(buffer: buffer, length: plain)) } catch { return .dropped(.protectFailure) }
    }

    /// How one packet's trip through the two sessions ended.
    private enum Step {
        case sent(Int)
        case dropped(DropReason)
    }

    private static func reason(_ error: SRTPError) -> DropReason {
        switch error.kind {
        case .authFailure: .authFailure
        case .replayOld, .replayFail: .replay
        default: .malformed
        }
    }
}
