import ParleySIP

/// The INVITE server transaction of RFC 3261 §17.2.1 with RFC 6026's Accepted state.
///
/// Proceeding: unless the TU answers within `SIPTimers.trying` (200 ms), the transaction
/// sends 100 Trying itself; a retransmitted INVITE gets the latest provisional response
/// again. A 2xx from the TU moves it to Accepted (RFC 6026 §7.1): retransmitted INVITEs
/// are absorbed, further 2xx from the TU are sent, an ACK that matches it goes to the TU,
/// and Timer L (64·T1) ends it. A 3xx-6xx moves it to Completed: the response is
/// retransmitted by Timer G over UDP (T1, doubling up to T2) and for each retransmitted
/// INVITE, until the ACK (Confirmed, absorbing ACKs until Timer I) or Timer H (64·T1, a
/// timeout for the TU).
struct SIPInviteServerTransaction: Sendable {
    enum State: Sendable, Hashable {
        case proceeding, completed, confirmed, accepted, terminated
    }

    let id: SIPTransactionID
    let request: SIPMessage
    /// Where responses go (§18.2.2).
    let responseHop: SIPHop
    private let timers: SIPTimers
    private(set) var state: State = .proceeding
    private var trying: ContinuousClock.Instant?
    private var lastProvisional: SIPMessage?
    private var finalResponse: SIPMessage?
    private var timerG: SIPRetransmission?
    private var timerH: ContinuousClock.Instant?
    private var timerI: ContinuousClock.Instant?
    private var timerL: ContinuousClock.Instant?

    init(id: SIPTransactionID, request: SIPMessage, responseHop: SIPHop, timers: SIPTimers, now: ContinuousClock.Instant) {
        self.id = id
        self.request = request
        self.responseHop = responseHop
        self.timers = timers
        trying = now + timers.trying
    }

    var nextDeadline: ContinuousClock.Instant? {
        [trying, timerG?.deadline, timerH, timerI, timerL].compactMap { $0 }.min()
    }

    /// Whether the TU has sent a final response.
    var hasFinalResponse: Bool { state != .proceeding }

    /// The To tag of the latest provisional response sent, which a 200 to a CANCEL of this
    /// INVITE should carry too (§9.2).
    var provisionalToTag: String? { (try? lastProvisional?.to())??.tag }

    mutating func receiveRetransmission(outputs: inout [SIPTransactionOutput]) {
        switch state {
        case .proceeding:
            if lastProvisional == nil, let hundred = try? request.makeResponse(statusCode: 100) {
                // The INVITE came again before our 100: send it now rather than wait.
                lastProvisional = hundred
                trying = nil
            }
            if let lastProvisional { outputs.append(.send(lastProvisional, to: responseHop)) }
        case .completed:
            if let finalResponse { outputs.append(.send(finalResponse, to: responseHop)) }
        case .confirmed, .accepted, .terminated:
            break
        }
    }

    /// An ACK matching this transaction: a non-2xx's ACK is absorbed here (true); in
    /// Accepted it is the TU's (false).
    mutating func receiveAck(now: ContinuousClock.Instant) -> Bool {
        switch state {
        case .completed:
            timerG = nil
            timerH = nil
            if responseHop.transport.isReliable {
                state = .terminated
            } else {
                state = .confirmed
                timerI = now + timers.t4
            }
            return true
        case .confirmed:
            return true
        case .proceeding, .accepted, .terminated:
            return false
        }
    }

    mutating func respond(_ response: SIPMessage, now: ContinuousClock.Instant,
                          outputs: inout [SIPTransactionOutput]) throws(SIPTransactionError) {
        guard let code = response.statusCode else { throw SIPTransactionError(.unsuitableMessage, "not a response") }
        switch (state, code) {
        case (.proceeding, 100..<200):
            trying = nil
            lastProvisional = response
            outputs.append(.send(response, to: responseHop))
        case (.proceeding, 200..<300):
            trying = nil
            state = .accepted
            timerL = now + timers.transactionTimeout
            outputs.append(.send(response, to: responseHop))
        case (.accepted, 200..<300):
            outputs.append(.send(response, to: responseHop))
        case (.proceeding, 300...):
            trying = nil
            state = .completed
            finalResponse = response
            if !responseHop.transport.isReliable { timerG = SIPRetransmission(interval: timers.t1, now: now) }
            timerH = now + timers.transactionTimeout
            outputs.append(.send(response, to: responseHop))
        default:
            throw SIPTransactionError(.invalidState, "INVITE server transaction in \(state) cannot send \(code)")
        }
    }

    mutating func handleTimeout(now: ContinuousClock.Instant, outputs: inout [SIPTransactionOutput]) {
        if let trying, trying <= now {
            self.trying = nil
            if state == .proceeding, lastProvisional == nil, let hundred = try? request.makeResponse(statusCode: 100) {
                lastProvisional = hundred
                outputs.append(.send(hundred, to: responseHop))
            }
        }
        if let timerH, timerH <= now, state == .completed {
            state = .terminated
            timerG = nil
            self.timerH = nil
            outputs.append(.timeout(id))
            return
        }
        if var timer = timerG, timer.deadline <= now, state == .completed {
            if let finalResponse { outputs.append(.send(finalResponse, to: responseHop)) }
            timer.fire(now: now, next: min(timer.interval * 2, timers.t2))
            timerG = timer
        }
        if let timerI, timerI <= now, state == .confirmed {
            state = .terminated
            self.timerI = nil
        }
        if let timerL, timerL <= now, state == .accepted {
            state = .terminated
            self.timerL = nil
        }
    }

    mutating func transportFailed(outputs: inout [SIPTransactionOutput]) {
        guard state != .terminated else { return }
        state = .terminated
        outputs.append(.transportError(id))
    }
}
