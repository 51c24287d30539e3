public import ParleySIP
import ParleyWireCore

/// The SIP transaction layer (RFC 3261 §17, with RFC 6026's changes) as a sans-I/O value:
/// it owns every client and server transaction of its transaction user (TU), keyed as
/// §17.1.3 and §17.2.3 say, and their timers.
///
/// Inputs: messages received (parsed, with the hop they came from), the TU's requests and
/// responses, transport failures, and the time. Outputs (`SIPTransactionOutput`, in order):
/// messages to send with their hop, and what the TU must hear. `nextDeadline` says when to
/// call `handleTimeout(now:)`. It reads no clock and opens no socket.
///
/// Besides the four state machines it does what RFC 3261 puts between the transport and
/// the TU's core, so a TU cannot forget it:
/// - validates each message (`SIPMessage.validate()`), answering a bad request 400 (or
///   what the error says) statelessly and dropping a bad response;
/// - stamps the top Via of a received request with `received` and `rport` (§18.2.1,
///   RFC 3581) and sends responses where §18.2.2 says (the source address and port when
///   `rport` was asked for);
/// - answers a CANCEL itself: 200 when it matches an INVITE server transaction (the TU
///   then answers the INVITE 487), 481 when it does not (§9.2);
/// - detects merged requests (§8.2.2.2: same From tag, Call-ID and CSeq as a live server
///   transaction, another branch, no To tag) and answers them 482;
/// - answers 483 to a request whose Max-Forwards is 0 (except OPTIONS), so a loop through
///   two back-to-back user agents ends;
/// - retransmits a 2xx to an INVITE until its ACK, for 64·T1 (§13.3.1.4), then reports
///   `unacknowledged`;
/// - passes responses that match no transaction up as strays (a 2xx retransmitted after
///   Timer M), and ACKs for 2xx up to the TU.
///
/// Untrusted input is bounded: at most `Configuration.maxTransactions` transactions live
/// at once (a new request past that is answered 503), each for at most 64·T1 plus T4.
public struct SIPTransactionLayer: Sendable {
    /// Timers and limits.
    public struct Configuration: Sendable, Hashable {
        /// T1, T2, T4 and the timers derived from them.
        public var timers: SIPTimers
        /// The most transactions (client and server) at once; past it, new requests are
        /// answered 503 and `sendRequest` throws.
        public var maxTransactions: Int
        /// Whether a request with Max-Forwards 0 is answered 483 (OPTIONS excepted).
        public var rejectsExhaustedMaxForwards: Bool

        /// The defaults: RFC 3261's timers, 10,000 transactions, 483 on.
        public init(timers: SIPTimers = SIPTimers(), maxTransactions: Int = 10_000, rejectsExhaustedMaxForwards: Bool = true) {
            self.timers = timers
            self.maxTransactions = max(1, maxTransactions)
            self.rejectsExhaustedMaxForwards = rejectsExhaustedMaxForwards
        }
    }

    private enum Transaction: Sendable {
        case inviteClient(SIPInviteClientTransaction)
        case nonInviteClient(SIPNonInviteClientTransaction)
        case inviteServer(SIPInviteServerTransaction)
        case nonInviteServer(SIPNonInviteServerTransaction)

        var nextDeadline: ContinuousClock.Instant? {
            switch self {
            case .inviteClient(let t): t.nextDeadline
            case .nonInviteClient(let t): t.nextDeadline
            case .inviteServer(let t): t.nextDeadline
            case .nonInviteServer(let t): t.nextDeadline
            }
        }

        var isTerminated: Bool {
            switch self {
            case .inviteClient(let t): t.state == .terminated
            case .nonInviteClient(let t): t.state == .terminated
            case .inviteServer(let t): t.state == .terminated
            case .nonInviteServer(let t): t.state == .terminated
            }
        }

        var serverRequest: SIPMessage? {
            switch self {
            case .inviteServer(let t): t.request
            case .nonInviteServer(let t): t.request
            case .inviteClient, .nonInviteClient: nil
            }
        }

