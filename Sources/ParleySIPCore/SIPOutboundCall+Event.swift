public import ParleySIP

extension SIPOutboundCall {
    /// What the call asks of its shell (send) or tells its owner (an event), in order.
    public enum Output: Sendable, Hashable {
        /// Send `message` to `hop`.
        case send(SIPMessage, to: SIPHop)
        /// Something the owner must hear.
        case event(Event)
    }

    /// What happened to the call. `headers` are the response's header fields whose name
    /// starts with `x-` (the far side's custom headers, for the app).
    public enum Event: Sendable, Hashable {
        /// A provisional response (100 Trying, 180 Ringing, 183 Session Progress...). `sdp`
        /// is set when this response carried the first SDP of the call: that is the answer
        /// to our offer (RFC 3261 §13.2.1, early media); later SDPs are not answers and
        /// are not passed on.
        case provisional(statusCode: Int, reasonPhrase: String, sdp: [UInt8]?, headers: [SIPHeaders.Field])
        /// A 2xx: the far side answered and the ACK went out. `sdp` is the answer: the one a
        /// provisional response gave, else this response's.
        case answered(sdp: [UInt8]?, headers: [SIPHeaders.Field])
        /// The far side sent a re-INVITE (`method` .invite) or an UPDATE with an offer, such
        /// as hold (`a=sendonly`) or resume: answer it with `answerRemoteOffer(sdp:now:)`
        /// (RFC 3264 §8.4: the answer's direction mirrors the offer's), or refuse it with
        /// `rejectRemoteOffer(statusCode:now:)` (488 for a change we cannot make). `sdp` is
        /// nil for a re-INVITE without a body: it wants our offer in the 2xx, and the answer
        /// comes with the ACK (`remoteOfferCompleted`).
        case remoteOffer(method: SIPMethod, sdp: [UInt8]?)
        /// The ACK of our 2xx to the far side's re-INVITE came. `sdp` is the answer it
        /// carried when the re-INVITE had no offer; nil otherwise.
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
        /// An INFO from the far side (answered 200), such as `application/dtmf-relay`.
        case info(contentType: SIPContentType?, body: [UInt8])
        /// The session was refreshed (RFC 4028), by us or by the far side; `interval` is
        /// the session interval in seconds from now.
        case sessionRefreshed(interval: UInt32)
        /// The call is over. It comes once, as the last event; the call may still send
        /// (retransmitted BYE, ACKs for retransmitted 2xx) until `isFinished`.
        case ended(End)
    }

    /// Why a call ended.
    public enum End: Sendable, Hashable {
        /// The INVITE got a final failure (3xx-6xx; a 401/407 that could not be answered
        /// or was refused again), with the response's reason phrase and `x-` headers.
        case rejected(statusCode: Int, reasonPhrase: String, headers: [SIPHeaders.Field])
        /// We cancelled it before the answer (`cancel(now:)`): 487, any other final
        /// response after the CANCEL, no answer for 64·T1 after it, or a 2xx that crossed
        /// the CANCEL (acknowledged and ended with a BYE).
        case cancelled
        /// No final response to the INVITE (Timer B): as a 408.
        case timedOut
        /// We hung up (`hangUp(now:)`): the BYE got its response (any: 481 and 408 end the
        /// dialog too) or timed out.
        case localHangUp
        /// The far side sent BYE (answered 200).
        case remoteHangUp
        /// The far side was to refresh the session (RFC 4028) and did not, or our refreshes
        /// kept failing: we sent BYE.
        case sessionExpired
        /// A request of ours in the dialog got 481 or 408, or no answer (RFC 3261
        /// §12.2.1.2): the dialog is gone (a BYE was sent unless it was a 481).
        case dialogFailed(statusCode: Int)
        /// Our 2xx to the far side's re-INVITE got no ACK for 64·T1 (§13.3.1.4): BYE sent.
        case unacknowledged
        /// The shell could not send the INVITE or a request of the dialog.
        case transportError
        /// The far side's Contact (or route) could not be resolved to a hop, so no ACK
        /// could be sent.
        case noRoute(SIPURI)
        /// The far side broke the protocol in a way that ends the call (a 2xx without a To
        /// tag cannot be acknowledged).
        case protocolError(String)
    }
}
