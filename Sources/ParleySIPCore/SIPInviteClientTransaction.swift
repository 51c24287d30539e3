import ParleySIP

/// The INVITE client transaction of RFC 3261 §17.1.1 with RFC 6026's Accepted state.
///
/// Calling: the INVITE is retransmitted by Timer A over UDP (T1, then doubling each time,
/// with no T2 cap for INVITE) until a response or Timer B (64·T1). A provisional response
/// moves it to Proceeding, where it waits without a timer (the TU cancels). A 3xx-6xx moves
/// it to Completed: the transaction sends the ACK itself and resends it for each
/// retransmitted final response until Timer D. A 2xx moves it to Accepted (RFC 6026 §7.2):
/// that 2xx and every later one (retransmissions, other forks) go to the TU, which
/// acknowledges them; Timer M (64·T1) ends it.
struct SIPInviteClientTransaction: Sendable {
    enum State: Sendable, Hashable {
        case calling, proceeding, completed, accepted, terminated
    }

    let id: SIPTransactionID
    let request: SIPMessage
    let hop: SIPHop
    private let timers: SIPTimers
    private(set) var state: State = .calling
    private var timerA: SIPRetransmission?
    private var timerB: ContinuousClock.Instant?
    private var timerD: ContinuousClock.Instant?
    private var timerM: ContinuousClock.Instant?
    private var ack: SIPMessage?

    /// Sends the INVITE and starts Timers A (UDP) and B.
    init(id: SIPTransactionID, request: SIPMessage, hop: SIPHop, timers: SIPTimers, now: ContinuousClock.Instant,
         outputs: inout [SIPTransactionOutput]) {
        self.id = id
        self.request = request
        self.hop = hop
        self.timers = timers
        outputs.append(.send(request, to: hop))
        if !hop.transport.isReliable { timerA = SIPRetransmission(interval: timers.t1, now: now) }
        timerB = now + timers.transactionTimeout
    }

    var nextDeadline: ContinuousClock.Instant? {
        [timerA?.deadline, timerB, timerD, timerM].compactMap { $0 }.min()
    }

    var hasSentFinalResponseToTU: Bool { state == .completed || state == .accepted || state == .terminated }

    mutating func receive(_ response: SIPMessage, now: ContinuousClock.Instant, outputs: inout [SIPTransactionOutput]) {
        guard let code = response.statusCode else { return }
        switch (state, code) {
        case (.calling, 100..<200), (.proceeding, 100..<200):
            state = .proceeding
            timerA = nil
            timerB = nil
            outputs.append(.response(response, transaction: id))
        case (.calling, 200..<300), (.proceeding, 200..<300):
            state = .accepted
            timerA = nil
            timerB = nil
            timerM = now + timers.transactionTimeout
            outputs.append(.response(response, transaction: id))
        case (.accepted, 200..<300):
            outputs.append(.response(response, transaction: id))
        case (.calling, 300...), (.proceeding, 300...):
            timerA = nil
            timerB = nil
            let ack = makeAck(for: response)
            self.ack = ack
            if let ack { outputs.append(.send(ack, to: hop)) }
            outputs.append(.response(response, transaction: id))
            if hop.transport.isReliable {
                state = .terminated
            } else {
                state = .completed
                timerD = now + timers.timerD
            }
        case (.completed, 300...):
            // A retransmitted final response: our ACK was lost.
            if let ack { outputs.append(.send(ack, to: hop)) }
        default:
            break
        }
    }

    mutating func handleTimeout(now: ContinuousClock.Instant, outputs: inout [SIPTransactionOutput]) {
        if let timerB, timerB <= now, state == .calling {
            state = .terminated
            timerA = nil
            self.timerB = nil
            outputs.append(.timeout(id))
            return
        }
        if var timer = timerA, timer.deadline <= now, state == .calling {
            outputs.append(.send(request, to: hop))
            timer.fire(now: now, next: timer.interval * 2)
            timerA = timer
        }
        if let timerD, timerD <= now, state == .completed {
            state = .terminated
            self.timerD = nil
        }
        if let timerM, timerM <= now, state == .accepted {
            state = .terminated
            self.timerM = nil
        }
    }

    mutating func transportFailed(outputs: inout [SIPTransactionOutput]) {
        guard state != .terminated else { return }
        state = .terminated
        outputs.append(.transportError(id))
    }

    /// The ACK for a 3xx-6xx (§17.1.1.3): the INVITE's Request-URI, Call-ID, From, CSeq
    /// number and Route, its top Via only, and the response's To (with the tag).
    private func makeAck(for response: SIPMessage) -> SIPMessage? {
        guard let uri = request.requestURI, let cseq = try? request.cseq() else { return nil }
        var headers = SIPHeaders()
        do throws(SIPError) {
            if let via = request.headers.values("via").first { try headers.add(name: "Via", value: via) }
            try headers.add(name: "Max-Forwards", value: "70")
            if let to = response.headers.first("to") { try headers.add(name: "To", value: to) }
            if let from = request.headers.first("from") { try headers.add(name: "From", value: from) }
            if let callID = request.headers.first("call-id") { try headers.add(name: "Call-ID", value: callID) }
            try headers.add(name: "CSeq", value: SIPCSeq(sequence: cseq.sequence, method: .ack).description)
            for route in request.headers["route"] { try headers.add(name: "Route", value: route) }
            return try SIPMessage(request: .ack, uri: uri, headers: headers)
        } catch {
            return nil
        }
    }
}
