public import ParleySIPIO
import Synchronization

/// Counters and gauges the server keeps for `/metrics` (Prometheus text format). Updated
/// from any thread; `render` turns a snapshot into the exposition text.
public final class ServerMetrics: Sendable {
    /// What the signaling side counts.
    public struct Counters: Sendable, Hashable {
        /// WebSocket connections open now, and opened since start.
        public var connectionsOpen = 0
        public var connectionsTotal = 0
        /// Connections that completed `hello`.
        public var authenticatedTotal = 0
        /// `hello` refusals by error code.
        public var authFailures: [String: Int] = [:]
        /// `call.start` accepted, and calls that reached `established`.
        public var callsStarted = 0
        public var callsEstablished = 0
        /// Ended calls by end cause (`hungUp`, `error`, ...).
        public var callsEnded: [String: Int] = [:]
        /// Media packets relayed between legs, received from devices, and lost (by the
        /// receivers' reports).
        public var mediaPacketsForwarded = 0
        public var mediaPacketsReceived = 0
        public var mediaPacketsLost = 0
        /// Packets dropped by the media layer (bad SRTP, garbage, ...).
        public var mediaPacketsDropped = 0
        /// Call record writes waiting for the store now; transactions the store could not
        /// commit (locked, busy, failing) and that were retried; writes refused for good.
        public var storeWritesPending = 0
        public var storeWriteRetries = 0
        public var storeWritesDropped = 0
        /// Action batches (replies, events, media instructions) waiting for a record commit.
        public var heldActions = 0
        /// The SIP transport's counters when the server listens for SIP; nil otherwise.
        public var sip: SIPTransportStatistics?
        /// Calls to phone numbers and SIP addresses the applications' dialling settings
        /// refused, by `DiallingRefusal.Reason` raw value; nil when the server does not
        /// enforce dialling settings (`ServerComponents.diallingSettings`).
        public var diallingRefusals: [String: Int]?
        public init() {}
    }

    private let counters = Mutex(Counters())
    /// Reads the SIP transport's counters, once the server listens for SIP.
    private let sipStatistics = Mutex<(@Sendable () -> SIPTransportStatistics)?>(nil)

    public init() {}

    /// Changes the counters under the lock.
    public func update(_ body: (inout Counters) -> Void) {
        counters.withLock { body(&$0) }
    }

    /// A copy of the counters now, the SIP transport's included.
    public var snapshot: Counters {
        var snapshot = counters.withLock { $0 }
        snapshot.sip = sipStatistics.withLock { $0 }?()
        return snapshot
    }

    /// Where `snapshot` reads the SIP transport's counters from (the transport keeps them).
    func attachSIPStatistics(_ read: @escaping @Sendable () -> SIPTransportStatistics) {
        sipStatistics.withLock { $0 = read }
    }
}
