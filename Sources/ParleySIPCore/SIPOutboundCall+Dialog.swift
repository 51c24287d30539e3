import ParleySIP

/// The confirmed dialog: the far side's requests, our BYE and session refreshes.
extension SIPOutboundCall {
    // MARK: The owner's answers

    /// Answers the far side's pending re-INVITE or UPDATE (`Event.remoteOffer`) with 200
    /// and `sdp`: the answer to its offer (for hold, `a=recvonly` to its `a=sendonly`,
    /// RFC 3264 §8.4), or our offer when it sent none. A re-INVITE's 200 is retransmitted
    /// until the ACK comes. Throws `noPendingOffer` when nothing waits.
    public mutating func answerRemoteOffer(sdp: [UInt8], now: ContinuousClock.Instant) throws(SIPOutboundCallError) -> [Output] {
        guard let pending = pendingOffer, phase == .answered, let dialog else {
            throw SIPOutboundCallError(.noPendingOffer, "no re-INVITE or UPDATE waits for an answer")
        }
        let session = negotiateSession(for: pending.request)
        guard var response = try? pending.request.makeResponse(statusCode: 200) else {
            throw SIPOutboundCallError(.noPendingOffer, "the request cannot be answered")
        }
        do throws(SIPError) {
            try response.headers.add(name: "Contact", value: dialog.localContact.description)
            try addCapabilities(to: &response.headers)
            if let session { try addSession(session, to: &response.headers) }
            try response.headers.add(name: "Content-Type", value: SIPContentType.sdp.description)
        } catch {
            throw SIPOutboundCallError(.invalidInvitation, error.description)
        }
        response.body = sdp
        let outputs: [SIPTransactionOutput]
        do {
            outputs = try layer.respond(response, on: pending.transaction, now: now)
        } catch {
            pendingOffer = nil
            throw SIPOutboundCallError(.noPendingOffer, "the far side's request is gone: \(error)")
        }
        pendingOffer = nil
        localSDP = sdp
        if pending.request.method == .invite { awaitingAck = (pending.transaction, pending.sdp == nil) }
        var out: [Output] = []
        process(outputs, now: now, into: &out)
        if let session { sessionRefreshedByPeer(session, now: now, into: &out) }
        return out
    }

    /// Refuses the far side's pending re-INVITE or UPDATE with `statusCode` (300-699; 488
    /// Not Acceptable Here for a change we cannot make). The session stays as it was.
    public mutating func rejectRemoteOffer(statusCode: Int = 488, now: ContinuousClock.Instant) throws(SIPOutboundCallError) -> [Output] {
        guard (300...699).contains(statusCode) else {
            throw SIPOutboundCallError(.invalidStatus, "\(statusCode) does not refuse an offer")
        }
        guard let pending = pendingOffer else {
            throw SIPOutboundCallError(.noPendingOffer, "no re-INVITE or UPDATE waits for an answer")
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
            earlyRequest(request, method: method, transaction: id, now: now, into: &out)
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
            respond(to: request, on: id, 200, now: now, into: &out)
            if let pending = pendingOffer {
                // §15.1.2: requests of the dialog still unanswered get 487.
                respond(to: pending.request, on: pending.transaction, 487, now: now, into: &out)
            }
            finish(phase == .ending ? endingReason : .remoteHangUp, into: &out)
        case .invite, .update:
            peerOffer(request, method: method, transaction: id, now: now, into: &out)
        case .options:
            respond(to: request, on: id, 200, capabilities: true, now: now, into: &out)
        case .info:
            respond(to: request, on: id, 200, now: now, into: &out)
            out.append(.event(.info(contentType: try? request.contentType(), body: request.body)))
        case .extension:
            respond(to: request, on: id, 501, now: now, into: &out)
        default:
            respond(to: request, on: id, 405, capabilities: true, now: now, into: &out)
        }
    }

    /// A request before the answer: only a BYE on an early dialog means something (the far
    /// side gives up; RFC 3261 §15 has it sent only by the caller, but some do).
    mutating func earlyRequest(_ request: SIPMessage, method: SIPMethod, transaction id: SIPTransactionID,
                               now: ContinuousClock.Instant, into out: inout [Output]) {
        let fromTag = (try? request.from())?.tag ?? ""
        let toTag = (try? request.to())?.tag
        guard phase == .calling || phase == .early, method == .bye, toTag == invitation.from.tag,
              earlyDialogs[fromTag] != nil else {
            respond(to: request, on: id, 481, now: now, into: &out)
            return
        }
        respond(to: request, on: id, 200, now: now, into: &out)
        if case .none = cancelState, provisionalReceived { sendCancel(now: now, into: &out) }
        finish(.remoteHangUp, into: &out)
    }