        mutating func handleTimeout(now: ContinuousClock.Instant, outputs: inout [SIPTransactionOutput]) {
            switch self {
            case .inviteClient(var t):
                t.handleTimeout(now: now, outputs: &outputs)
                self = .inviteClient(t)
            case .nonInviteClient(var t):
                t.handleTimeout(now: now, outputs: &outputs)
                self = .nonInviteClient(t)
            case .inviteServer(var t):
                t.handleTimeout(now: now, outputs: &outputs)
                self = .inviteServer(t)
            case .nonInviteServer(var t):
                t.handleTimeout(now: now, outputs: &outputs)
                self = .nonInviteServer(t)
            }
        }

        mutating func transportFailed(outputs: inout [SIPTransactionOutput]) {
            switch self {
            case .inviteClient(var t):
                t.transportFailed(outputs: &outputs)
                self = .inviteClient(t)
            case .nonInviteClient(var t):
                t.transportFailed(outputs: &outputs)
                self = .nonInviteClient(t)
            case .inviteServer(var t):
                t.transportFailed(outputs: &outputs)
                self = .inviteServer(t)
            case .nonInviteServer(var t):
                t.transportFailed(outputs: &outputs)
                self = .nonInviteServer(t)
            }
        }
    }

    private enum TimerKey: Sendable, Hashable {
        case transaction(SIPTransactionID)
        case success(SIPTransactionID)
    }

    /// What §8.2.2.2 compares to find a merged request.
    private struct MergeKey: Sendable, Hashable {
        var callID: String
        var fromTag: String
        var sequence: UInt32
        var method: String

        init?(_ request: SIPMessage) {
            guard let method = request.method, method != .ack, method != .cancel,
                  let callID = try? request.callID(), let cseq = try? request.cseq(),
                  let from = try? request.from(), let fromTag = from.tag else { return nil }
            self.callID = callID
            self.fromTag = fromTag
            self.sequence = cseq.sequence
            self.method = method.token
        }
    }

    /// The configuration.
    public let configuration: Configuration
    private var transactions: [SIPTransactionID: Transaction] = [:]
    private var timers = DeadlineQueue<TimerKey>()
    private var successes: [SIPTransactionID: SIPSuccessRetransmission] = [:]
    private var successByAck: [SIPSuccessRetransmission.AckKey: SIPTransactionID] = [:]
    private var merged: [MergeKey: SIPTransactionID] = [:]
    private var random: any RandomNumberGenerator & Sendable

    /// A layer without transactions. `random` draws the To tags of the responses the layer
    /// sends itself: `SystemRandomNumberGenerator` in parleyd, a seeded one in tests.
    public init(configuration: Configuration = Configuration(), random: some RandomNumberGenerator & Sendable) {
        self.configuration = configuration
        self.random = random
    }

    /// When `handleTimeout(now:)` must run next; nil when no timer runs.
    public var nextDeadline: ContinuousClock.Instant? { timers.earliest }

    /// The live transactions.
    public var transactionCount: Int { transactions.count }

    /// Whether the transaction is live (not yet terminated).
    public func contains(_ id: SIPTransactionID) -> Bool { transactions[id] != nil }

    /// Whether a server transaction has sent its final response; nil when it is not live.
    public func hasFinalResponse(_ id: SIPTransactionID) -> Bool? {
        switch transactions[id] {
        case .inviteServer(let t): t.hasFinalResponse
        case .nonInviteServer(let t): t.hasFinalResponse
        case .inviteClient, .nonInviteClient, nil: nil
        }
    }

    /// The request a live server transaction answers.
    public func request(of id: SIPTransactionID) -> SIPMessage? { transactions[id]?.serverRequest }

    // MARK: The TU's requests

