import ParleySIP

/// The dialog: the far side's requests, its offers, our BYE and session refreshes.
extension SIPInboundCall {
    // MARK: The owner's answers to offers

    /// Answers the far side's pending re-INVITE or UPDATE (`Event.remoteOffer`) with 200
    /// and `sdp`: the answer to its offer (for hold, `a=recvonly` to its `a=sendonly`,
    /// `a=inactive` to `a=inactive`, RFC 3264 §8.4), or our offer when it sent none. A
    /// re-INVITE's 200 is retransmitted until the ACK comes. Throws `noPendingOffer` when
    /// nothing waits.
    public mutating func answerRemoteOffer(sdp: [UInt8], now: ContinuousClock.Instant) throws(SIPInboundCallError) -> [Output] {
        guard let pending = pendingOffer, phase == .confirmed else {
            throw SIPInboundCallError(.noPendingOffer, "no re-INVITE or UPDATE waits for an answer")
        }
        guard !sdp.isEmpty else { throw SIPInboundCallError(.invalidSDP, "an answer carries SDP") }
        let session = negotiateSession(for: pending.request)
        guard var response = try? pending.request.makeResponse(statusCode: 200) else {
            throw SIPInboundCallError(.noPendingOffer, "the request cannot be answered")
        }
        do throws(SIPError) {
            try response.headers.add(name: "Contact", value: local.contact.description)
            try addCapabilities(to: &response.headers)
            if let session { try addSession(session, to: &response.headers) }
            try response.headers.add(name: "Content-Type", value: SIPContentType.sdp.description)
        } catch {
            throw SIPInboundCallError(.invalidArgument, error.description)
        }
        response.body = sdp
        pendingOffer = nil
        let outputs: [SIPTransactionOutput]
        do {
            outputs = try layer.respond(response, on: pending.transaction, now: now)
        } catch {
            throw SIPInboundCallError(.noPendingOffer, "the far side's request is gone: \(error)")
        }
        localSDP = sdp
        if pending.request.method == .invite { awaitingAck = (pending.transaction, pending.sdp == nil) }
        var out: [Output] = []
        process(outputs, now: now, into: &out)
        if let session { sessionRefreshedByPeer(session, now: now, into: &out) }
        return out
    }

    /// Refuses the far side's pending re-INVITE or UPDATE with `statusCode` (300-699; 488
    /// Not Acceptable Here for a codec we cannot do). The session stays as it was.
    public mutating func rejectRemoteOffer(statusCode: Int = 488, now: ContinuousClock.Instant) throws(SIPInboundCallError) -> [Output] {
        guard (300...699).contains(statusCode) else {
            throw SIPInboundCallError(.invalidStatus, "\(statusCode) does not refuse an offer")
        }
        guard let pending = pendingOffer else {
            throw SIPInboundCallError(.noPendingOffer, "no re-INVITE or UPDATE waits for an answer")
        }
        pendingOffer = nil
        var out: [Output] = []
        respond(to: pending.request, on: pending.transaction, statusCode, now: now, into: &out)
        return out
    }

    // MARK: The far side's requests

