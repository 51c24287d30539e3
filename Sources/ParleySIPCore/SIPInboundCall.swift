public import ParleySIP

/// The UAS side of one back-to-back user agent leg, sans-I/O: a call from a SIP trunk or
/// peer to parleyd, once whatever dispatches new INVITEs (`SIPInboundInviteFilter`, then
/// the owner's routing) decided to take it. It owns a `SIPTransactionLayer` for the call's
/// transactions, the INVITE server transaction first, and the `SIPDialog` our answer makes.
///
/// `start(now:)` takes the INVITE and sends 100 Trying at once (RFC 3261 §17.2.1). Then
/// every message received for the call (the shell dispatches by Call-ID), each timeout
/// (`nextDeadline`) and the owner's decisions go in; messages to send and `Event`s come
/// out. What it does:
///
/// - The INVITE is read once: `offer` (nil for an offerless INVITE: our 200 then carries
///   the offer and the ACK the answer), `from`, `to`, `requestURI`, `assertedIdentities`
///   and `callHeaders` (its `x-` headers, for the app).
/// - `ring(earlySDP:now:)` sends 180, or 183 with SDP for early media; `answer(sdp:now:)`
///   sends 200 with our To tag and Contact, retransmitted (T1 doubling up to T2) until the
///   ACK (RFC 6026); with no ACK in 64·T1 the call sends BYE and ends `unacknowledged`.
///   `reject(statusCode:reasonPhrase:now:)` sends a 4xx-6xx; `hangUp(now:)` sends 480
///   before the answer, BYE after it (after the ACK, §15).
/// - CANCEL before our final response: 200 to it (the transaction layer), 487 to the
///   INVITE, the call ends `canceled`. BYE from the far side: 200, ends `hungUp`.
/// - Requests in the dialog are checked as §12.2.2 says (481 for another dialog, 500 for
///   a CSeq out of order). A re-INVITE or UPDATE with an offer goes to the owner
///   (`remoteOffer`), which answers it (`answerRemoteOffer`: the direction mirrored, RFC
///   3264 §8.4) or refuses it (`rejectRemoteOffer`, 488); glare gets 491, a second offer
///   500 with Retry-After (§14.2). OPTIONS gets 200; INFO 200 and a `dtmf` or `info`
///   event; other methods 405/501.
/// - Session timers (RFC 4028): the INVITE's Session-Expires and Min-SE are honoured (422
///   when below our Min-SE); our 200 names the refresher. When it is us we send UPDATE (or
///   re-INVITE) at half the interval; when it is the far side and it stops, we send BYE
///   before the session expires.
///
/// Merged requests and Max-Forwards 0 on a new INVITE are `SIPInboundInviteFilter`'s
/// business; the call's own layer still answers a merged copy of its INVITE 482.
///
/// Randomness (our tag, branches) comes from the generator given at init.
public struct SIPInboundCall: Sendable {
    /// Where the call is.
    public enum Phase: String, Sendable, Hashable {
        /// The INVITE is taken; no final response yet (100, 180, 183 may have gone).
        case proceeding
        /// Our 200 went out; its ACK has not come.
        case answered
        /// The ACK came: the call is up.
        case confirmed
        /// We sent BYE and wait for its response.
        case ending
        /// Over: `ended` was reported.
        case ended
    }

    /// Why a request of ours in the dialog was sent, to know what its response means.
    enum Purpose: Sendable, Hashable {
        case bye
        case refresh
        /// Our re-INVITE with an offer (`offer(sdp:now:)`).
        case offer
    }

    /// The far side's re-INVITE or UPDATE waiting for the owner's answer.
    struct PendingOffer: Sendable {
        var transaction: SIPTransactionID
        var request: SIPMessage
        var sdp: [UInt8]?
    }

    /// The configuration.
    public let configuration: Configuration
    /// Our side of the call.
    public let local: Local
    /// The call's Call-ID (for the shell to dispatch received messages by).
    public let callID: String
    /// The INVITE's Request-URI: the number or address dialled.
    public let requestURI: SIPURI
    /// The INVITE's From: who calls.
    public let from: SIPNameAddress
    /// The INVITE's To, without our tag: who is called.
    public let to: SIPNameAddress
    /// The INVITE's P-Asserted-Identity entries (RFC 3325), as a trunk asserts the caller.
    public let assertedIdentities: [SIPNameAddress]
    /// The INVITE's header fields whose name starts with `x-`, in order: the caller's
    /// custom headers, for the app.
    public let callHeaders: [SIPHeaders.Field]
    /// The INVITE's SDP offer; nil when it had none (our 200 then carries the offer).
    public let offer: [UInt8]?
    /// Our To tag, in every response but 100 and in our requests' From.
    public let localTag: String
    /// Where the call is.
    public internal(set) var phase: Phase = .proceeding
    /// The dialog: early from our first 18x, confirmed from our 200.
    public internal(set) var dialog: SIPDialog?

