public import ParleySIP

/// Turns the URI a request must be sent toward (a dialog's `nextHop`: a Record-Route
/// entry or the peer's Contact) into a hop, the way RFC 3263 does with DNS. The cores
/// never resolve a name themselves: parleyd passes a resolver over its configuration
/// (per-domain routes, names it resolved when it started), tests pass the literal one.
public protocol SIPHopResolver: Sendable {
    /// The hop for `uri`, or nil when it cannot be reached (the call then ends with
    /// `noRoute`, rather than sending somewhere else).
    func hop(for uri: SIPURI) -> SIPHop?
}
