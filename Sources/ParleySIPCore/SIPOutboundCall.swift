public import ParleySIP

/// The UAC side of one back-to-back user agent leg, sans-I/O: parleyd calls a SIP
/// endpoint or a trunk with it. It owns a `SIPTransactionLayer` for its transactions and
/// the `SIPDialog` its INVITE makes.
///
/// `start(now:)` sends the INVITE. Then every message received for the call (the shell
/// dispatches by Call-ID), each timeout (`nextDeadline`) and the owner's decisions go in;
/// messages to send and `Event`s come out. What it does:
///
/// - Provisional responses are reported; the first SDP (in a 18x or the 2xx) is the answer.
/// - A 2xx is acknowledged by an ACK built by the dialog and sent toward its remote target
///   (the 2xx's Contact, through its Record-Route), never to where the INVITE went; each
///   retransmitted 2xx gets that ACK again. Another fork's 2xx is acknowledged and ended
///   with a BYE (§13.2.2.4).
/// - 401/407 are answered with the invitation's digest credentials: a new INVITE, CSeq + 1,
///   a new branch (§22.2). A second challenge of a realm already answered (not stale) ends
///   the call `rejected`.
/// - `cancel(now:)` sends CANCEL (§9.1) once a provisional response came (until then it
///   waits for one); the 487 is acknowledged by the transaction.
/// - `hangUp(now:)` sends BYE in its own transaction; any final response or a timeout ends
///   the call. A BYE from the far side is answered 200 and ends it.
/// - A re-INVITE or UPDATE with an offer from the far side (hold, resume) is handed to the
///   owner, which answers with the SDP it chose (`answerRemoteOffer`) or refuses it
///   (`rejectRemoteOffer`, 488); our 2xx is retransmitted until its ACK. Glare gets 491,
///   a second offer before the first is answered 500 with Retry-After (§14.2).
/// - OPTIONS in the dialog is answered 200; INFO 200 and reported; other methods 405/501.
/// - Session timers (RFC 4028): the INVITE asks for `sessionInterval`; if the 2xx makes us
///   the refresher we send UPDATE (or re-INVITE) at half the interval; if the far side
///   refreshes and does not, we send BYE before the session expires and report it.
///
/// Randomness (tags, branches, Call-ID, cnonces) comes from the generator given at init.
public struct SIPOutboundCall: Sendable {
    /// Where the call is.
    public enum Phase: String, Sendable, Hashable {
        /// The INVITE went out; no provisional response yet.
        case calling
        /// A provisional response came; no final one yet.
        case early
        /// The far side answered and the call is up.
        case answered
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
        /// The BYE ending another fork's dialog (§13.2.2.4): its outcome does not matter.
        case forkBye
    }

    /// A request of ours in the dialog, kept to send it again with credentials.
    struct Outgoing: Sendable {
        var purpose: Purpose
        var request: SIPMessage
        /// Its header fields after the dialog's own, credentials left out.
        var headers: SIPHeaders
        var contentType: SIPContentType?
        var challenges: Int
    }

    /// The far side's re-INVITE or UPDATE waiting for the owner's answer.
    struct PendingOffer: Sendable {
        var transaction: SIPTransactionID
        var request: SIPMessage
        var sdp: [UInt8]?
    }

    enum CancelState: Sendable, Hashable {
        case none
        /// `cancel` was called before any provisional response: CANCEL goes with the first.
        case requested
        /// CANCEL sent; the call ends `cancelled` by this time if no final response came.
        case sent(giveUp: ContinuousClock.Instant)
    }

    /// The configuration.
    public let configuration: Configuration
    /// The call's Call-ID (for the shell to dispatch received messages by).
    public let callID: String
    /// Where the call is.
    public internal(set) var phase: Phase = .calling
    /// The confirmed dialog, once answered.
    public internal(set) var dialog: SIPDialog?

    let invitation: Invitation
    let resolver: any SIPHopResolver
    var random: any RandomNumberGenerator & Sendable
    var layer: SIPTransactionLayer
    var digest: SIPDigestClient?