    mutating func peerRequest(_ request: SIPMessage, transaction id: SIPTransactionID, now: ContinuousClock.Instant,
                              into out: inout [Output]) {
        guard let method = request.method else { return }
        guard var current = dialog else {
            // No tagged response went out yet, so no request can name our dialog.
            respond(to: request, on: id, 481, now: now, into: &out)
            return
        }
        do {
            try current.receive(request: request)
        } catch {
            respond(to: request, on: id, error.statusCode ?? 400, now: now, into: &out)
            return
        }
        dialog = current
        if method == .update {
            peerAllowsUpdate = true
        } else if let allowed = try? request.allow() {
            peerAllowsUpdate = allowed.contains(.update)
        }
        switch method {
        case .bye:
            peerBye(request, transaction: id, now: now, into: &out)
        case _ where phase == .ending || phase == .ended:
            respond(to: request, on: id, 481, now: now, into: &out)
        case .invite, .update:
            peerOffer(request, method: method, transaction: id, now: now, into: &out)
        case .options:
            respond(to: request, on: id, 200, capabilities: true, now: now, into: &out)
        case .info:
            respond(to: request, on: id, 200, now: now, into: &out)
            let contentType = try? request.contentType()
            if let key = SIPDTMFInfo.key(contentType: contentType, body: request.body) {
                out.append(.event(.dtmf(digits: key)))
            } else {
                out.append(.event(.info(contentType: contentType, body: request.body)))
            }
        case .extension:
            respond(to: request, on: id, 501, now: now, into: &out)
        default:
            respond(to: request, on: id, 405, capabilities: true, now: now, into: &out)
        }
    }

    /// BYE: 200, and the end. On the early dialog (the caller gives up after our 18x,
    /// §15) the INVITE gets 487 as well; requests still unanswered get 487 (§15.1.2).
    mutating func peerBye(_ request: SIPMessage, transaction id: SIPTransactionID, now: ContinuousClock.Instant,
                          into out: inout [Output]) {
        respond(to: request, on: id, 200, now: now, into: &out)
        if phase == .proceeding { finalResponse(487, now: now, into: &out) }
        if let pending = pendingOffer {
            pendingOffer = nil
            respond(to: pending.request, on: pending.transaction, 487, now: now, into: &out)
        }
        finish(phase == .ending ? endingReason : .hungUp, into: &out)
    }

    /// A re-INVITE or UPDATE: a session refresh, an offer for the owner, or glare.
    mutating func peerOffer(_ request: SIPMessage, method: SIPMethod, transaction id: SIPTransactionID,
                            now: ContinuousClock.Instant, into out: inout [Output]) {
        if let asked = try? request.sessionExpires(), asked.interval < configuration.minimumSessionInterval {
            respond(to: request, on: id, 422, extra: [("Min-SE", String(configuration.minimumSessionInterval))], now: now, into: &out)
            return
        }
        let sdp = (try? request.sessionDescription()).flatMap { $0.isEmpty ? nil : $0 }
        if method == .update, sdp == nil, phase != .proceeding {
            // A refresh only (RFC 4028 §7.4, RFC 3311): answered at once.
            let session = negotiateSession(for: request)
            respond(to: request, on: id, 200, capabilities: true, session: session, contact: true, now: now, into: &out)
            if let session { sessionRefreshedByPeer(session, now: now, into: &out) }
            return
        }
        if refreshTransaction != nil || localOffer?.transaction != nil {
            // §14.2: our own re-INVITE (a refresh or an offer) is in flight.
            respond(to: request, on: id, 491, now: now, into: &out)
            return
        }
        if phase != .confirmed || pendingOffer != nil || awaitingAck != nil {
            // §14.2: an offer before the previous one (the INVITE's included) was answered
            // and acknowledged.
            let seconds = Int.random(in: 0...10, using: &random)
            respond(to: request, on: id, 500, extra: [("Retry-After", String(seconds))], now: now, into: &out)
            return
        }
        pendingOffer = PendingOffer(transaction: id, request: request, sdp: sdp)
        out.append(.event(.remoteOffer(method: method, sdp: sdp)))
    }

    /// Answers a request of the far side with our tag. A response that cannot be sent
    /// (its transaction ended) is dropped: there is no one left to tell.
    mutating func respond(
        to request: SIPMessage, on id: SIPTransactionID, _ code: Int, capabilities: Bool = false,
        session: SIPSessionExpires? = nil, contact: Bool = false, extra: [(String, String)] = [],
        now: ContinuousClock.Instant, into out: inout [Output]
    ) {
        guard var response = try? request.makeResponse(statusCode: code, toTag: localTag) else { return }
        do throws(SIPError) {
            if contact { try response.headers.add(name: "Contact", value: local.contact.description) }
            if capabilities { try addCapabilities(to: &response.headers) }
            if let session { try addSession(session, to: &response.headers) }
            for (name, value) in extra { try response.headers.add(name: name, value: value) }
        } catch {
            return
        }
        if let outputs = try? layer.respond(response, on: id, now: now) { process(outputs, now: now, into: &out) }
    }