    /// The INVITE as received; after `start`, as the layer stamped it (`received`, `rport`).
    var invite: SIPMessage
    let source: SIPHop
    let resolver: any SIPHopResolver
    var random: any RandomNumberGenerator & Sendable
    var layer: SIPTransactionLayer
    var inviteTransaction: SIPTransactionID?
    /// Our SDP as last sent: the answer (or offer) of the 200, then each answer to an offer.
    var localSDP: [UInt8] = []
    /// Whether a 183 carried our early SDP, which the 200 must then repeat.
    var earlySDP: [UInt8]?
    var peerAllowsUpdate = false
    var peerSupportsTimer = false
    var sessionTimer: SIPSessionTimer?
    /// `hangUp` came while our 200 waited for its ACK: the BYE goes once it comes (§15).
    var hangUpAfterAck = false
    /// Our session refresh in flight: an offer of the far side meanwhile is glare (491).
    var refreshTransaction: SIPTransactionID?
    var outgoing: [SIPTransactionID: (purpose: Purpose, request: SIPMessage)] = [:]
    /// The ACK of the 2xx to our latest re-INVITE, by that INVITE's CSeq.
    var reInviteAck: (sequence: UInt32, message: SIPMessage, hop: SIPHop)?
    var pendingOffer: PendingOffer?
    /// Our re-INVITE with an offer, in flight or waiting to go.
    var localOffer: SIPLocalOffer?
    /// Our 2xx to the far side's re-INVITE, waiting for its ACK; `offerless` when the
    /// re-INVITE had no SDP (the ACK carries the answer).
    var awaitingAck: (transaction: SIPTransactionID, offerless: Bool)?
    var endingReason: End = .localHangUp
    var endReported = false

    /// The methods we accept in the dialog.
    static let allowed: [SIPMethod] = [.invite, .ack, .cancel, .bye, .options, .info, .update]
    /// The option tags we support (Require of anything else gets 420, §8.2.2.3).
    static let supported = ["timer"]

    /// A call for the initial `invite` received from `source`, not started. Throws
    /// `invalidInvite` when it cannot make a call (see `SIPInboundCallError.Kind`).
    /// `resolver` turns the dialog's targets into hops; `random` draws our tag and
    /// branches: `SystemRandomNumberGenerator` in parleyd, a seeded one in tests.
    public init(
        invite: SIPMessage, from source: SIPHop, local: Local, configuration: Configuration = Configuration(),
        resolver: some SIPHopResolver = SIPLiteralHopResolver(), random: some RandomNumberGenerator & Sendable
    ) throws(SIPInboundCallError) {
        guard invite.method == .invite, let requestURI = invite.requestURI else {
            throw SIPInboundCallError(.invalidInvite, "not an INVITE")
        }
        let parts: (SIPNameAddress?, SIPNameAddress?, String?, SIPCSeq?, SIPContacts?, [SIPNameAddress], [UInt8]?, [String])
        do throws(SIPError) {
            try invite.validate()
            parts = (try invite.from(), try invite.to(), try invite.callID(), try invite.cseq(), try invite.contacts(),
                     try invite.assertedIdentities(), try invite.sessionDescription(), try invite.supported())
        } catch {
            throw SIPInboundCallError(.invalidInvite, error.description)
        }
        guard let from = parts.0, let to = parts.1, let callID = parts.2, let cseq = parts.3 else {
            throw SIPInboundCallError(.invalidInvite, "no From, To, Call-ID or CSeq")
        }
        guard cseq.method == .invite else { throw SIPInboundCallError(.invalidInvite, "the CSeq is not the INVITE's") }
        guard to.tag == nil else { throw SIPInboundCallError(.invalidInvite, "the To tag belongs to a dialog") }
        guard parts.4?.addresses.first != nil else { throw SIPInboundCallError(.invalidInvite, "no Contact") }
        self.from = from
        self.to = to
        self.callID = callID
        self.assertedIdentities = parts.5
        self.offer = (parts.6?.isEmpty ?? true) ? nil : parts.6
        peerSupportsTimer = parts.7.contains { SIPText.equalsIgnoringCase($0, "timer") }
        peerAllowsUpdate = (try? invite.allow())?.contains(.update) ?? false
        var random: any RandomNumberGenerator & Sendable = random
        self.localTag = SIPIdentifier.tag(using: &random)
        self.requestURI = requestURI
        self.callHeaders = invite.headers.fields.filter { SIPText.hasPrefixIgnoringCase($0.name, "x-") }
        self.invite = invite
        self.source = source
        self.local = local
        self.configuration = configuration
        self.resolver = resolver
        // The layer draws only the To tags of the responses it makes itself (400, 481,
        // 482, 483, 503, a 200 to CANCEL without a provisional), which make no dialog.
        self.layer = SIPTransactionLayer(configuration: .init(timers: configuration.timers), random: random)
        self.random = random
    }