    /// Starts a client transaction for `request` and sends it to `hop`. The request must
    /// carry a top Via with an RFC 3261 branch (`SIPIdentifier.branch(using:)`) and a
    /// CSeq of its method; it may not be an ACK. Returns the transaction's id, by which
    /// its responses come back.
    public mutating func sendRequest(_ request: SIPMessage, to hop: SIPHop,
                                     now: ContinuousClock.Instant) throws(SIPTransactionError) -> (id: SIPTransactionID, outputs: [SIPTransactionOutput]) {
        guard let method = request.method, method != .ack else {
            throw SIPTransactionError(.unsuitableMessage, "an ACK or a response cannot start a client transaction")
        }
        guard let via = try? request.topVia(), via.hasRFC3261Branch else {
            throw SIPTransactionError(.unsuitableMessage, "the request has no top Via with an RFC 3261 branch")
        }
        guard let cseq = try? request.cseq(), cseq.method == method,
              let id = SIPTransactionID.client(of: request) else {
            throw SIPTransactionError(.unsuitableMessage, "the request has no CSeq of its method")
        }
        guard transactions[id] == nil else { throw SIPTransactionError(.duplicateTransaction, "\(id) exists") }
        guard transactions.count < configuration.maxTransactions else {
            throw SIPTransactionError(.tooManyTransactions, "\(transactions.count) transactions live")
        }
        var outputs: [SIPTransactionOutput] = []
        if method == .invite {
            transactions[id] = .inviteClient(SIPInviteClientTransaction(
                id: id, request: request, hop: hop, timers: configuration.timers, now: now, outputs: &outputs))
        } else {
            transactions[id] = .nonInviteClient(SIPNonInviteClientTransaction(
                id: id, request: request, hop: hop, timers: configuration.timers, now: now, outputs: &outputs))
        }
        settle(id)
        return (id, outputs)
    }

    /// Sends `response` on the server transaction `id`: provisional responses, then one
    /// final response (for an INVITE, a 2xx may be sent again; the layer also retransmits
    /// it by itself until the ACK). Build it with `SIPMessage.makeResponse` from the
    /// request the layer passed up, so Via, Call-ID and CSeq match.
    public mutating func respond(_ response: SIPMessage, on id: SIPTransactionID,
                                 now: ContinuousClock.Instant) throws(SIPTransactionError) -> [SIPTransactionOutput] {
        guard let code = response.statusCode else { throw SIPTransactionError(.unsuitableMessage, "not a response") }
        guard let transaction = transactions[id] else { throw SIPTransactionError(.unknownTransaction, "no live \(id)") }
        guard let request = transaction.serverRequest else {
            throw SIPTransactionError(.unknownTransaction, "\(id) is a client transaction")
        }
        guard let requestCSeq = try? request.cseq(), let responseCSeq = try? response.cseq(),
              requestCSeq == responseCSeq else {
            throw SIPTransactionError(.invalidState, "the response's CSeq is not the request's")
        }
        var outputs: [SIPTransactionOutput] = []
        switch transaction {
        case .inviteServer(var t):
            try t.respond(response, now: now, outputs: &outputs)
            if (200..<300).contains(code) { startRetransmitting(response, of: id, to: t.responseHop, now: now) }
            transactions[id] = .inviteServer(t)
        case .nonInviteServer(var t):
            try t.respond(response, now: now, outputs: &outputs)
            transactions[id] = .nonInviteServer(t)
        case .inviteClient, .nonInviteClient:
            break
        }
        settle(id)
        return outputs
    }

    /// The shell could not send a message of transaction `id` (a TCP connection refused or
    /// reset, an ICMP error): the transaction ends and the TU hears `transportError`.
    public mutating func transportFailed(_ id: SIPTransactionID, now: ContinuousClock.Instant) -> [SIPTransactionOutput] {
        var outputs: [SIPTransactionOutput] = []
        if var transaction = transactions[id] {
            transaction.transportFailed(outputs: &outputs)
            transactions[id] = transaction
            settle(id)
        }
        if let success = successes[id] { stopRetransmitting(success) }
        return outputs
    }