    func addCapabilities(to headers: inout SIPHeaders) throws(SIPError) {
        try headers.add(name: "Allow", value: Self.allowed.map(\.token).joined(separator: ", "))
        try headers.add(name: "Accept", value: SIPContentType.sdp.description)
        try headers.add(name: "Supported", value: Self.supported.joined(separator: ", "))
    }

    // MARK: Our requests in the dialog

    /// Sends BYE and ends the call: for our own hang-up once the BYE is answered, for any
    /// other reason at once.
    mutating func endWithBye(_ reason: End, now: ContinuousClock.Instant, into out: inout [Output]) {
        guard phase == .confirmed || phase == .answered, dialog != nil else {
            finish(reason, into: &out)
            return
        }
        endingReason = reason
        sessionTimer = nil
        if let pending = pendingOffer {
            pendingOffer = nil
            respond(to: pending.request, on: pending.transaction, 487, now: now, into: &out)
        }
        phase = .ending
        let sent = sendInDialog(.bye, purpose: .bye, headers: SIPHeaders(), contentType: nil, body: [], now: now, into: &out)
        if sent == nil || reason != .localHangUp { finish(reason, into: &out) }
    }

    /// Sends a request in the dialog toward its next hop; the transaction's id, or nil
    /// when it could not be sent (the call then ended `noRoute`, or the request could not
    /// be written).
    @discardableResult
    mutating func sendInDialog(
        _ method: SIPMethod, purpose: Purpose, headers: SIPHeaders, contentType: SIPContentType?, body: [UInt8],
        now: ContinuousClock.Instant, into out: inout [Output]
    ) -> SIPTransactionID? {
        guard var current = dialog else { return nil }
        guard let hop = resolver.hop(for: current.nextHop) else {
            finish(.noRoute(current.nextHop), into: &out)
            return nil
        }
        var extra = headers
        if let userAgent = configuration.userAgent { try? extra.add(name: "User-Agent", value: userAgent) }
        guard let via = makeVia(for: hop),
              let request = try? current.makeRequest(method, via: via, headers: extra, contentType: contentType, body: body),
              let (id, outputs) = try? layer.sendRequest(request, to: hop, now: now) else { return nil }
        dialog = current
        outgoing[id] = (purpose, request)
        process(outputs, now: now, into: &out)
        return id
    }

    /// The final response to a request of ours in the dialog.
    mutating func requestAnswered(_ response: SIPMessage, transaction id: SIPTransactionID, now: ContinuousClock.Instant,
                                  into out: inout [Output]) {
        guard let code = response.statusCode, code >= 200, let sent = outgoing[id] else { return }
        outgoing[id] = nil
        if id == refreshTransaction { refreshTransaction = nil }
        switch sent.purpose {
        case .bye:
            finish(endingReason, into: &out)
        case .refresh, .offer:
            sessionRequestAnswered(response, code: code, request: sent.request, offer: sent.purpose == .offer, now: now, into: &out)
        }
    }

    /// A 2xx to our re-INVITE again (its ACK was lost): the ACK again.
    mutating func repeatedSuccess(_ response: SIPMessage, into out: inout [Output]) {
        guard let code = response.statusCode, (200..<300).contains(code), (try? response.callID()) == callID,
              let cseq = try? response.cseq(), cseq.method == .invite,
              let reInviteAck, cseq.sequence == reInviteAck.sequence else { return }
        out.append(.send(reInviteAck.message, to: reInviteAck.hop))
    }
}
