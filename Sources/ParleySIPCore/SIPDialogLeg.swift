import ParleySIP

/// The in-dialog plumbing both call legs share (`SIPOutboundCall`, `SIPInboundCall`):
/// session refreshes (RFC 4028), our own re-INVITE offers (hold and resume, RFC 3264 §8)
/// and the responses to both: ACK of a 2xx, 491 glare, 408/481 ending the dialog (RFC
/// 3261 §14.1, §12.2.1.2). A leg supplies its state and how to send and end; the logic
/// is written once here.
protocol SIPDialogLeg {
    associatedtype Output: SIPDialogLegOutput
    associatedtype End: SIPDialogLegEnd

    var dialog: SIPDialog? { get set }
    var sessionTimer: SIPSessionTimer? { get set }
    var random: any RandomNumberGenerator & Sendable { get set }
    var resolver: any SIPHopResolver { get }
    /// Our SDP as the far side last accepted it.
    var localSDP: [UInt8] { get set }
    var localOffer: SIPLocalOffer? { get set }
    var refreshTransaction: SIPTransactionID? { get set }
    /// The ACK of the 2xx to our latest re-INVITE, by that INVITE's CSeq.
    var reInviteAck: (sequence: UInt32, message: SIPMessage, hop: SIPHop)? { get set }
    var peerAllowsUpdate: Bool { get }
    /// Whether the dialog is confirmed and not ending: requests of ours may go.
    var isConfirmed: Bool { get }
    /// Whether an offer of the far side waits for the owner's answer or for its ACK.
    var isPeerOfferOpen: Bool { get }
    /// Whether we chose the dialog's Call-ID (RFC 3261 §14.1: the longer glare wait).
    var ownsCallID: Bool { get }
    var minimumSessionInterval: UInt32 { get }
    var refreshMethod: SIPOutboundCall.Configuration.RefreshMethod { get }

    mutating func makeVia(for hop: SIPHop) -> SIPVia?
    /// Sends a re-INVITE or UPDATE in the dialog: a refresh, or our offer when `offer`.
    mutating func sendSessionRequest(
        _ method: SIPMethod, offer: Bool, headers: SIPHeaders, contentType: SIPContentType?, body: [UInt8],
        now: ContinuousClock.Instant, into out: inout [Output]
    ) -> SIPTransactionID?
    mutating func endWithBye(_ reason: End, now: ContinuousClock.Instant, into out: inout [Output])
    mutating func finish(_ end: End, into out: inout [Output])
}

extension SIPDialogLeg {
    // MARK: Our offers

    /// Opens our offer and sends it when nothing stands in its way; the refusal when it
    /// cannot be opened (nothing sent then).
    mutating func startLocalOffer(_ sdp: [UInt8], now: ContinuousClock.Instant,
                                  into out: inout [Output]) -> (SIPLocalOffer.Refusal, String)? {
        guard isConfirmed, dialog != nil else { return (.notConfirmed, "the call is not confirmed, or it is ending") }
        guard !sdp.isEmpty else { return (.noSDP, "an offer carries SDP") }
        guard localOffer == nil else { return (.pending, "our previous offer is not answered yet") }
        guard !isPeerOfferOpen else { return (.pending, "the far side's offer is not answered yet") }
        localOffer = SIPLocalOffer(sdp: sdp)
        sendDueLocalOffer(now: now, into: &out)
        return nil
    }

    /// When our waiting offer may go again (after a 491); nil when none waits for a time.
    var localOfferDeadline: ContinuousClock.Instant? {
        guard let localOffer, localOffer.transaction == nil, isConfirmed else { return nil }
        return localOffer.notBefore
    }

    /// Sends our waiting offer once it may go: no refresh of ours in flight, no offer of
    /// the far side open (RFC 3264 §4), the glare wait over. The re-INVITE refreshes the
    /// session as well (RFC 4028 §7.4), so no separate refresh runs while it is out.
    mutating func sendDueLocalOffer(now: ContinuousClock.Instant, into out: inout [Output]) {
        guard var offer = localOffer, offer.transaction == nil, isConfirmed, refreshTransaction == nil,
              !isPeerOfferOpen, (offer.notBefore ?? now) <= now else { return }
        var headers = SIPHeaders()
        if var timer = sessionTimer {
            timer.refreshSent()
            sessionTimer = timer
            let refresher: SIPSessionExpires.Refresher = timer.refresher == .us ? .uac : .uas
            addRefreshHeaders(SIPSessionExpires(interval: timer.interval, refresher: refresher), to: &headers)
        }
        offer.transaction = sendSessionRequest(.invite, offer: true, headers: headers, contentType: .sdp, body: offer.sdp,
                                               now: now, into: &out)
        guard offer.transaction != nil else {
            localOffer = nil
            // Not written, or the call ended (no route): only a live call hears of it.
            if isConfirmed { out.append(.event(.localOfferRefused(statusCode: 500))) }
            return
        }
        offer.notBefore = nil
        localOffer = offer
    }

