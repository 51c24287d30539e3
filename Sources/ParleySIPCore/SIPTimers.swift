/// The base values of the transaction timers (RFC 3261 §17.1.1.1, table 4) from which
/// every timer is derived.
///
/// | timer | value | where |
/// |---|---|---|
/// | A | T1, doubling on each retransmission (no T2 cap) | INVITE client, UDP only |
/// | B, F, H | 64·T1 | client timeouts; server waiting for the ACK |
/// | D | `timerD` (≥ 32 s) over UDP, 0 reliable | INVITE client after a 3xx-6xx |
/// | E | T1, doubling up to T2; T2 once a provisional came | non-INVITE client, UDP only |
/// | G | T1, doubling up to T2 | INVITE server's 3xx-6xx, UDP only |
/// | I | T4 over UDP, 0 reliable | INVITE server after the ACK |
/// | J | 64·T1 over UDP, 0 reliable | non-INVITE server after its final response |
/// | K | T4 over UDP, 0 reliable | non-INVITE client after its final response |
/// | L, M | 64·T1 | RFC 6026's Accepted states, server and client |
/// | 100 Trying | `trying` (200 ms) | INVITE server without an answer from its TU |
public struct SIPTimers: Sendable, Hashable {
    /// The round-trip estimate (500 ms).
    public var t1: Duration
    /// The longest interval between retransmissions of non-INVITE requests and of INVITE
    /// responses (4 s).
    public var t2: Duration
    /// How long a message may stay in the network (5 s).
    public var t4: Duration
    /// How long an INVITE server transaction waits for its TU's first response before it
    /// sends 100 Trying itself (§17.2.1: within 200 ms).
    public var trying: Duration
    /// Timer D over UDP: how long an INVITE client transaction absorbs retransmitted
    /// 3xx-6xx responses (at least 32 s, §17.1.1.2).
    public var timerD: Duration

    /// The defaults of RFC 3261. A T1 below 1 ms is taken as 1 ms, a T2 below T1 as T1,
    /// and negative values as zero, so no timer can fire in a loop.
    public init(t1: Duration = .milliseconds(500), t2: Duration = .seconds(4), t4: Duration = .seconds(5),
                trying: Duration = .milliseconds(200), timerD: Duration = .seconds(32)) {
        self.t1 = max(t1, .milliseconds(1))
        self.t2 = max(t2, self.t1)
        self.t4 = max(t4, .zero)
        self.trying = max(trying, .zero)
        self.timerD = max(timerD, .zero)
    }

    /// 64·T1: Timers B, F, H, J (over UDP), L and M.
    public var transactionTimeout: Duration { t1 * 64 }
}
