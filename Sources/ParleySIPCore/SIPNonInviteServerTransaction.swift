import ParleySIP

/// The non-INVITE server transaction of RFC 3261 §17.2.2.
///
/// Trying: retransmitted requests are absorbed until the TU answers. A provisional
/// response moves it to Proceeding, where a retransmitted request gets it again. The final
/// response moves it to Completed, which answers each retransmitted request with that
/// response again until Timer J (64·T1 over UDP, at once over a reliable transport).
struct SIPNonInviteServerTransaction: Sendable {
    enum State: Sendable, Hashable {
        case trying, proceeding, completed, terminated
    }

    let id: SIPTransactionID
    let request: SIPMessage
    /// Where responses go (§18.2.2).
    let responseHop: SIPHop
    private let timers: SIPTimers
    private(set) var state: State = .trying
    private var lastResponse: SIPMessage?
    private var timerJ: ContinuousClock.Instant?

    init(id: SIPTransactionID, request: SIPMessage, responseHop: SIPHop, timers: SIPTimers) {
        self.id = id
        self.request = request
        self.responseHop = responseHop
        self.timers = timers
    }

    var nextDeadline: ContinuousClock.Instant? { timerJ }

    /// Whether the TU has sent a final response.
    var hasFinalResponse: Bool { state == .completed || state == .terminated }

    mutating func receiveRetransmission(outputs: inout [SIPTransactionOutput]) {
        switch state {
        case .proceeding, .completed:
            if let lastResponse { outputs.append(.send(lastResponse, to: responseHop)) }
        case .trying, .terminated:
            break
        }
    }

    mutating func respond(_ response: SIPMessage, now: ContinuousClock.Instant,
                          outputs: inout [SIPTransactionOutput]) throws(SIPTransactionError) {
        guard let code = response.statusCode else { throw SIPTransactionError(.unsuitableMessage, "not a response") }
        guard state == .trying || state == .proceeding else {
            throw SIPTransactionError(.invalidState, "\(id.method) server transaction in \(state) cannot send \(code)")
        }
        lastResponse = response
        outputs.append(.send(response, to: responseHop))
        if code < 200 {
            state = .proceeding
        } else if responseHop.transport.isReliable {
            state = .terminated
        } else {
            state = .completed
            timerJ = now + timers.transactionTimeout
        }
    }

    mutating func handleTimeout(now: ContinuousClock.Instant, outputs: inout [SIPTransactionOutput]) {
        if let timerJ, timerJ <= now, state == .completed {
            state = .terminated
            self.timerJ = nil
        }
    }

    mutating func transportFailed(outputs: inout [SIPTransactionOutput]) {
        guard state != .terminated else { return }
        state = .terminated
        outputs.append(.transportError(id))
    }
}
