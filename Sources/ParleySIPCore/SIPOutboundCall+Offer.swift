import ParleySIP

/// Our own offers in the dialog (hold and resume from our side), through `SIPDialogLeg`.
extension SIPOutboundCall: SIPDialogLeg {
    /// Sends a re-INVITE carrying `sdp` as our new offer (RFC 3264 §8: hold with
    /// `a=sendonly` or `a=inactive`, resume with `a=sendrecv`; see `SessionDescription`'s
    /// `holding` and `resuming`). The far side's answer comes as `localOfferAnswered` (its
    /// 2xx acknowledged), a refusal as `localOfferRefused` (the old session goes on, RFC
    /// 3261 §14.1); 491 is tried again after 2.1 to 4 s (we chose the Call-ID); 408 or no
    /// answer ends the call with BYE, 481 ends it (§12.2.1.2). The re-INVITE refreshes
    /// the session timer too; a refresh of ours in flight makes it wait for its answer.
    ///
    /// One offer at a time: throws `offerPending` while ours or the far side's is open
    /// (nothing is queued), `invalidState` before the answer or after the end,
    /// `invalidSDP` for an empty `sdp`.
    public mutating func offer(sdp: [UInt8], now: ContinuousClock.Instant) throws(SIPOutboundCallError) -> [Output] {
        var out: [Output] = []
        guard let (refusal, detail) = startLocalOffer(sdp, now: now, into: &out) else { return out }
        switch refusal {
        case .notConfirmed: throw SIPOutboundCallError(.invalidState, detail)
        case .noSDP: throw SIPOutboundCallError(.invalidSDP, detail)
        case .pending: throw SIPOutboundCallError(.offerPending, detail)
        }
    }

    var isConfirmed: Bool { phase == .answered }
    var isPeerOfferOpen: Bool { pendingOffer != nil || awaitingAck != nil }
    /// We wrote the INVITE, so the Call-ID is ours.
    var ownsCallID: Bool { true }
    var minimumSessionInterval: UInt32 { configuration.minimumSessionInterval }
    var refreshMethod: Configuration.RefreshMethod { configuration.refreshMethod }

    mutating func sendSessionRequest(
        _ method: SIPMethod, offer: Bool, headers: SIPHeaders, contentType: SIPContentType?, body: [UInt8],
        now: ContinuousClock.Instant, into out: inout [Output]
    ) -> SIPTransactionID? {
        sendInDialog(method, purpose: offer ? .offer : .refresh, headers: headers, contentType: contentType, body: body,
                     credentials: [], challenges: 0, now: now, into: &out)
    }
}

extension SIPOutboundCall.Output: SIPDialogLegOutput {}
extension SIPOutboundCall.Event: SIPDialogLegEvent {}
extension SIPOutboundCall.End: SIPDialogLegEnd {}