    // MARK: Session refreshes

    /// Sends a session refresh: UPDATE without a body when the far side allows it (or the
    /// configuration says so), else a re-INVITE with our last SDP unchanged. It waits
    /// while an offer is open (ours, or the far side's: a second offer would be glare).
    mutating func sendRefresh(now: ContinuousClock.Instant, into out: inout [Output]) {
        guard var timer = sessionTimer, refreshTransaction == nil, localOffer?.transaction == nil else { return }
        guard !isPeerOfferOpen else {
            // The far side's offer ends soon (answer, ACK or their timers): look again then.
            timer.retryRefresh(at: now + .seconds(1))
            sessionTimer = timer
            return
        }
        timer.refreshSent()
        sessionTimer = timer
        let useUpdate = switch refreshMethod {
        case .update: true
        case .reInvite: false
        case .automatic: peerAllowsUpdate
        }
        var headers = SIPHeaders()
        addRefreshHeaders(timer.requestValue, to: &headers)
        refreshTransaction = sendSessionRequest(
            useUpdate ? .update : .invite, offer: false, headers: headers, contentType: useUpdate ? nil : .sdp,
            body: useUpdate ? [] : localSDP, now: now, into: &out)
    }

    func addRefreshHeaders(_ session: SIPSessionExpires, to headers: inout SIPHeaders) {
        try? headers.add(name: "Session-Expires", value: session.description)
        try? headers.add(name: "Min-SE", value: String(minimumSessionInterval))
        try? headers.add(name: "Supported", value: "timer")
    }

    func addSession(_ session: SIPSessionExpires, to headers: inout SIPHeaders) throws(SIPError) {
        try headers.add(name: "Session-Expires", value: session.description)
        if session.refresher == .uac { try headers.add(name: "Require", value: "timer") }
    }

    /// The Session-Expires of our 2xx to the far side's refresh (RFC 4028 §9): its
    /// interval, its refresher or, when it named none, the far side if it supports timers
    /// and else us. Without Session-Expires, a running timer is kept with us refreshing.
    func negotiateSession(for request: SIPMessage) -> SIPSessionExpires? {
        if let asked = try? request.sessionExpires() {
            let supportsTimer = (try? request.supported())?.contains { SIPText.equalsIgnoringCase($0, "timer") } ?? false
            return SIPSessionExpires(interval: asked.interval, refresher: asked.refresher ?? (supportsTimer ? .uac : .uas))
        }
        return sessionTimer.map { SIPSessionExpires(interval: $0.interval, refresher: .uas) }
    }

    /// The far side refreshed: in its request the UAC is the far side, so `uac` means it
    /// refreshes next.
    mutating func sessionRefreshedByPeer(_ session: SIPSessionExpires, now: ContinuousClock.Instant, into out: inout [Output]) {
        sessionRefreshed(interval: session.interval, refresher: session.refresher == .uac ? .them : .us, now: now, into: &out)
    }

    mutating func sessionRefreshed(interval: UInt32, refresher: SIPSessionTimer.Refresher, now: ContinuousClock.Instant,
                                   into out: inout [Output]) {
        if var timer = sessionTimer {
            timer.refreshed(interval: interval, refresher: refresher, now: now)
            sessionTimer = timer
        } else {
            sessionTimer = SIPSessionTimer(interval: interval, refresher: refresher, now: now)
        }
        out.append(.event(.sessionRefreshed(interval: interval)))
    }

    // MARK: Responses to our re-INVITEs and UPDATEs