    /// The INVITE in flight (a new one after each challenge).
    var invite: SIPMessage
    var inviteTransaction: SIPTransactionID?
    var inviteSequence: UInt32 = 1
    var inviteChallenges = 0
    /// Authorization and Proxy-Authorization fields of the current INVITE, which its ACK
    /// repeats (§13.2.2.4).
    var credentialFields: [SIPHeaders.Field] = []
    var provisionalReceived = false
    var cancelState: CancelState = .none
    var answerSDP: [UInt8]?
    var earlyDialogs: [String: SIPDialog] = [:]
    /// The ACK of the 2xx and where it went, sent again for each retransmitted 2xx.
    var ack: (message: SIPMessage, hop: SIPHop)?
    /// The ACK of the 2xx to our latest re-INVITE, by that INVITE's CSeq.
    var reInviteAck: (sequence: UInt32, message: SIPMessage, hop: SIPHop)?
    /// Forks whose 2xx we acknowledged and ended (tag to ACK), bounded.
    var endedForks: [String: (message: SIPMessage, hop: SIPHop)] = [:]
    var localSDP: [UInt8]
    var peerAllowsUpdate = false
    var sessionTimer: SIPSessionTimer?
    /// Our session refresh in flight: an offer of the far side meanwhile is glare (491).
    var refreshTransaction: SIPTransactionID?
    var outgoing: [SIPTransactionID: Outgoing] = [:]
    var pendingOffer: PendingOffer?
    /// Our re-INVITE with an offer, in flight or waiting to go.
    var localOffer: SIPLocalOffer?
    /// Our 2xx to the far side's re-INVITE, waiting for its ACK; `offerless` when the
    /// re-INVITE had no SDP (the ACK carries the answer).
    var awaitingAck: (transaction: SIPTransactionID, offerless: Bool)?
    /// Why the call ends once our BYE completes.
    var endingReason: End = .localHangUp
    var endReported = false

    /// The most forks whose 2xx we acknowledge and end, and early dialogs we keep.
    static let maxForks = 16
    /// Headers the call writes itself, which `Invitation.headers` may not set.
    static let reservedHeaders: Set<String> = [
        "via", "from", "to", "call-id", "cseq", "contact", "max-forwards", "content-type", "content-length", "allow",
        "supported", "session-expires", "min-se", "authorization", "proxy-authorization",
    ]
    /// The methods we accept in the dialog.
    static let allowed: [SIPMethod] = [.invite, .ack, .cancel, .bye, .options, .info, .update]

    /// A call for `invitation`, not started. Throws `invalidInvitation` when the INVITE
    /// cannot be written (a reserved header in `headers`, a malformed Call-ID).
    /// `resolver` turns the dialog's targets into hops; `random` draws the tags, branches,
    /// Call-ID and cnonces: `SystemRandomNumberGenerator` in parleyd, a seeded one in tests.
    public init(
        invitation: Invitation, configuration: Configuration = Configuration(),
        resolver: some SIPHopResolver = SIPLiteralHopResolver(), random: some RandomNumberGenerator & Sendable
    ) throws(SIPOutboundCallError) {
        var random: any RandomNumberGenerator & Sendable = random
        var invitation = invitation
        for field in invitation.headers where Self.reservedHeaders.contains(field.canonicalName) {
            throw SIPOutboundCallError(.invalidInvitation, "\(field.name) is written by the call itself")
        }
        if invitation.from.tag == nil {
            do {
                invitation.from.setParameter(try SIPParameter(name: "tag", value: SIPIdentifier.tag(using: &random)))
            } catch {
                throw SIPOutboundCallError(.invalidInvitation, error.description)
            }
        }
        invitation.to.removeParameter(named: "tag")
        self.invitation = invitation
        self.configuration = configuration
        self.callID = invitation.callID ?? SIPIdentifier.callID(host: invitation.viaHost.addressBytes == nil ? invitation.viaHost.text : nil,
                                                                using: &random)
        self.resolver = resolver
        self.digest = invitation.credentials
        self.localSDP = invitation.offer
        // The layer draws only the To tags of the responses it makes itself (400, 481,
        // 482, 483, 503, a 200 to CANCEL), which make no dialog: a copy will do.
        self.layer = SIPTransactionLayer(configuration: .init(timers: configuration.timers), random: random)
        self.invite = try Self.makeInvite(invitation: invitation, configuration: configuration, callID: callID, sequence: 1,
                                          credentials: [], branch: SIPIdentifier.branch(using: &random))
        self.random = random
    }

    /// When `handleTimeout(now:)` must run next; nil when nothing waits.
    public var nextDeadline: ContinuousClock.Instant? {
        var deadlines: [ContinuousClock.Instant] = []
        if let deadline = layer.nextDeadline { deadlines.append(deadline) }
        if case .sent(let giveUp) = cancelState, phase == .calling || phase == .early { deadlines.append(giveUp) }
        if let sessionTimer, phase == .answered { deadlines.append(sessionTimer.nextDeadline) }
        if let localOfferDeadline { deadlines.append(localOfferDeadline) }
        return deadlines.min()
    }

