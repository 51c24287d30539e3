public import ParleySIP

extension SIPInboundCall {
    /// What the call asks of its shell (send) or tells its owner (an event), in order.
    public enum Output: Sendable, Hashable {
        /// Send `message` to `hop`: responses go where the request's top Via says
        /// (`received`, `rport`: RFC 3261 §18.2.2, RFC 3581), requests of the dialog to
        /// the hop of its next URI (the first Record-Route, else the far side's Contact).
        case send(SIPMessage, to: SIPHop)
        /// Something the owner must hear.
        case event(Event)
    }

    /// What happened to the call.
    public enum Event: Sendable, Hashable {
        /// The ACK of our 200 came: the call is up. `sdp` is the far side's answer when
        /// the INVITE had no offer (our 200 carried it); nil otherwise (an offerless INVITE
        /// whose ACK has no SDP as well is reported with nil: the owner ends the call).
        case confirmed(sdp: [UInt8]?)
        /// The far side sent a re-INVITE (`method` .invite) or an UPDATE with an offer,
        /// such as hold (`a=sendonly`) or resume: answer it with
        /// `answerRemoteOffer(sdp:now:)` (RFC 3264 §8.4: the direction mirrored), or refuse
        /// it with `rejectRemoteOffer(statusCode:now:)` (488 for a codec we cannot do).
        /// `sdp` is nil for a re-INVITE without a body: our 2xx carries an offer and the
        /// ACK the answer (`remoteOfferCompleted`).
        case remoteOffer(method: SIPMethod, sdp: [UInt8]?)
        /// The ACK of our 2xx to the far side's re-INVITE came; `sdp` is the answer it
        /// carried when the re-INVITE had no offer, nil otherwise.
        case remoteOfferCompleted(sdp: [UInt8]?)
        /// The far side cancelled its re-INVITE before it was answered: forget the offer.
        case remoteOfferCancelled
        /// The far side answered our offer (`offer(sdp:now:)`) with a 2xx, which we
        /// acknowledged: `sdp` is its answer, now the session's (nil when the 2xx carried
        /// none, which breaks RFC 3264 §5: the owner may hang up).
        case localOfferAnswered(sdp: [UInt8]?)
        /// The far side refused our offer with this final status (488, 500, 603...; or 500
        /// when it could not be sent): the session goes on as before it (RFC 3261 §14.1).
        case localOfferRefused(statusCode: Int)
        /// An INFO carrying a DTMF key (`application/dtmf-relay` or `application/dtmf`),
        /// answered 200: one of `0-9 * # A-D`.
        case dtmf(digits: String)
        /// Any other INFO from the far side, answered 200.
        case info(contentType: SIPContentType?, body: [UInt8])
        /// The session was refreshed (RFC 4028), by us or the far side; `interval` is the
        /// session interval in seconds from now.
        case sessionRefreshed(interval: UInt32)
        /// The call is over. It comes once, as the last event; the call may still send
        /// (retransmitted final responses, BYE) until `isFinished`.
        case ended(End)
    }

    /// Why a call ended.
    public enum End: Sendable, Hashable {
        /// The far side cancelled the INVITE before our final response (RFC 3261 §9.2):
        /// the CANCEL got 200, the INVITE 487.
        case canceled
        /// The far side sent BYE (answered 200), after the answer or on the early dialog.
        case hungUp
        /// We refused the INVITE with this final status: `reject`, or the call itself
        /// (420 for a Require we do not support, 422 for a session interval below our
        /// Min-SE, 483 for Max-Forwards 0, 400 when the transaction layer refused it).
        case rejected(statusCode: Int)
        /// We hung up (`hangUp`): 480 before the answer, else our BYE got its response
        /// (any) or timed out.
        case localHangUp
        /// The far side was to refresh the session (RFC 4028) and did not, or our
        /// refreshes kept failing: we sent BYE.
        case sessionExpired
        /// Our 200 (to the INVITE or to a re-INVITE) got no ACK for 64·T1 (RFC 3261
        /// §13.3.1.4): we sent BYE.
        case unacknowledged
        /// A request of ours in the dialog got 481 or 408, or no answer (§12.2.1.2): the
        /// dialog is gone (a BYE was sent unless it was a 481).
        case dialogFailed(statusCode: Int)
        /// The shell could not send a response or request of the call.
        case transportError
        /// The far side's Contact (or first route) could not be resolved to a hop, so no
        /// request of the dialog could be sent.
        case noRoute(SIPURI)
    }
}