    /// When `handleTimeout(now:)` must run next; nil when nothing waits.
    public var nextDeadline: ContinuousClock.Instant? {
        var deadlines: [ContinuousClock.Instant] = []
        if let deadline = layer.nextDeadline { deadlines.append(deadline) }
        if let sessionTimer, phase == .answered || phase == .confirmed { deadlines.append(sessionTimer.nextDeadline) }
        if let localOfferDeadline { deadlines.append(localOfferDeadline) }
        return deadlines.min()
    }

    /// Whether the call is over and nothing of it is left to send or absorb: the shell
    /// may drop it.
    public var isFinished: Bool { phase == .ended && layer.transactionCount == 0 }

    /// The INVITE, as stamped by the layer once started.
    public var inviteRequest: SIPMessage { invite }

    // MARK: Starting

    /// Takes the INVITE into its server transaction and sends 100 Trying at once. A
    /// Require we do not support gets 420, a Session-Expires below our Min-SE 422, and
    /// the call ends `rejected`. Throws `invalidState` when called twice.
    public mutating func start(now: ContinuousClock.Instant) throws(SIPInboundCallError) -> [Output] {
        guard inviteTransaction == nil, phase == .proceeding else {
            throw SIPInboundCallError(.invalidState, "the call was started")
        }
        var out: [Output] = []
        for output in layer.receive(invite, from: source, now: now) {
            switch output {
            case .request(let request, _, let id):
                invite = request
                inviteTransaction = id
            case .send(let message, let hop):
                out.append(.send(message, to: hop))
            case .refused(let code, _, _):
                finish(.rejected(statusCode: code ?? 400), into: &out)
            default:
                break
            }
        }
        guard inviteTransaction != nil else {
            if !endReported { finish(.rejected(statusCode: 400), into: &out) }
            return out
        }
        if let unsupported = try? invite.unsupportedRequirements(supported: Self.supported), !unsupported.isEmpty {
            finalResponse(420, extra: [("Unsupported", unsupported.joined(separator: ", "))], now: now, into: &out)
            finish(.rejected(statusCode: 420), into: &out)
            return out
        }
        if let asked = try? invite.sessionExpires(), asked.interval < configuration.minimumSessionInterval {
            finalResponse(422, extra: [("Min-SE", String(configuration.minimumSessionInterval))], now: now, into: &out)
            finish(.rejected(statusCode: 422), into: &out)
            return out
        }
        if let id = inviteTransaction, let trying = try? invite.makeResponse(statusCode: 100),
           let outputs = try? layer.respond(trying, on: id, now: now) {
            process(outputs, now: now, into: &out)
        }
        return out
    }

    // MARK: The owner's decisions

