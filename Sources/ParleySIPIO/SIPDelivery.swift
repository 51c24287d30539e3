/// What the handler of a received message did with it, for the transport's counters.
public enum SIPDelivery: Sendable, Hashable {
    /// The handler took the message (answered it, matched it to a transaction, or
    /// decided on purpose to say nothing, as for an ACK).
    case taken
    /// Nothing was waiting for it: a response matching no client transaction (RFC 3261
    /// §18.1.2 leaves it to the core, which has no use for it). Counted as dropped
    /// (`noTaker`).
    case noTaker
}
