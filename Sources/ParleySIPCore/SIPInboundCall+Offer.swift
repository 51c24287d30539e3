import ParleySIP

/// Our own offers in the dialog (hold and resume from our side), through `SIPDialogLeg`.
extension SIPInboundCall: SIPDialogLeg {
    /// Sends a re-INVITE carrying `sdp` as our new offer, once the call is confirmed (RFC
    /// 3264 §8; `SessionDescription`'s `holding` and `resuming` make hold and resume
    /// SDPs). Its outcome comes as `localOfferAnswered` (the 2xx acknowledged) or
    /// `localOfferRefused` (the old session goes on, RFC 3261 §14.1). A 491 is tried again
    /// after 0 to 2 s (the caller chose the Call-ID); 408 or no answer ends the call with
    /// BYE, 481 ends it (§12.2.1.2). It refreshes the session timer as well, and waits
    /// for the answer of a refresh of ours in flight.
    ///
    /// Only one offer is open at a time; nothing is queued: `offerPending` while ours or
    /// the far side's is, `invalidState` unless confirmed, `invalidSDP` for empty `sdp`.
    public mutating func offer(sdp: [UInt8], now: ContinuousClock.Instant) throws(SIPInboundCallError) -> [Output] {
        var out: [Output] = []
        if let (refusal, detail) = startLocalOffer(sdp, now: now, into: &out) {
            let kind: SIPInboundCallError.Kind = switch refusal {
            case .pending: .offerPending
            case .noSDP: .invalidSDP
            case .notConfirmed: .invalidState
            }
            throw SIPInboundCallError(kind, detail)
        }
        return out
    }

    /// The caller wrote the INVITE and its Call-ID.
    var ownsCallID: Bool { false }
    var isConfirmed: Bool { phase == .confirmed }
    var isPeerOfferOpen: Bool { awaitingAck != nil || pendingOffer != nil }
    var refreshMethod: SIPOutboundCall.Configuration.RefreshMethod { configuration.refreshMethod }
    var minimumSessionInterval: UInt32 { configuration.minimumSessionInterval }

    mutating func sendSessionRequest(
        _ method: SIPMethod, offer: Bool, headers: SIPHeaders, contentType: SIPContentType?, body: [UInt8],
        now: ContinuousClock.Instant, into out: inout [Output]
    ) -> SIPTransactionID? {
        sendInDialog(method, purpose: offer ? .offer : .refresh, headers: headers, contentType: contentType, body: body,
                     now: now, into: &out)
    }
}

extension SIPInboundCall.Output: SIPDialogLegOutput {}
extension SIPInboundCall.Event: SIPDialogLegEvent {}
extension SIPInboundCall.End: SIPDialogLegEnd {}
