/// Our own re-INVITE with an SDP offer (hold, resume: RFC 3264 §8), from `offer(sdp:now:)`
/// until the far side's final response. Only one is open at a time per dialog.
struct SIPLocalOffer: Sendable, Hashable {
    /// Why `offer(sdp:now:)` cannot start one; nothing was sent.
    enum Refusal: Sendable, Hashable {
        /// The call is not confirmed, or it is ending.
        case notConfirmed
        /// An offer carries SDP.
        case noSDP
        /// Our previous offer, or the far side's, is not answered yet (§14.1, RFC 3264 §4).
        case pending
    }

    /// The SDP offered; it becomes our session's once a 2xx answers it.
    var sdp: [UInt8]
    /// The re-INVITE's transaction while it is in flight; nil while it waits to go.
    var transaction: SIPTransactionID?
    /// When it may go again after a 491 (RFC 3261 §14.1); nil: as soon as no refresh of
    /// ours and no offer of the far side is open.
    var notBefore: ContinuousClock.Instant?
}
