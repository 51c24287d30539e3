public import ParleyICECore
public import ParleyRTP

/// What a `MediaTopology` asks its owner to do, each naming the leg it concerns.
public enum MediaTopologyAction<LegID: Hashable & Sendable>: Sendable, Hashable {
    /// Send these bytes on the leg's socket.
    case send(leg: LegID, bytes: [UInt8], from: ICETransportAddress, to: ICETransportAddress)
    /// The leg moved to a new state; on `.failed` or `.closed` its core's `failure` says why.
    case stateChanged(leg: LegID, MediaLegState)
    /// The leg received an RFC 4733 telephone event (once as it begins, once as it ends).
    case receivedTelephoneEvent(leg: LegID, TelephoneEvent, timestamp: UInt32)
    /// The leg received an authenticated media packet (counted).
    case receivedMedia(leg: LegID)
    /// A packet from one leg was sent on another (counted).
    case forwarded(from: LegID, to: LegID)
    /// The leg dropped a datagram.
    case dropped(leg: LegID, MediaLegDropReason, from: ICETransportAddress, detail: String)
}
