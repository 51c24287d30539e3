import Synchronization

/// The live counters behind `SIPTransportStatistics`: written on the transport's loop,
/// read from any thread (a `/metrics` scrape).
final class SIPTransportCounters: Sendable {
    private let receivedUDP = Atomic<Int>(0)
    private let receivedTCP = Atomic<Int>(0)
    private let receivedTLS = Atomic<Int>(0)
    private let sentUDP = Atomic<Int>(0)
    private let sentTCP = Atomic<Int>(0)
    private let sentTLS = Atomic<Int>(0)
    private let droppedMalformed = Atomic<Int>(0)
    private let droppedOverLimit = Atomic<Int>(0)
    private let droppedRateLimited = Atomic<Int>(0)
    private let droppedNoTaker = Atomic<Int>(0)
    private let droppedUnroutable = Atomic<Int>(0)
    private let droppedSendFailed = Atomic<Int>(0)
    let rejected = Atomic<Int>(0)
    let rateLimitRefused = Atomic<Int>(0)
    let keepalives = Atomic<Int>(0)
    let connectionsOpen = Atomic<Int>(0)
    let connectionsAccepted = Atomic<Int>(0)
    let connectionsOpened = Atomic<Int>(0)
    let connectionsRefused = Atomic<Int>(0)
    let connectionTimeouts = Atomic<Int>(0)
    let tlsHandshakes = Atomic<Int>(0)
    let tlsHandshakeFailures = Atomic<Int>(0)

    func countReceived(_ transport: SIPTransport) {
        switch transport {
        case .udp: receivedUDP.add(1, ordering: .relaxed)
        case .tcp: receivedTCP.add(1, ordering: .relaxed)
        case .tls: receivedTLS.add(1, ordering: .relaxed)
        }
    }

    func countSent(_ transport: SIPTransport) {
        switch transport {
        case .udp: sentUDP.add(1, ordering: .relaxed)
        case .tcp: sentTCP.add(1, ordering: .relaxed)
        case .tls: sentTLS.add(1, ordering: .relaxed)
        }
    }

    func countDropped(_ reason: SIPTransportStatistics.DropReason) {
        switch reason {
        case .malformed: droppedMalformed.add(1, ordering: .relaxed)
        case .overLimit: droppedOverLimit.add(1, ordering: .relaxed)
        case .rateLimited: droppedRateLimited.add(1, ordering: .relaxed)
        case .noTaker: droppedNoTaker.add(1, ordering: .relaxed)
        case .unroutable: droppedUnroutable.add(1, ordering: .relaxed)
        case .sendFailed: droppedSendFailed.add(1, ordering: .relaxed)
        }
    }

    func snapshot() -> SIPTransportStatistics {
        let rateLimited = droppedRateLimited.load(ordering: .relaxed)
        return SIPTransportStatistics(
            received: [.udp: receivedUDP.load(ordering: .relaxed), .tcp: receivedTCP.load(ordering: .relaxed),
                       .tls: receivedTLS.load(ordering: .relaxed)],
            sent: [.udp: sentUDP.load(ordering: .relaxed), .tcp: sentTCP.load(ordering: .relaxed), .tls: sentTLS.load(ordering: .relaxed)],
            dropped: [
                .malformed: droppedMalformed.load(ordering: .relaxed),
                .overLimit: droppedOverLimit.load(ordering: .relaxed),
                .rateLimited: rateLimited,
                .noTaker: droppedNoTaker.load(ordering: .relaxed),
                .unroutable: droppedUnroutable.load(ordering: .relaxed),
                .sendFailed: droppedSendFailed.load(ordering: .relaxed),
            ],
            rejected: rejected.load(ordering: .relaxed),
            rateLimitRefused: rateLimitRefused.load(ordering: .relaxed),
            rateLimitDropped: rateLimited,
            keepalives: keepalives.load(ordering: .relaxed),
            connectionsOpen: connectionsOpen.load(ordering: .relaxed),
            connectionsAccepted: connectionsAccepted.load(ordering: .relaxed),
            connectionsOpened: connectionsOpened.load(ordering: .relaxed),
            connectionsRefused: connectionsRefused.load(ordering: .relaxed),
            connectionTimeouts: connectionTimeouts.load(ordering: .relaxed),
            tlsHandshakes: tlsHandshakes.load(ordering: .relaxed),
            tlsHandshakeFailures: tlsHandshakeFailures.load(ordering: .relaxed))
    }
}