    /// The final response to our refresh or offer (`offer`), once credentials were dealt
    /// with: a 2xx is acknowledged and refreshes the session; 481 ends the dialog, 408
    /// ends it with BYE (RFC 3261 §12.2.1.2); 491 is glare, tried again after the random
    /// wait of §14.1; any other failure leaves the session as it was (§14.1).
    mutating func sessionRequestAnswered(_ response: SIPMessage, code: Int, request: SIPMessage, offer: Bool,
                                         now: ContinuousClock.Instant, into out: inout [Output]) {
        guard isConfirmed, var current = dialog else {
            if offer { localOffer = nil }
            // A 2xx that crossed our BYE is still acknowledged, or it is sent again for 64·T1.
            if (200..<300).contains(code), request.method == .invite, let dialog { acknowledgeReInvite(request, in: dialog, into: &out) }
            return
        }
        if offer { localOffer?.transaction = nil }
        switch code {
        case 200..<300:
            _ = current.update(withResponse: response, to: request)
            dialog = current
            if request.method == .invite { acknowledgeReInvite(request, in: current, into: &out) }
            if let value = try? response.sessionExpires() {
                sessionRefreshed(interval: value.interval, refresher: value.refresher == .uas ? .them : .us, now: now, into: &out)
            } else {
                // RFC 4028 §7.4: a 2xx without Session-Expires turns the timer off.
                sessionTimer = nil
            }
            if offer, let answered = localOffer {
                localOffer = nil
                localSDP = answered.sdp
                // A 2xx without an answer breaks RFC 3264 §5; the owner hears nil and decides.
                let answer = (try? response.sessionDescription()).flatMap { $0.isEmpty ? nil : $0 }
                out.append(.event(.localOfferAnswered(sdp: answer)))
            }
        case 481:
            finish(.dialogFailed(statusCode: 481), into: &out)
        case 408:
            endWithBye(.dialogFailed(statusCode: 408), now: now, into: &out)
        case 491:
            let retryAt = now + glareWait()
            if offer {
                localOffer?.notBefore = retryAt
            } else {
                sessionTimer?.retryRefresh(at: retryAt)
            }
        case 422:
            // RFC 4028 §7.3: too short for the far side; ask again with its Min-SE.
            if let minimum = try? response.minSE(), var timer = sessionTimer, minimum > timer.interval {
                timer.refreshed(interval: minimum, refresher: .us, now: now)
                timer.retryRefresh(at: now)
                sessionTimer = timer
                if offer { localOffer?.notBefore = now }
            } else if offer {
                refuseLocalOffer(code, now: now, into: &out)
            }
        default:
            // The session stays; if no refresh gets through it expires and we send BYE.
            if offer { refuseLocalOffer(code, now: now, into: &out) }
        }
    }

    /// Our offer failed: the old session goes on (§14.1), and so do refreshes.
    mutating func refuseLocalOffer(_ code: Int, now: ContinuousClock.Instant, into out: inout [Output]) {
        localOffer = nil
        if var timer = sessionTimer, timer.refresher == .us, timer.refreshAt == nil {
            timer.retryRefresh(at: now)
            sessionTimer = timer
        }
        out.append(.event(.localOfferRefused(statusCode: code)))
    }

    /// Our refresh or offer got no final response (Timer B or F), or could not be sent.
    mutating func sessionRequestFailed(offer: Bool, timedOut: Bool, now: ContinuousClock.Instant, into out: inout [Output]) {
        if offer { localOffer = nil }
        if timedOut {
            endWithBye(.dialogFailed(statusCode: 408), now: now, into: &out)
        } else {
            finish(.transportError, into: &out)
        }
    }

    /// The glare wait of RFC 3261 §14.1: 2.1 to 4 s when we chose the Call-ID, else 0 to 2 s.
    mutating func glareWait() -> Duration {
        let range: ClosedRange<Int64> = ownsCallID ? 2100...4000 : 0...2000
        return .milliseconds(Int64.random(in: range, using: &random))
    }

    /// Sends the ACK of the 2xx to our re-INVITE toward the dialog's target, with the
    /// re-INVITE's credentials (§13.2.2.4), and keeps it for the 2xx's retransmissions.
    mutating func acknowledgeReInvite(_ request: SIPMessage, in dialog: SIPDialog, into out: inout [Output]) {
        guard let sequence = (try? request.cseq())?.sequence, let hop = resolver.hop(for: dialog.nextHop),
              let via = makeVia(for: hop) else { return }
        var extra = SIPHeaders()
        for field in request.headers.fields where Self.isCredentials(field) { try? extra.add(name: field.name, value: field.value) }
        guard let ack = try? dialog.makeAck(inviteSequence: sequence, via: via, headers: extra) else { return }
        out.append(.send(ack, to: hop))
        reInviteAck = (sequence, ack, hop)
    }

    static func isCredentials(_ field: SIPHeaders.Field) -> Bool {
        field.canonicalName == "authorization" || field.canonicalName == "proxy-authorization"
    }
}
