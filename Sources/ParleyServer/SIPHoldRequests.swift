/// The hold our side wants on one SIP dialog and the re-INVITE that carries it, sans-I/O:
/// one offer at a time (RFC 3264 §8, RFC 3261 §14.1), the latest wish winning. A wish
/// made while an offer is open (ours, or the far side's) is offered once that one is
/// answered; a refused hold is given up (the call goes on as it was, the server's media
/// still holds it: docs/calls.md, "Hold").
struct SIPHoldRequests {
    /// The hold the app party asked for last; nil when there is nothing to do.
    private(set) var wanted: Bool?
    /// The hold our re-INVITE in flight offers; nil when none is.
    private(set) var inFlight: Bool?

    /// The app party held (true) or resumed the call.
    mutating func want(_ held: Bool) { wanted = held }

    /// The hold to offer now, given the hold of our last SDP: nil while an offer of ours
    /// is in flight or when nothing differs.
    func next(current: Bool) -> Bool? {
        guard inFlight == nil, let wanted, wanted != current else { return nil }
        return wanted
    }

    /// Our re-INVITE offering `held` went out.
    mutating func sent(_ held: Bool) { inFlight = held }

    /// The far side answered it (2xx).
    mutating func answered() { inFlight = nil }

    /// The far side refused it: a wish that has not changed since is given up, so a far
    /// side that refuses holds is not asked again and again.
    mutating func refused() {
        if inFlight == wanted { wanted = nil }
        inFlight = nil
    }

    /// The offer could not be made at all (no dialog to send it in): given up.
    mutating func abandon() { wanted = nil }
}