    /// The shell could not send `message`, one of this layer's `send` outputs: the
    /// transaction it belongs to (found by its Via branch and CSeq) fails as
    /// `transportFailed(_:now:)` says.
    public mutating func transportFailed(sending message: SIPMessage, now: ContinuousClock.Instant) -> [SIPTransactionOutput] {
        let id: SIPTransactionID?
        if message.isRequest {
            id = SIPTransactionID.client(of: message)
        } else if let via = try? message.topVia(), let branch = via.branch, let cseq = try? message.cseq() {
            // A response of ours: the server transaction of the request it answers, which
            // shares its Via, branch and CSeq method.
            let sentBy = SIPText.lowercased(via.host.description) + ":" + String(via.port ?? SIPHop.Transport(name: via.transport)?.defaultPort ?? 5060)
            id = transactions.keys.first { $0.role == .server && $0.branch == branch && $0.sentBy == sentBy && $0.method == cseq.method }
        } else {
            id = nil
        }
        guard let id else { return [] }
        return transportFailed(id, now: now)
    }

    // MARK: Received messages

    /// Takes a message received from `hop`.
    public mutating func receive(_ message: SIPMessage, from hop: SIPHop, now: ContinuousClock.Instant) -> [SIPTransactionOutput] {
        do throws(SIPError) {
            try message.validate()
        } catch {
            return refuse(error, from: hop)
        }
        return message.isRequest ? receiveRequest(message, from: hop, now: now) : receiveResponse(message, from: hop, now: now)
    }

    /// Answers (or drops) a message that could not be parsed or validated, as the error's
    /// disposition says: the shell passes the `SIPError` of a datagram or stream message
    /// that did not parse. A request is answered statelessly along its top Via.
    public mutating func refuse(_ error: SIPError, from hop: SIPHop) -> [SIPTransactionOutput] {
        let isAck = error.requestHeaders.first("cseq").map { $0.hasSuffix("ACK") } ?? false
        if !isAck, let response = try? error.makeResponse(toTag: SIPIdentifier.tag(using: &random)),
           let code = response.statusCode {
            let via = try? response.topVia()
            return [.send(response, to: Self.responseHop(via: via, source: hop)),
                    .refused(statusCode: code, reason: error.description, from: hop)]
        }
        return [.refused(statusCode: nil, reason: error.description, from: hop)]
    }

    private mutating func receiveResponse(_ response: SIPMessage, from hop: SIPHop, now: ContinuousClock.Instant) -> [SIPTransactionOutput] {
        var outputs: [SIPTransactionOutput] = []
        guard let id = SIPTransactionID.client(of: response), let transaction = transactions[id] else {
            return [.strayResponse(response, from: hop)]
        }
        switch transaction {
        case .inviteClient(var t):
            t.receive(response, now: now, outputs: &outputs)
            transactions[id] = .inviteClient(t)
        case .nonInviteClient(var t):
            t.receive(response, now: now, outputs: &outputs)
            transactions[id] = .nonInviteClient(t)
        case .inviteServer, .nonInviteServer:
            return [.strayResponse(response, from: hop)]
        }
        settle(id)
        return outputs
    }

    private mutating func receiveRequest(_ received: SIPMessage, from hop: SIPHop, now: ContinuousClock.Instant) -> [SIPTransactionOutput] {
        guard let method = received.method, var via = try? received.topVia() else {
            return [.refused(statusCode: nil, reason: "no method or top Via", from: hop)]
        }
        // §18.2.1 and RFC 3581 §4: note where the request really came from.
        var request = received
        if via.returnPort != nil {
            via.setReturnPort(hop.port)
            try? via.setReceived(hop.host)
        } else if !via.host.isEquivalent(to: hop.host) {
            try? via.setReceived(hop.host)
        }
        request.headers.replaceTopVia(with: via)
        let responseHop = Self.responseHop(via: via, source: hop)

        if method == .ack { return receiveAck(request, from: hop, now: now) }
        guard let id = SIPTransactionID.server(of: request) else {
            return [.refused(statusCode: nil, reason: "no top Via", from: hop)]
        }
        var outputs: [SIPTransactionOutput] = []
        if let transaction = transactions[id] {
            switch transaction {
            case .inviteServer(var t):
                t.receiveRetransmission(outputs: &outputs)
                transactions[id] = .inviteServer(t)
            case .nonInviteServer(var t):
                t.receiveRetransmission(outputs: &outputs)
                transactions[id] = .nonInviteServer(t)
            case .inviteClient, .nonInviteClient:
                break
            }
            settle(id)
            return outputs
        }
        guard transactions.count < configuration.maxTransactions else {
            return answerStatelessly(request, 503, reason: "\(transactions.count) transactions live", to: responseHop, from: hop)
        }
        if method == .cancel { return receiveCancel(request, id: id, responseHop: responseHop, from: hop, now: now) }

        let toTag = (try? request.to())?.tag
        let mergeKey = toTag == nil ? MergeKey(request) : nil
        if let mergeKey, let original = merged[mergeKey], original != id, transactions[original] != nil {
            // §8.2.2.2: the same request reached us twice by different paths (a fork
            // that looped back). Answer it through a transaction of its own so its
            // retransmissions get the same 482.
            return answerThroughTransaction(request, id: id, 482, reason: "merged request: \(original) has its From tag, Call-ID and CSeq",
                                            responseHop: responseHop, from: hop, now: now)
        }
        if configuration.rejectsExhaustedMaxForwards, method != .options, (try? request.maxForwards()) == 0 {
            return answerThroughTransaction(request, id: id, 483, reason: "Max-Forwards is 0", responseHop: responseHop, from: hop, now: now)
        }
        createServerTransaction(request, id: id, responseHop: responseHop, now: now)
        if let mergeKey { merged[mergeKey] = id }
        outputs.append(.request(request, from: hop, transaction: id))
        return outputs
    }