    /// Tells the caller it rings: 180 Ringing, or 183 Session Progress carrying
    /// `earlySDP` (early media: the answer to the INVITE's offer, which the 200 then
    /// repeats). Either makes the early dialog. May be called more than once before the
    /// answer. Throws `invalidState` after a final response, `invalidSDP` for early media
    /// on an offerless INVITE.
    public mutating func ring(earlySDP: [UInt8]? = nil, now: ContinuousClock.Instant) throws(SIPInboundCallError) -> [Output] {
        guard phase == .proceeding, let id = inviteTransaction else {
            throw SIPInboundCallError(.invalidState, "no INVITE waits for a provisional response")
        }
        if let earlySDP {
            guard offer != nil else {
                throw SIPInboundCallError(.invalidSDP, "an offerless INVITE cannot take early media without 100rel")
            }
            guard !earlySDP.isEmpty else { throw SIPInboundCallError(.invalidSDP, "the early SDP is empty") }
        }
        var response = try dialogResponse(earlySDP == nil ? 180 : 183, sdp: earlySDP ?? [], session: nil)
        if let earlySDP {
            try? response.headers.add(name: "Content-Type", value: SIPContentType.sdp.description)
            response.body = earlySDP
            self.earlySDP = earlySDP
        }
        if dialog == nil { dialog = try? SIPDialog(uasRequest: invite, response: response) }
        var out: [Output] = []
        guard let outputs = try? layer.respond(response, on: id, now: now) else {
            throw SIPInboundCallError(.invalidState, "the INVITE's transaction is gone")
        }
        process(outputs, now: now, into: &out)
        return out
    }

    /// Answers the INVITE 200 OK with `sdp`: the answer to its offer, or our offer when it
    /// had none (the ACK then carries the answer, `confirmed(sdp:)`). The 200 carries our
    /// To tag, Contact, the INVITE's Record-Route and the session timer's Session-Expires,
    /// and is retransmitted until the ACK comes. Throws `invalidState` after a final
    /// response, `invalidSDP` for an empty SDP.
    public mutating func answer(sdp: [UInt8], now: ContinuousClock.Instant) throws(SIPInboundCallError) -> [Output] {
        guard phase == .proceeding, let id = inviteTransaction else {
            throw SIPInboundCallError(.invalidState, "no INVITE waits for an answer")
        }
        guard !sdp.isEmpty else { throw SIPInboundCallError(.invalidSDP, "a 200 to an INVITE carries SDP") }
        let session = initialSession()
        var response = try dialogResponse(200, sdp: sdp, session: session)
        do throws(SIPError) {
            try response.headers.add(name: "Content-Type", value: SIPContentType.sdp.description)
        } catch {
            throw SIPInboundCallError(.invalidArgument, error.description)
        }
        response.body = sdp
        let confirmed: SIPDialog
        do {
            confirmed = try SIPDialog(uasRequest: invite, response: response)
        } catch {
            throw SIPInboundCallError(.invalidInvite, "the INVITE cannot make a dialog: \(error)")
        }
        guard let outputs = try? layer.respond(response, on: id, now: now) else {
            throw SIPInboundCallError(.invalidState, "the INVITE's transaction is gone")
        }
        dialog = confirmed
        phase = .answered
        localSDP = sdp
        if let session {
            sessionTimer = SIPSessionTimer(interval: session.interval, refresher: session.refresher == .uac ? .them : .us, now: now)
        }
        var out: [Output] = []
        process(outputs, now: now, into: &out)
        return out
    }

    /// Refuses the INVITE with `statusCode` (400-699: 486 Busy Here, 480 Temporarily
    /// Unavailable, 603 Decline, 404 Not Found...) and `reasonPhrase` (RFC 3261's when
    /// nil). The call ends `rejected`. Throws `invalidState` after a final response,
    /// `invalidStatus` outside 400-699.
    public mutating func reject(statusCode: Int, reasonPhrase: String? = nil,
                                now: ContinuousClock.Instant) throws(SIPInboundCallError) -> [Output] {
        guard (400...699).contains(statusCode) else {
            throw SIPInboundCallError(.invalidStatus, "\(statusCode) does not refuse a call")
        }
        guard phase == .proceeding, inviteTransaction != nil else {
            throw SIPInboundCallError(.invalidState, "no INVITE waits for a final response")
        }
        var out: [Output] = []
        guard finalResponse(statusCode, reasonPhrase: reasonPhrase, now: now, into: &out) else {
            throw SIPInboundCallError(.invalidArgument, "the response cannot be written")
        }
        finish(.rejected(statusCode: statusCode), into: &out)
        return out
    }

    /// Hangs up: before the answer the INVITE gets 480 Temporarily Unavailable (nobody
    /// took the call; 487 is for the caller's own CANCEL); after the ACK we send BYE and
    /// the call ends when it is answered or times out; between our 200 and its ACK the BYE
    /// waits for the ACK (§15), or for 64·T1 without one. After the end it does nothing.
    public mutating func hangUp(now: ContinuousClock.Instant) -> [Output] {
        var out: [Output] = []
        switch phase {
        case .proceeding:
            guard inviteTransaction != nil else {
                finish(.localHangUp, into: &out)
                break
            }
            finalResponse(480, now: now, into: &out)
            finish(.localHangUp, into: &out)
        case .answered:
            hangUpAfterAck = true
        case .confirmed:
            endWithBye(.localHangUp, now: now, into: &out)
        case .ending, .ended:
            break
        }
        return out
    }