    /// A re-INVITE or UPDATE: a session refresh, an offer for the owner, or glare.
    mutating func peerOffer(_ request: SIPMessage, method: SIPMethod, transaction id: SIPTransactionID,
                            now: ContinuousClock.Instant, into out: inout [Output]) {
        guard phase == .answered else {
            respond(to: request, on: id, 481, now: now, into: &out)
            return
        }
        if let asked = try? request.sessionExpires(), asked.interval < configuration.minimumSessionInterval {
            respond(to: request, on: id, 422, extra: [("Min-SE", String(configuration.minimumSessionInterval))], now: now, into: &out)
            return
        }
        let sdp = (try? request.sessionDescription()).flatMap { $0.isEmpty ? nil : $0 }
        if method == .update, sdp == nil {
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
        if pendingOffer != nil || awaitingAck != nil {
            // §14.2: an offer before the previous one was answered and acknowledged.
            let seconds = Int.random(in: 0...10, using: &random)
            respond(to: request, on: id, 500, extra: [("Retry-After", String(seconds))], now: now, into: &out)
            return
        }
        pendingOffer = PendingOffer(transaction: id, request: request, sdp: sdp)
        out.append(.event(.remoteOffer(method: method, sdp: sdp)))
    }

    mutating func peerAck(_ ack: SIPMessage, acknowledged: SIPTransactionID?, into out: inout [Output]) {
        guard let awaiting = awaitingAck, acknowledged == awaiting.transaction else { return }
        awaitingAck = nil
        let sdp = awaiting.offerless ? (try? ack.sessionDescription()).flatMap { $0.isEmpty ? nil : $0 } : nil
        out.append(.event(.remoteOfferCompleted(sdp: sdp)))
    }

    mutating func peerCancel(invite id: SIPTransactionID, now: ContinuousClock.Instant, into out: inout [Output]) {
        guard let pending = pendingOffer, pending.transaction == id else { return }
        pendingOffer = nil
        respond(to: pending.request, on: id, 487, now: now, into: &out)
        out.append(.event(.remoteOfferCancelled))
    }

    /// Answers a request of the far side. A response that cannot be sent (its transaction
    /// ended) is dropped: there is no one left to tell.
    mutating func respond(
        to request: SIPMessage, on id: SIPTransactionID, _ code: Int, capabilities: Bool = false,
        session: SIPSessionExpires? = nil, contact: Bool = false, extra: [(String, String)] = [],
        now: ContinuousClock.Instant, into out: inout [Output]
    ) {
        guard var response = try? request.makeResponse(statusCode: code, toTag: SIPIdentifier.tag(using: &random)) else { return }
        do throws(SIPError) {
            if contact, let dialog { try response.headers.add(name: "Contact", value: dialog.localContact.description) }
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
        try headers.add(name: "Supported", value: "timer")
    }

    // MARK: Our requests in the dialog

    /// Sends BYE and ends the call: for our own hang-up once the BYE is answered, for any
    /// other reason at once.
    mutating func endWithBye(_ reason: End, now: ContinuousClock.Instant, into out: inout [Output]) {
        guard phase == .answered, dialog != nil else {
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
        let sent = sendInDialog(.bye, purpose: .bye, headers: SIPHeaders(), contentType: nil, body: [],
                                credentials: [], challenges: 0, now: now, into: &out)
        if sent == nil || reason != .localHangUp { finish(reason, into: &out) }
    }

    /// Sends a request in the dialog toward its next hop; the transaction's id, or nil
    /// when it could not be sent (the call then ended `noRoute`, or the request could
    /// not be written).
    @discardableResult
    mutating func sendInDialog(
        _ method: SIPMethod, purpose: Purpose, headers: SIPHeaders, contentType: SIPContentType?, body: [UInt8],
        credentials: [SIPHeaders.Field], challenges: Int, now: ContinuousClock.Instant, into out: inout [Output]
    ) -> SIPTransactionID? {
        guard var current = dialog else { return nil }
        guard let hop = resolver.hop(for: current.nextHop) else {
            finish(.noRoute(current.nextHop), into: &out)
            return nil
        }
        var extra = headers
        for field in credentials { try? extra.add(name: field.name, value: field.value) }
        if let userAgent = configuration.userAgent { try? extra.add(name: "User-Agent", value: userAgent) }
        guard let via = makeVia(for: hop),
              let request = try? current.makeRequest(method, via: via, headers: extra, contentType: contentType, body: body),
              let (id, outputs) = try? layer.sendRequest(request, to: hop, now: now) else { return nil }
        dialog = current
        outgoing[id] = Outgoing(purpose: purpose, request: request, headers: headers, contentType: contentType, challenges: challenges)
        process(outputs, now: now, into: &out)
        return id
    }

    /// The final response to a request of ours in the dialog.
    mutating func dialogResponse(_ response: SIPMessage, transaction id: SIPTransactionID, now: ContinuousClock.Instant,
                                 into out: inout [Output]) {
        guard let code = response.statusCode, code >= 200, let sent = outgoing[id] else { return }
        outgoing[id] = nil
        if id == refreshTransaction { refreshTransaction = nil }
        if (code == 401 || code == 407), sent.purpose != .forkBye, sent.challenges < configuration.maxChallenges,
           var client = digest, let method = sent.request.method,
           let fields = answer(response, code: code, request: sent.request, client: &client) {
            digest = client
            let retried = sendInDialog(method, purpose: sent.purpose, headers: sent.headers, contentType: sent.contentType,
                                       body: sent.request.body, credentials: fields, challenges: sent.challenges + 1, now: now, into: &out)
            if sent.purpose == .refresh { refreshTransaction = retried }
            if sent.purpose == .offer { localOffer?.transaction = retried }
            if retried != nil { return }
        }
        switch sent.purpose {
        case .bye:
            finish(endingReason, into: &out)
        case .forkBye:
            break
        case .refresh, .offer:
            sessionRequestAnswered(response, code: code, request: sent.request, offer: sent.purpose == .offer, now: now, into: &out)
        }
    }
}
