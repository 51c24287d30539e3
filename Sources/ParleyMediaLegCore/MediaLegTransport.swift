public import ParleyICECore

/// How a leg's packets reach its peer, separate from what the leg does with the media
/// (`MediaLegMode`). Sans-I/O like the core that owns it: datagrams, addresses and time in;
/// datagrams to send, events and a deadline out.
///
/// A transport answers four questions for its leg's core:
/// - where media goes (`mediaDestination`), once there is somewhere;
/// - whether RTP or RTCP from an address may be taken (`admit`), which is where ICE's
///   validated pairs or plain RTP's latching (and its refusal of injected packets) live;
/// - how packets are protected (`MediaLegProtection`, reported with `.protected`): SRTP keys
///   exported by DTLS, keys given by SDES, or none;
/// - what to do with the datagrams that are not media (STUN, DTLS) and with time.
///
/// `ICEDTLSTransport` (ICE-lite or full, DTLS-SRTP: a WebRTC leg) and `PlainRTPTransport`
/// (RTP to the SDP's address with symmetric latching: a SIP leg) are the two; the core
/// builds the one `MediaLegConfiguration.transport` names once offer/answer is done.
public protocol MediaLegTransport {
    /// Starts the transport (ICE checks, the DTLS server's wait; a plain RTP transport is up at once).
    mutating func start(now: ContinuousClock.Instant) -> [MediaLegTransportEvent]

    /// When `handleTimeout(now:)` must run next.
    var nextDeadline: ContinuousClock.Instant? { get }

    /// Retransmissions, consent, latching windows.
    mutating func handleTimeout(now: ContinuousClock.Instant) -> [MediaLegTransportEvent]

    /// A datagram whose first byte is not RTP/RTCP (RFC 7983: STUN 0-3, DTLS 20-63).
    mutating func receiveNonMedia(
        _ datagram: [UInt8], from source: ICETransportAddress, on local: ICETransportAddress, now: ContinuousClock.Instant
    ) -> [MediaLegTransportEvent]

    /// Whether an RTP (`isRTCP` false) or RTCP packet from `source` may be unprotected and
    /// taken. `.learn` asks the core to call `confirm(_:now:)` once the packet proved
    /// genuine (authenticated, or at least valid RTP of a negotiated payload type), so a
    /// forged or garbage packet can never move the leg's media.
    mutating func admit(from source: ICETransportAddress, isRTCP: Bool, now: ContinuousClock.Instant) -> MediaSourceAdmission

    /// A packet `admit` answered `.learn` for was genuine: media follows `source` now.
    mutating func confirm(_ source: ICETransportAddress, now: ContinuousClock.Instant)

    /// Where RTP goes now (our address, the peer's); nil while there is nowhere yet.
    var mediaDestination: (local: ICETransportAddress, remote: ICETransportAddress)? { get }

    /// Where RTCP goes now: the RTP destination with rtcp-mux, else the peer's RTCP port.
    var controlDestination: (local: ICETransportAddress, remote: ICETransportAddress)? { get }

    /// Ends the transport (a DTLS close_notify, ICE stopped); returns what to send.
    mutating func close(now: ContinuousClock.Instant) -> [MediaLegTransportEvent]

    /// One line on where the transport is, for a connect timeout's reason.
    var progressDescription: String { get }

    /// Fills in the transport's part of the leg's statistics.
    func record(into statistics: inout MediaLegStatistics)
}

/// What a transport tells its leg's core.
public enum MediaLegTransportEvent {
    /// Send these bytes from our address to the peer's.
    case send(bytes: [UInt8], from: ICETransportAddress, to: ICETransportAddress)
    /// From now on packets are protected this way (DTLS exported the keys; SDES keys or
    /// none at start): media from an admitted address can be taken.
    case protected(MediaLegProtection)
    /// There is a path and protection: media can flow both ways (reported once).
    case connected
    /// The transport failed for good (ICE, consent, DTLS, a fingerprint).
    case failed(MediaLegError)
    /// The peer ended the transport (a DTLS close_notify).
    case closedByPeer(MediaLegError)
    /// A datagram was refused; counted by the core under `reason`.
    case dropped(MediaLegDropReason, from: ICETransportAddress, detail: String)
}

/// A transport's answer to `MediaLegTransport.admit(from:isRTCP:now:)`.
public enum MediaSourceAdmission: Sendable, Hashable {
    /// Media from this address is the peer's.
    case accept
    /// Not yet known to be the peer's, but it may be: take the packet if it proves genuine,
    /// then `confirm` the address (plain RTP's symmetric latching).
    case learn
    /// Refused: drop and count it.
    case refuse(MediaLegDropReason, detail: String)
}
