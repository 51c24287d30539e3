public import ParleyICECore
public import ParleyRTP
public import ParleySTUN

/// Why the leg dropped a datagram. Each is counted; the driver logs them.
public enum MediaLegDropReason: String, Sendable, Hashable, CaseIterable, Encodable, CustomStringConvertible {
    /// A zero-length datagram.
    case empty
    /// First byte outside the RFC 7983 ranges (STUN 0-3, DTLS 20-63, RTP/RTCP 128-191).
    case unknownKind
    /// DTLS or SRTP from an address no ICE check has validated.
    case unvalidatedSource
    /// The ICE agent refused it (wrong credentials, bad fingerprint, not a request...).
    case stun
    /// The DTLS layer refused it (not a record, after close...).
    case dtls
    /// SRTP or SRTCP before the keys exist (or RTP before a plain RTP leg started).
    case beforeKeys
    /// SRTP/SRTCP authentication failed (RFC 3711 §3.3: bad tag).
    case srtpAuthentication
    /// SRTP/SRTCP replay: a packet index seen before or older than the window.
    case srtpReplay
    /// SRTP/SRTCP too short or otherwise unusable.
    case srtpMalformed
    /// Decrypted, but not a valid RTP or RTCP packet.
    case malformedRTP
    /// RTP with a payload type that was not negotiated.
    case unknownPayloadType
    /// A payload the decoder rejected.
    case undecodable
    /// Plain RTP: RTP or RTCP from another address than the one the leg latched to (an
    /// injected or stray packet; the leg never re-latches mid-call).
    case foreignSource

    public var description: String { rawValue }
}

/// What the leg asks its driver to do.
public enum MediaLegAction: Sendable, Hashable {
    /// Send these bytes from the local address to the remote one.
    case send(bytes: [UInt8], from: ICETransportAddress, to: ICETransportAddress)
    /// The leg moved to a new state; on `.failed`, `failure` says why.
    case stateChanged(MediaLegState)
    /// Forward mode: an authenticated RTP packet of the negotiated codec arrived; pass it to
    /// the other leg's `relay(_:now:)`.
    case receivedRTP(RTPPacket)
    /// An RFC 4733 telephone event (a DTMF digit) arrived, in either mode: once when it
    /// begins and once when it ends (`event.isEnd`), whatever the repeats on the wire.
    /// `timestamp` is the event's RTP timestamp, the same for both reports.
    case receivedTelephoneEvent(TelephoneEvent, timestamp: UInt32)
    /// A datagram was dropped; `detail` is one line for the log.
    case dropped(MediaLegDropReason, from: ICETransportAddress, detail: String)
}