    /// Whether the call is over and nothing of it is left to send or absorb: the shell
    /// may drop it.
    public var isFinished: Bool { phase == .ended && layer.transactionCount == 0 }

    /// The INVITE the call sends (or sent last, after a challenge).
    public var inviteRequest: SIPMessage { invite }

    // MARK: Starting

    /// Sends the INVITE.
    public mutating func start(now: ContinuousClock.Instant) -> [Output] {
        guard inviteTransaction == nil, phase == .calling else { return [] }
        var out: [Output] = []
        sendInvite(now: now, into: &out)
        return out
    }

    /// The INVITE of the current CSeq and credentials, with a new branch.
    func makeInvite(branch: String) throws(SIPOutboundCallError) -> SIPMessage {
        try Self.makeInvite(invitation: invitation, configuration: configuration, callID: callID, sequence: inviteSequence,
                            credentials: credentialFields, branch: branch)
    }

    static func makeInvite(
        invitation: Invitation, configuration: Configuration, callID: String, sequence: UInt32,
        credentials: [SIPHeaders.Field], branch: String
    ) throws(SIPOutboundCallError) -> SIPMessage {
        do throws(SIPError) {
            let via = try SIPVia(transport: invitation.destination.transport.viaName, host: invitation.viaHost,
                                 port: invitation.viaPort, branch: branch, parameters: [SIPParameter(name: "rport")])
            var request = try SIPMessage.request(
                method: .invite, uri: invitation.requestURI, via: via, from: invitation.from, to: invitation.to,
                callID: callID, cseq: sequence, contact: invitation.contact,
                contentType: invitation.offer.isEmpty ? nil : .sdp, body: invitation.offer)
            try request.headers.add(name: "Allow", value: Self.allowed.map(\.token).joined(separator: ", "))
            try request.headers.add(name: "Supported", value: "timer")
            if let interval = configuration.sessionInterval {
                try request.headers.add(name: "Session-Expires", value: String(interval))
                try request.headers.add(name: "Min-SE", value: String(configuration.minimumSessionInterval))
            }
            if let userAgent = configuration.userAgent { try request.headers.add(name: "User-Agent", value: userAgent) }
            for field in invitation.headers { try request.headers.add(name: field.name, value: field.value) }
            for field in credentials { try request.headers.add(name: field.name, value: field.value) }
            return request
        } catch {
            throw SIPOutboundCallError(.invalidInvitation, error.description)
        }
    }