    // MARK: Inputs

    /// Takes a message received for this call from `hop`.
    public mutating func receive(_ message: SIPMessage, from hop: SIPHop, now: ContinuousClock.Instant) -> [Output] {
        var out: [Output] = []
        process(layer.receive(message, from: hop, now: now), now: now, into: &out)
        sendDueLocalOffer(now: now, into: &out)
        prune()
        return out
    }

    /// Fires what is due at `now`: retransmissions and transaction timers, session
    /// refreshes and expiry.
    public mutating func handleTimeout(now: ContinuousClock.Instant) -> [Output] {
        var out: [Output] = []
        process(layer.handleTimeout(now: now), now: now, into: &out)
        if phase == .confirmed, let timer = sessionTimer {
            if timer.expiryAt <= now {
                endWithBye(.sessionExpired, now: now, into: &out)
            } else if let refreshAt = timer.refreshAt, refreshAt <= now {
                sendRefresh(now: now, into: &out)
            }
        }
        sendDueLocalOffer(now: now, into: &out)
        prune()
        return out
    }

    /// The shell could not send `message` (one of this call's `send` outputs).
    public mutating func transportFailed(sending message: SIPMessage, now: ContinuousClock.Instant) -> [Output] {
        var out: [Output] = []
        process(layer.transportFailed(sending: message, now: now), now: now, into: &out)
        prune()
        return out
    }

    // MARK: The layer's outputs

    mutating func process(_ outputs: [SIPTransactionOutput], now: ContinuousClock.Instant, into out: inout [Output]) {
        for output in outputs {
            switch output {
            case .send(let message, let hop):
                out.append(.send(message, to: hop))
            case .response(let response, let id):
                if outgoing[id] != nil {
                    requestAnswered(response, transaction: id, now: now, into: &out)
                } else {
                    repeatedSuccess(response, into: &out)
                }
            case .strayResponse(let response, _):
                repeatedSuccess(response, into: &out)
            case .request(let request, _, let id):
                peerRequest(request, transaction: id, now: now, into: &out)
            case .ack(let ack, _, let acknowledged):
                peerAck(ack, acknowledged: acknowledged, now: now, into: &out)
            case .cancel(_, _, let invite):
                peerCancel(invite: invite, now: now, into: &out)
            case .timeout(let id), .transportError(let id):
                let isTimeout = if case .timeout = output { true } else { false }
                transactionFailed(id, timedOut: isTimeout, now: now, into: &out)
            case .unacknowledged(let id):
                unacknowledged(id, now: now, into: &out)
            case .refused:
                break
            }
        }
    }

    /// The ACK of our 200 to the INVITE, or of our 2xx to a re-INVITE.
    mutating func peerAck(_ ack: SIPMessage, acknowledged: SIPTransactionID?, now: ContinuousClock.Instant, into out: inout [Output]) {
        guard let acknowledged else { return }
        let sdp = (try? ack.sessionDescription()).flatMap { $0.isEmpty ? nil : $0 }
        if acknowledged == inviteTransaction, phase == .answered {
            phase = .confirmed
            out.append(.event(.confirmed(sdp: offer == nil ? sdp : nil)))
            if hangUpAfterAck { endWithBye(.localHangUp, now: now, into: &out) }
            return
        }
        guard let awaiting = awaitingAck, acknowledged == awaiting.transaction else { return }
        awaitingAck = nil
        out.append(.event(.remoteOfferCompleted(sdp: awaiting.offerless ? sdp : nil)))
    }

    mutating func peerCancel(invite id: SIPTransactionID, now: ContinuousClock.Instant, into out: inout [Output]) {
        if id == inviteTransaction {
            guard phase == .proceeding else { return }
            // §9.2: the CANCEL got its 200 from the layer; the INVITE gets 487.
            finalResponse(487, now: now, into: &out)
            finish(.canceled, into: &out)
            return
        }
        guard let pending = pendingOffer, pending.transaction == id else { return }
        pendingOffer = nil
        respond(to: pending.request, on: id, 487, now: now, into: &out)
        out.append(.event(.remoteOfferCancelled))
    }