    private mutating func receiveAck(_ ack: SIPMessage, from hop: SIPHop, now: ContinuousClock.Instant) -> [SIPTransactionOutput] {
        var matched: SIPTransactionID?
        if let id = SIPTransactionID.server(of: ack, as: .invite), case .inviteServer(var t) = transactions[id] {
            let absorbed = t.receiveAck(now: now)
            transactions[id] = .inviteServer(t)
            settle(id)
            if absorbed { return [] }
            matched = id
        }
        if let key = SIPSuccessRetransmission.AckKey(ack), let id = successByAck[key], let success = successes[id] {
            stopRetransmitting(success)
            matched = id
        }
        return [.ack(ack, from: hop, acknowledged: matched)]
    }

    private mutating func receiveCancel(_ cancel: SIPMessage, id: SIPTransactionID, responseHop: SIPHop, from hop: SIPHop,
                                        now: ContinuousClock.Instant) -> [SIPTransactionOutput] {
        guard let inviteID = SIPTransactionID.server(of: cancel, as: .invite),
              case .inviteServer(let invite) = transactions[inviteID] else {
            return answerThroughTransaction(cancel, id: id, 481, reason: "CANCEL matches no INVITE", responseHop: responseHop, from: hop, now: now)
        }
        var outputs: [SIPTransactionOutput] = []
        createServerTransaction(cancel, id: id, responseHop: responseHop, now: now)
        // §9.2: the same To tag as the INVITE's responses, when one was sent.
        let tag = invite.provisionalToTag ?? SIPIdentifier.tag(using: &random)
        if let ok = try? cancel.makeResponse(statusCode: 200, toTag: tag), let sent = try? respond(ok, on: id, now: now) {
            outputs += sent
        }
        if !invite.hasFinalResponse { outputs.append(.cancel(cancel, from: hop, invite: inviteID)) }
        return outputs
    }

    private mutating func createServerTransaction(_ request: SIPMessage, id: SIPTransactionID, responseHop: SIPHop, now: ContinuousClock.Instant) {
        if request.method == .invite {
            transactions[id] = .inviteServer(SIPInviteServerTransaction(
                id: id, request: request, responseHop: responseHop, timers: configuration.timers, now: now))
        } else {
            transactions[id] = .nonInviteServer(SIPNonInviteServerTransaction(
                id: id, request: request, responseHop: responseHop, timers: configuration.timers))
        }
        settle(id)
    }

