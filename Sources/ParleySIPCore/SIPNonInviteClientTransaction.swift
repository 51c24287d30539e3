import ParleySIP

/// The non-INVITE client transaction of RFC 3261 §17.1.2 (BYE, CANCEL, OPTIONS, UPDATE,
/// INFO...).
///
/// Trying: the request is retransmitted by Timer E over UDP (T1, doubling up to T2) until
/// a final response or Timer F (64·T1). A provisional response moves it to Proceeding,
/// where Timer E keeps firing at T2. The final response goes to the TU and moves it to
/// Completed, which absorbs retransmitted responses until Timer K (T4 over UDP, at once
/// over a reliable transport).
struct SIPNonInviteClientTransaction: Sendable {
    enum State: Sendable, Hashable {
        case trying, proceeding, completed, terminated
    }

    let id: SIPTransactionID
    let request: SIPMessage
    let hop: SIPHop
    private let timers: SIPTimers
    private(set) var state: State = .trying
    private var timerE: SIPRetransmission?
    private var timerF: ContinuousClock.Instant?
    private var timerK: ContinuousClock.Instant?

    /// Sends the request and starts Timers E (UDP) and F.
    init(id: SIPTransactionID, request: SIPMessage, hop: SIPHop, timers: SIPTimers, now: ContinuousClock.Instant,
         outputs: inout [SIPTransactionOutput]) {
        self.id = id
        self.request = request
        self.hop = hop
        self.timers = timers
        outputs.append(.send(request, to: hop))
        if !hop.transport.isReliable { timerE = SIPRetransmission(interval: timers.t1, now: now) }
        timerF = now + timers.transactionTimeout
    }

    var nextDeadline: ContinuousClock.Instant? {
        [timerE?.deadline, timerF, timerK].compactMap { $0 }.min()
    }

    mutating func receive(_ response: SIPMessage, now: ContinuousClock.Instant, outputs: inout [SIPTransactionOutput]) {
        guard let code = response.statusCode else { return }
        switch state {
        case .trying, .proceeding:
            if code < 200 {
                state = .proceeding
                outputs.append(.response(response, transaction: id))
                return
            }
            timerE = nil
            timerF = nil
            outputs.append(.response(response, transaction: id))
            if hop.transport.isReliable {
                state = .terminated
            } else {
                state = .completed
                timerK = now + timers.t4
            }
        case .completed, .terminated:
            break
        }
    }

    mutating func handleTimeout(now: ContinuousClock.Instant, outputs: inout [SIPTransactionOutput]) {
        if let timerF, timerF <= now, state == .trying || state == .proceeding {
            state = .terminated
            timerE = nil
            self.timerF = nil
            outputs.append(.timeout(id))
            return
        }
        if var timer = timerE, timer.deadline <= now, state == .trying || state == .proceeding {
            outputs.append(.send(request, to: hop))
            timer.fire(now: now, next: state == .trying ? min(timer.interval * 2, timers.t2) : timers.t2)
            timerE = timer
        }
        if let timerK, timerK <= now, state == .completed {
            state = .terminated
            self.timerK = nil
        }
    }

    mutating func transportFailed(outputs: inout [SIPTransactionOutput]) {
        guard state != .terminated else { return }
        state = .terminated
        outputs.append(.transportError(id))
    }
}