    /// 64·T1 of 2xx retransmissions without an ACK (§13.3.1.4): the session ends with BYE.
    mutating func unacknowledged(_ id: SIPTransactionID, now: ContinuousClock.Instant, into out: inout [Output]) {
        if id == inviteTransaction, phase == .answered {
            phase = .confirmed
            endWithBye(.unacknowledged, now: now, into: &out)
        } else if awaitingAck?.transaction == id {
            awaitingAck = nil
            endWithBye(.unacknowledged, now: now, into: &out)
        }
    }

    mutating func transactionFailed(_ id: SIPTransactionID, timedOut: Bool, now: ContinuousClock.Instant, into out: inout [Output]) {
        if id == inviteTransaction {
            // Timer H (no ACK for our 3xx-6xx) changes nothing: the call had ended.
            if !timedOut, phase == .proceeding || phase == .answered { finish(.transportError, into: &out) }
            return
        }
        guard let sent = outgoing[id] else { return }
        outgoing[id] = nil
        if id == refreshTransaction { refreshTransaction = nil }
        switch sent.purpose {
        case .bye:
            finish(endingReason, into: &out)
        case .refresh, .offer:
            sessionRequestFailed(offer: sent.purpose == .offer, timedOut: timedOut, now: now, into: &out)
        }
    }

    // MARK: Helpers

    /// A final non-2xx response to the INVITE, with our tag; false when it could not go.
    @discardableResult
    mutating func finalResponse(_ code: Int, reasonPhrase: String? = nil, extra: [(String, String)] = [],
                                now: ContinuousClock.Instant, into out: inout [Output]) -> Bool {
        guard let id = inviteTransaction,
              var response = try? invite.makeResponse(statusCode: code, reasonPhrase: reasonPhrase, toTag: localTag) else { return false }
        for (name, value) in extra { try? response.headers.add(name: name, value: value) }
        if let userAgent = configuration.userAgent { try? response.headers.add(name: "Server", value: userAgent) }
        guard let outputs = try? layer.respond(response, on: id, now: now) else { return false }
        process(outputs, now: now, into: &out)
        return true
    }

    /// A 18x or 2xx to the INVITE: our tag, Contact, the INVITE's Record-Route (§12.1.1),
    /// what we allow and support, and the session timer.
    func dialogResponse(_ code: Int, sdp: [UInt8], session: SIPSessionExpires?) throws(SIPInboundCallError) -> SIPMessage {
        do throws(SIPError) {
            var response = try invite.makeResponse(statusCode: code, toTag: localTag)
            for value in invite.headers.values("record-route") { try response.headers.add(name: "Record-Route", value: value) }
            try response.headers.add(name: "Contact", value: local.contact.description)
            try addCapabilities(to: &response.headers)
            if let session { try addSession(session, to: &response.headers) }
            if let userAgent = configuration.userAgent { try response.headers.add(name: "Server", value: userAgent) }
            return response
        } catch {
            throw SIPInboundCallError(.invalidArgument, error.description)
        }
    }

    /// The Session-Expires of our 200 (RFC 4028 §9): the INVITE's interval, else ours if
    /// configured; its refresher, else the caller when it supports timers (it then must:
    /// Require: timer), else us.
    func initialSession() -> SIPSessionExpires? {
        let asked = try? invite.sessionExpires()
        guard let interval = asked?.interval ?? configuration.sessionInterval else { return nil }
        let refresher = asked?.refresher ?? (peerSupportsTimer ? .uac : .uas)
        return SIPSessionExpires(interval: max(interval, configuration.minimumSessionInterval), refresher: refresher)
    }

    /// Reports the end once and stops the session timer (transactions keep theirs until
    /// they finish).
    mutating func finish(_ end: End, into out: inout [Output]) {
        phase = .ended
        sessionTimer = nil
        pendingOffer = nil
        guard !endReported else { return }
        endReported = true
        out.append(.event(.ended(end)))
    }

    /// A top Via for a request to `hop`, with a fresh branch and `rport`.
    mutating func makeVia(for hop: SIPHop) -> SIPVia? {
        try? SIPVia(transport: hop.transport.viaName, host: local.viaHost, port: local.viaPort,
                    branch: SIPIdentifier.branch(using: &random), parameters: [SIPParameter(name: "rport")])
    }

    /// Forgets the requests whose transactions ended.
    mutating func prune() {
        outgoing = outgoing.filter { layer.contains($0.key) }
    }
}