    private mutating func answerThroughTransaction(_ request: SIPMessage, id: SIPTransactionID, _ code: Int, reason: String,
                                                   responseHop: SIPHop, from hop: SIPHop, now: ContinuousClock.Instant) -> [SIPTransactionOutput] {
        createServerTransaction(request, id: id, responseHop: responseHop, now: now)
        var outputs: [SIPTransactionOutput] = []
        if let response = try? request.makeResponse(statusCode: code, toTag: SIPIdentifier.tag(using: &random)),
           let sent = try? respond(response, on: id, now: now) {
            outputs += sent
        }
        outputs.append(.refused(statusCode: code, reason: reason, from: hop))
        return outputs
    }

    private mutating func answerStatelessly(_ request: SIPMessage, _ code: Int, reason: String, to responseHop: SIPHop,
                                            from hop: SIPHop) -> [SIPTransactionOutput] {
        var outputs: [SIPTransactionOutput] = []
        if request.method != .ack, let response = try? request.makeResponse(statusCode: code, toTag: SIPIdentifier.tag(using: &random)) {
            outputs.append(.send(response, to: responseHop))
        }
        outputs.append(.refused(statusCode: code, reason: reason, from: hop))
        return outputs
    }

    // MARK: Time

    /// Fires every timer due at `now`: retransmissions, timeouts, the 100 Trying, the end
    /// of Completed, Confirmed and Accepted states.
    public mutating func handleTimeout(now: ContinuousClock.Instant) -> [SIPTransactionOutput] {
        var outputs: [SIPTransactionOutput] = []
        var handled = Set<TimerKey>()
        while let next = timers.next, next.deadline <= now, !handled.contains(next.key) {
            handled.insert(next.key)
            switch next.key {
            case .transaction(let id):
                if var transaction = transactions[id] {
                    transaction.handleTimeout(now: now, outputs: &outputs)
                    transactions[id] = transaction
                }
                settle(id)
            case .success(let id):
                guard var success = successes[id] else {
                    timers.set(next.key, to: nil)
                    continue
                }
                if success.fire(now: now, timers: configuration.timers, outputs: &outputs) {
                    stopRetransmitting(success)
                    outputs.append(.unacknowledged(id))
                } else {
                    successes[id] = success
                    timers.set(next.key, to: success.nextDeadline)
                }
            }
        }
        return outputs
    }

    // MARK: Bookkeeping

    /// Removes a terminated transaction, or sets its timer to its next deadline.
    private mutating func settle(_ id: SIPTransactionID) {
        guard let transaction = transactions[id] else {
            timers.set(.transaction(id), to: nil)
            return
        }
        if transaction.isTerminated {
            transactions[id] = nil
            timers.set(.transaction(id), to: nil)
            if let request = transaction.serverRequest, let key = MergeKey(request), merged[key] == id { merged[key] = nil }
        } else {
            timers.set(.transaction(id), to: transaction.nextDeadline)
        }
    }

    private mutating func startRetransmitting(_ response: SIPMessage, of id: SIPTransactionID, to hop: SIPHop, now: ContinuousClock.Instant) {
        if var existing = successes[id] {
            // The TU sent the 2xx again: keep the schedule, send the newest copy.
            existing.response = response
            successes[id] = existing
            return
        }
        guard let key = SIPSuccessRetransmission.AckKey(response) else { return }
        let success = SIPSuccessRetransmission(transaction: id, ackKey: key, response: response, hop: hop,
                                               timers: configuration.timers, now: now)
        successes[id] = success
        successByAck[key] = id
        timers.set(.success(id), to: success.nextDeadline)
    }

    private mutating func stopRetransmitting(_ success: SIPSuccessRetransmission) {
        successes[success.transaction] = nil
        if successByAck[success.ackKey] == success.transaction { successByAck[success.ackKey] = nil }
        timers.set(.success(success.transaction), to: nil)
    }

    /// Where the responses to a request go (§18.2.2, RFC 3581 §4): back over the
    /// connection it came on; over UDP to the source address (what `received` holds), at
    /// the source port when `rport` was asked for, else at the Via's port.
    public static func responseHop(via: SIPVia?, source: SIPHop) -> SIPHop {
        guard let via, !source.transport.isReliable else { return source }
        let port = via.returnPort != nil ? source.port : (via.port ?? source.transport.defaultPort)
        return SIPHop(transport: source.transport, host: via.received ?? source.host, port: port)
    }
}