    mutating func sendInvite(now: ContinuousClock.Instant, into out: inout [Output]) {
        do {
            let (id, outputs) = try layer.sendRequest(invite, to: invitation.destination, now: now)
            inviteTransaction = id
            process(outputs, now: now, into: &out)
        } catch {
            // A fresh layer takes a request with a fresh branch; nothing left to try.
            finish(.transportError, into: &out)
        }
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

    /// Fires what is due at `now`: retransmissions and transaction timers, the wait after
    /// a CANCEL, session refreshes and expiry.
    public mutating func handleTimeout(now: ContinuousClock.Instant) -> [Output] {
        var out: [Output] = []
        process(layer.handleTimeout(now: now), now: now, into: &out)
        if case .sent(let giveUp) = cancelState, giveUp <= now, phase == .calling || phase == .early {
            // §9.1: no final response 64·T1 after the CANCEL: the INVITE is given up.
            finish(.cancelled, into: &out)
        }
        if phase == .answered, let timer = sessionTimer {
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

    /// Cancels the call before it is answered (RFC 3261 §9.1). The CANCEL goes once a
    /// provisional response came; a 2xx that crosses it is acknowledged and ended with a
    /// BYE. After the answer this hangs up; after the end it does nothing.
    public mutating func cancel(now: ContinuousClock.Instant) -> [Output] {
        var out: [Output] = []
        switch phase {
        case .calling, .early:
            guard cancelState == .none else { break }
            if provisionalReceived {
                sendCancel(now: now, into: &out)
            } else {
                cancelState = .requested
            }
        case .answered:
            endWithBye(.localHangUp, now: now, into: &out)
        case .ending, .ended:
            break
        }
        prune()
        return out
    }

    /// Hangs up: BYE after the answer (the call ends when it is answered or times out),
    /// CANCEL before it.
    public mutating func hangUp(now: ContinuousClock.Instant) -> [Output] {
        cancel(now: now)
    }

    // MARK: The layer's outputs

    mutating func process(_ outputs: [SIPTransactionOutput], now: ContinuousClock.Instant, into out: inout [Output]) {
        for output in outputs {
            switch output {
            case .send(let message, let hop):
                out.append(.send(message, to: hop))
            case .response(let response, let id):
                if id == inviteTransaction {
                    inviteResponse(response, now: now, into: &out)
                } else if outgoing[id] != nil {
                    dialogResponse(response, transaction: id, now: now, into: &out)
                } else if let code = response.statusCode, (200..<300).contains(code) {
                    // A re-INVITE's 2xx again, after we took the first.
                    repeatedSuccess(response, now: now, into: &out)
                }
            case .strayResponse(let response, _):
                strayResponse(response, now: now, into: &out)
            case .request(let request, _, let id):
                peerRequest(request, transaction: id, now: now, into: &out)
            case .ack(let ack, _, let acknowledged):
                peerAck(ack, acknowledged: acknowledged, into: &out)
            case .cancel(_, _, let invite):
                peerCancel(invite: invite, now: now, into: &out)
            case .timeout(let id), .transportError(let id):
                let isTimeout = if case .timeout = output { true } else { false }
                transactionFailed(id, timedOut: isTimeout, now: now, into: &out)
            case .unacknowledged(let id):
                if awaitingAck?.transaction == id {
                    awaitingAck = nil
                    endWithBye(.unacknowledged, now: now, into: &out)
                }
            case .refused:
                break
            }
        }
    }

    // MARK: Responses to the INVITE

    mutating func inviteResponse(_ response: SIPMessage, now: ContinuousClock.Instant, into out: inout [Output]) {
        guard let code = response.statusCode else { return }
        guard phase == .calling || phase == .early else {
            if (200..<300).contains(code) { repeatedSuccess(response, now: now, into: &out) }
            return
        }
        switch code {
        case 100..<200:
            provisional(response, code: code, into: &out)
            if cancelState == .requested { sendCancel(now: now, into: &out) }
        case 200..<300:
            success(response, now: now, into: &out)
        case 401 where cancelState == .none, 407 where cancelState == .none:
            challenged(response, code: code, now: now, into: &out)
        default:
            if cancelState != .none {
                finish(.cancelled, into: &out)
            } else {
                finish(.rejected(statusCode: code, reasonPhrase: response.reasonPhrase ?? "", headers: Self.xHeaders(of: response)), into: &out)
            }
        }
    }

    mutating func provisional(_ response: SIPMessage, code: Int, into out: inout [Output]) {
        provisionalReceived = true
        phase = .early
        if code > 100, let tag = (try? response.to())?.tag {
            if var early = earlyDialogs[tag] {
                early.update(withResponse: response, to: invite)
                earlyDialogs[tag] = early
            } else if earlyDialogs.count < Self.maxForks, let early = try? SIPDialog(uacRequest: invite, response: response) {
                earlyDialogs[tag] = early
            }
        }
        var sdp: [UInt8]?
        if answerSDP == nil, let body = try? response.sessionDescription(), !body.isEmpty {
            answerSDP = body
            sdp = body
        }
        out.append(.event(.provisional(statusCode: code, reasonPhrase: response.reasonPhrase ?? "", sdp: sdp,
                                       headers: Self.xHeaders(of: response))))
    }

    mutating func success(_ response: SIPMessage, now: ContinuousClock.Instant, into out: inout [Output]) {
        guard let tag = (try? response.to())?.tag else {
            finish(.protocolError("a 2xx without a To tag cannot be acknowledged"), into: &out)
            return
        }
        var confirmed: SIPDialog
        if var early = earlyDialogs[tag] {
            early.update(withResponse: response, to: invite)
            confirmed = early
        } else {
            do {
                confirmed = try SIPDialog(uacRequest: invite, response: response)
            } catch {
                finish(.protocolError("the 2xx cannot make a dialog: \(error)"), into: &out)
                return
            }
        }
        earlyDialogs = [:]
        guard let sent = acknowledge(confirmed, now: now, into: &out) else { return }
        ack = sent
        dialog = confirmed
        phase = .answered
        if case .none = cancelState {} else {
            // The 2xx crossed our CANCEL: the call was answered, so it ends with a BYE.
            endWithBye(.cancelled, now: now, into: &out)
            return
        }
        peerAllowsUpdate = (try? response.allow())?.contains(.update) ?? false
        if let value = try? response.sessionExpires() {
            sessionTimer = SIPSessionTimer(answering: value, now: now)
        }
        if answerSDP == nil, let body = try? response.sessionDescription(), !body.isEmpty { answerSDP = body }
        out.append(.event(.answered(sdp: answerSDP, headers: Self.xHeaders(of: response))))
    }

    /// Sends the ACK of a 2xx in `dialog` toward its remote target; nil (and the call
    /// ended `noRoute`) when that cannot be resolved.
    mutating func acknowledge(_ dialog: SIPDialog, now: ContinuousClock.Instant, into out: inout [Output]) -> (message: SIPMessage, hop: SIPHop)? {
        guard let hop = resolver.hop(for: dialog.nextHop) else {
            finish(.noRoute(dialog.nextHop), into: &out)
            return nil
        }
        var extra = SIPHeaders()
        for field in credentialFields { try? extra.add(name: field.name, value: field.value) }
        guard let via = makeVia(for: hop),
              let ackMessage = try? dialog.makeAck(inviteSequence: inviteSequence, via: via, headers: extra) else {
            finish(.protocolError("the ACK cannot be written"), into: &out)
            return nil
        }
        out.append(.send(ackMessage, to: hop))
        return (ackMessage, hop)
    }

    /// A 2xx after the call was answered: a retransmission (the ACK again) or another
    /// fork's answer (acknowledged and ended with a BYE, §13.2.2.4).
    mutating func repeatedSuccess(_ response: SIPMessage, now: ContinuousClock.Instant, into out: inout [Output]) {
        guard let tag = (try? response.to())?.tag, let cseq = try? response.cseq(), cseq.method == .invite else { return }
        if let dialog, tag == dialog.id.remoteTag {
            if cseq.sequence == inviteSequence, let ack {
                out.append(.send(ack.message, to: ack.hop))
            } else if let reInviteAck, cseq.sequence == reInviteAck.sequence {
                out.append(.send(reInviteAck.message, to: reInviteAck.hop))
            }
            return
        }
        guard cseq.sequence == inviteSequence else { return }
        if let fork = endedForks[tag] {
            out.append(.send(fork.message, to: fork.hop))
            return
        }
        guard endedForks.count < Self.maxForks, var fork = try? SIPDialog(uacRequest: invite, response: response),
              let hop = resolver.hop(for: fork.nextHop), let via = makeVia(for: hop),
              let forkAck = try? fork.makeAck(inviteSequence: inviteSequence, via: via) else { return }
        out.append(.send(forkAck, to: hop))
        endedForks[tag] = (forkAck, hop)
        if let byeVia = makeVia(for: hop), let bye = try? fork.makeRequest(.bye, via: byeVia),
           let (id, outputs) = try? layer.sendRequest(bye, to: hop, now: now) {
            outgoing[id] = Outgoing(purpose: .forkBye, request: bye, headers: SIPHeaders(), contentType: nil, challenges: 0)
            process(outputs, now: now, into: &out)
        }
    }

    mutating func strayResponse(_ response: SIPMessage, now: ContinuousClock.Instant, into out: inout [Output]) {
        guard let code = response.statusCode, (200..<300).contains(code), (try? response.callID()) == callID,
              (try? response.cseq())?.method == .invite else { return }
        // A 2xx after Timer M: our ACK was lost; the far side will hang up unless it comes.
        if phase == .calling || phase == .early {
            success(response, now: now, into: &out)
        } else {
            repeatedSuccess(response, now: now, into: &out)
        }
    }

    /// A 401 or 407: the INVITE again with credentials, a new CSeq and branch (§22.2).
    mutating func challenged(_ response: SIPMessage, code: Int, now: ContinuousClock.Instant, into out: inout [Output]) {
        let rejected = End.rejected(statusCode: code, reasonPhrase: response.reasonPhrase ?? "", headers: Self.xHeaders(of: response))
        guard var client = digest, inviteChallenges < configuration.maxChallenges else {
            finish(rejected, into: &out)
            return
        }
        guard let fields = answer(response, code: code, request: invite, client: &client) else {
            finish(rejected, into: &out)
            return
        }
        digest = client
        inviteChallenges += 1
        let (next, overflow) = inviteSequence.addingReportingOverflow(1)
        guard !overflow else {
            finish(rejected, into: &out)
            return
        }
        inviteSequence = next
        credentialFields = fields
        provisionalReceived = false
        earlyDialogs = [:]
        phase = .calling
        do {
            invite = try makeInvite(branch: SIPIdentifier.branch(using: &random))
        } catch {
            finish(rejected, into: &out)
            return
        }
        sendInvite(now: now, into: &out)
    }

    /// The credentials answering the challenges of `response` to `request`: the fields to
    /// carry (the other kind kept), or nil when the challenge cannot or must not be
    /// answered (no usable challenge, a refused password, too many stale nonces).
    mutating func answer(_ response: SIPMessage, code: Int, request: SIPMessage, client: inout SIPDigestClient) -> [SIPHeaders.Field]? {
        let challengeName = code == 401 ? "WWW-Authenticate" : "Proxy-Authenticate"
        let credentialsName = code == 401 ? "Authorization" : "Proxy-Authorization"
        let carried = request.headers.fields.filter { SIPText.equalsIgnoringCase($0.name, credentialsName) }
        let previous = carried.compactMap { try? SIPDigestCredentials(parsing: $0.value) }
        guard let method = request.method, let uri = request.requestURI,
              let answers = try? client.answer(challengeValues: response.headers.values(challengeName), method: method.token,
                                               requestURI: uri.description, body: request.body, previous: previous, using: &random) else {
            return nil
        }
        // The other kind of credentials (a proxy's and the far end's) is kept.
        var fields = SIPHeaders()
        for field in request.headers.fields where Self.isCredentials(field) && !SIPText.equalsIgnoringCase(field.name, credentialsName) {
            try? fields.add(name: field.name, value: field.value)
        }
        for credentials in answers {
            guard let value = try? credentials.serialized() else { return nil }
            try? fields.add(name: credentialsName, value: value)
        }
        return fields.fields
    }

    mutating func sendCancel(now: ContinuousClock.Instant, into out: inout [Output]) {
        cancelState = .sent(giveUp: now + configuration.timers.transactionTimeout)
        // §9.1: the INVITE's Request-URI, Call-ID, From, To (no tag), CSeq number and top
        // Via (its branch too), method CANCEL, to the INVITE's hop.
        guard let viaText = invite.headers.values("via").first, let via = try? SIPVia(parsing: viaText),
              var cancel = try? SIPMessage.request(method: .cancel, uri: invitation.requestURI, via: via, from: invitation.from,
                                                   to: invitation.to, callID: callID, cseq: inviteSequence) else { return }
        for route in invite.headers["route"] { try? cancel.headers.add(name: "Route", value: route) }
        if let userAgent = configuration.userAgent { try? cancel.headers.add(name: "User-Agent", value: userAgent) }
        if let (_, outputs) = try? layer.sendRequest(cancel, to: invitation.destination, now: now) {
            process(outputs, now: now, into: &out)
        }
    }

    // MARK: Transactions that failed

    mutating func transactionFailed(_ id: SIPTransactionID, timedOut: Bool, now: ContinuousClock.Instant, into out: inout [Output]) {
        if id == inviteTransaction {
            guard phase == .calling || phase == .early else { return }
            if cancelState != .none {
                finish(.cancelled, into: &out)
            } else {
                finish(timedOut ? .timedOut : .transportError, into: &out)
            }
            return
        }
        guard let request = outgoing[id] else { return }
        outgoing[id] = nil
        switch request.purpose {
        case .bye:
            finish(endingReason, into: &out)
        case .refresh, .offer:
            sessionRequestFailed(offer: request.purpose == .offer, timedOut: timedOut, now: now, into: &out)
        case .forkBye:
            break
        }
    }

    // MARK: Helpers

    /// Reports the end once and stops every timer of the call (transactions keep theirs
    /// until they finish).
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
        try? SIPVia(transport: hop.transport.viaName, host: invitation.viaHost, port: invitation.viaPort,
                    branch: SIPIdentifier.branch(using: &random), parameters: [SIPParameter(name: "rport")])
    }

    /// Forgets the requests whose transactions ended.
    mutating func prune() {
        outgoing = outgoing.filter { layer.contains($0.key) }
    }

    /// The fields of `message` whose name starts with `x-`.
    static func xHeaders(of message: SIPMessage) -> [SIPHeaders.Field] {
        message.headers.fields.filter { SIPText.hasPrefixIgnoringCase($0.name, "x-") }
    }
}
