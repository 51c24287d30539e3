public import ParleySIP

/// What the transaction layer asks of its shell (send) and tells its transaction user
/// (everything else), in the order it happened.
public enum SIPTransactionOutput: Sendable, Hashable {
    /// Send `message` to `hop` (over TCP or TLS: on the connection to that address).
    case send(SIPMessage, to: SIPHop)
    /// A new request arrived and a server transaction was made for it: answer it with
    /// `SIPTransactionLayer.respond(_:on:now:)`. Its top Via carries `received` and
    /// `rport` as §18.2.1 and RFC 3581 say, so responses built from it go back right.
    case request(SIPMessage, from: SIPHop, transaction: SIPTransactionID)
    /// A response to a client transaction: provisional responses, the final one, and for
    /// an INVITE every 2xx (retransmissions and other forks too, RFC 6026 §7.2), each of
    /// which the TU acknowledges itself.
    case response(SIPMessage, transaction: SIPTransactionID)
    /// A response no client transaction is waiting for: in practice a 2xx to an INVITE
    /// retransmitted after the transaction ended, which the TU must acknowledge again.
    case strayResponse(SIPMessage, from: SIPHop)
    /// An ACK for a 2xx (not part of any transaction, §17): it stopped the retransmission
    /// of that 2xx when it matched one (`acknowledged` is then the INVITE's transaction).
    case ack(SIPMessage, from: SIPHop, acknowledged: SIPTransactionID?)
    /// A CANCEL matched the INVITE server transaction `invite`, which has not sent its
    /// final response: the layer answered the CANCEL 200; the TU answers the INVITE 487
    /// (RFC 3261 §9.2).
    case cancel(SIPMessage, from: SIPHop, invite: SIPTransactionID)
    /// A client transaction got no final response (Timer B or F), or a server transaction
    /// no ACK for its 3xx-6xx (Timer H). For a client, the TU acts as on a 408 (§8.1.3.1).
    case timeout(SIPTransactionID)
    /// The shell could not send for this transaction (`transportFailed`): it ended.
    case transportError(SIPTransactionID)
    /// A 2xx to this INVITE server transaction was retransmitted for 64·T1 without an ACK
    /// (§13.3.1.4): the session should be ended with a BYE.
    case unacknowledged(SIPTransactionID)
    /// The layer answered a request itself (`statusCode`: 400 malformed, 481 CANCEL without
    /// its INVITE, 482 merged request, 483 Max-Forwards exhausted, 503 too many
    /// transactions) or dropped a message (`statusCode` nil: a malformed response, or a
    /// request that cannot be answered); `reason` says why, for the log.
    case refused(statusCode: Int?, reason: String, from: SIPHop)
}
