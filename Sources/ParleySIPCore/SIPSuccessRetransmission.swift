import ParleySIP

/// A 2xx to an INVITE that the UAS keeps sending until its ACK comes (RFC 3261 §13.3.1.4):
/// at T1, then doubling up to T2, over any transport (a proxy on the way may forward it
/// over UDP), for at most 64·T1. The transaction layer runs it on its TU's behalf, since
/// the INVITE server transaction itself sends a 2xx only once.
struct SIPSuccessRetransmission: Sendable {
    /// What identifies the ACK of this 2xx: it is a new request with a branch of its own,
    /// matched by Call-ID, CSeq number and the To tag of the 2xx.
    struct AckKey: Sendable, Hashable {
        var callID: String
        var sequence: UInt32
        var toTag: String

        init?(_ message: SIPMessage) {
            guard let callID = try? message.callID(), let cseq = try? message.cseq() else { return nil }
            self.callID = callID
            self.sequence = cseq.sequence
            self.toTag = (try? message.to())?.tag ?? ""
        }
    }

    let transaction: SIPTransactionID
    let ackKey: AckKey
    var response: SIPMessage
    let hop: SIPHop
    private(set) var timer: SIPRetransmission
    let giveUp: ContinuousClock.Instant

    init(transaction: SIPTransactionID, ackKey: AckKey, response: SIPMessage, hop: SIPHop, timers: SIPTimers,
         now: ContinuousClock.Instant) {
        self.transaction = transaction
        self.ackKey = ackKey
        self.response = response
        self.hop = hop
        self.timer = SIPRetransmission(interval: timers.t1, now: now)
        self.giveUp = now + timers.transactionTimeout
    }

    /// When to act next: the next retransmission, or giving up.
    var nextDeadline: ContinuousClock.Instant { min(timer.deadline, giveUp) }

    /// At `now`: true when it is time to give up; else sends the 2xx again.
    mutating func fire(now: ContinuousClock.Instant, timers: SIPTimers, outputs: inout [SIPTransactionOutput]) -> Bool {
        if giveUp <= now { return true }
        if timer.deadline <= now {
            outputs.append(.send(response, to: hop))
            timer.fire(now: now, next: min(timer.interval * 2, timers.t2))
        }
        return false
    }
}
