public import ParleySTUN

/// The server side of ICE: a lite agent (RFC 8445 §2.5), always in the controlled role.
///
/// It has host candidates only, sends no checks and answers the ones it gets. Any source
/// address whose check passes becomes a valid pair (peer-reflexive learning, §7.3.1.3); the
/// pair the controlling agent nominates last with USE-CANDIDATE is selected for media.
/// Consent (RFC 7675) is the peer's checks: a lite agent cannot send its own, so it tracks
/// the last authenticated check from the selected address and fails when none comes for
/// `consentTimeout`.
///
/// Only a new transaction counts. A check whose transaction ID was already seen is sent
/// again as it was: from the same address it is a retransmission (answered again, nothing
/// else), from another address it is a replay of a captured check (dropped as
/// `replayedTransaction`). Without this, one captured check with USE-CANDIDATE re-sent from
/// anywhere moved the leg's media there. A real network change shows a fresh transaction
/// from the new address (the password signs the ID), and with USE-CANDIDATE it still moves
/// the selection.
///
/// Sans-I/O: feed datagrams to `receive`, call `handleTimeout(now:)` when `nextDeadline`
/// passes, and carry out the returned `ICEAction`s in order.
public struct ICELiteAgent: Sendable {
    /// Timers of a lite agent.
    public struct Configuration: Sendable, Hashable {
        /// No authenticated check from the selected address for this long: `disconnected`.
        public var disconnectedAfter: Duration
        /// No authenticated check from the selected address (or, before selection, from any
        /// address) for this long: consent expired, `failed` (RFC 7675 §5.1: 30 s).
        public var consentTimeout: Duration

        /// Transaction IDs remembered at most, to recognise retransmissions and replays.
        public var rememberedTransactions: Int
        /// How long a transaction ID is remembered.
        public var transactionMemory: Duration

        /// The defaults keep the checks of the last 21 minutes from our own device (one
        /// every 5 s) or about 8 minutes from Chromium (about one every 2 s once
        /// connected), far longer than any STUN retransmission lasts (39.5 s with RFC
        /// 8489's defaults), in about 30 KB per leg at most.
        public init(
            disconnectedAfter: Duration = .seconds(10), consentTimeout: Duration = .seconds(30),
            rememberedTransactions: Int = 256, transactionMemory: Duration = .seconds(30 * 60)
        ) {
            self.disconnectedAfter = disconnectedAfter
            self.consentTimeout = consentTimeout
            self.rememberedTransactions = rememberedTransactions
            self.transactionMemory = transactionMemory
        }
    }

    /// Our ufrag and password, as put in our SDP.
    public let localCredentials: ICECredentials
    /// The peer's ufrag and password from its SDP; until set, any peer ufrag is accepted
    /// (the password is not needed: a lite agent only checks its own).
    public var remoteCredentials: ICECredentials?
    public let configuration: Configuration

    /// The current state.
    public private(set) var state: ICEConnectionState = .new
    /// Every pair a check passed on, in the order first seen (RFC 8445 §7.3.1.3).
    public private(set) var validPairs: [ICECandidatePair] = []
    /// Remote candidates learned from checks, with the PRIORITY they carried.
    public private(set) var learnedRemoteCandidates: [ICERemoteCandidate] = []
    /// The nominated pair media uses, if any.
    public private(set) var selectedPair: ICECandidatePair?
    /// When the last authenticated check arrived from the selected pair (or from anyone,
    /// before a selection).
    public private(set) var lastConsent: ICEInstant?

    /// The checks acted on so far, by transaction ID.
    private var seenTransactions: ICETransactionMemory

    public init(localCredentials: ICECredentials, remoteCredentials: ICECredentials? = nil, configuration: Configuration = Configuration()) {
        self.localCredentials = localCredentials
        self.remoteCredentials = remoteCredentials
        self.configuration = configuration
        seenTransactions = ICETransactionMemory(capacity: configuration.rememberedTransactions, lifetime: configuration.transactionMemory)
    }

    /// How many transaction IDs are remembered now (at most `rememberedTransactions`).
    public var rememberedTransactionCount: Int { seenTransactions.count }

    /// The address to send media to: the selected pair's remote address.
    public var selectedRemoteAddress: ICETransportAddress? { selectedPair?.remote }

    /// When to call `handleTimeout(now:)` next; nil when no timer runs.
    public var nextDeadline: ICEInstant? {
        guard let lastConsent, state == .checking || state == .connected || state == .disconnected else { return nil }
        if state == .connected { return lastConsent + configuration.disconnectedAfter }
        return lastConsent + configuration.consentTimeout
    }

    /// Handles one datagram that arrived from `source` on the socket bound to `local`.
    ///
    /// A valid Binding request is answered with a signed success carrying `source` in
    /// XOR-MAPPED-ADDRESS; a request with bad credentials gets 400/401, one with unknown
    /// comprehension-required attributes 420, one claiming ICE-CONTROLLED 487 (a lite agent
    /// cannot take the controlling role, so the peer must, RFC 8445 §7.3.1.1). A transaction
    /// seen before is answered again, and nothing else, when it comes from the same address,
    /// and dropped as `replayedTransaction` from any other. Anything else is dropped and
    /// reported as `.dropped`.
    public mutating func receive(
        _ bytes: [UInt8], from source: ICETransportAddress, on local: ICETransportAddress, now: ICEInstant
    ) -> [ICEAction] {
        guard state != .failed, state != .closed else { return [.dropped(.inactive, from: source)] }
        let request: STUNMessage
        switch ICERequestScreen.screen(bytes, local: localCredentials, remoteUfrag: remoteCredentials?.ufrag) {
        case .drop(let reason): return [.dropped(reason, from: source)]
        case .response: return [.dropped(.unsupportedMessage, from: source)]
        case .reject(let answer): return [.send(bytes: answer, from: local, to: source)]
        case .request(let message): request = message
        }
        if request.iceControlled != nil {
            let answer = ICERequestScreen.errorResponse(to: request, .roleConflict, key: localCredentials.key)
            return [.send(bytes: answer, from: local, to: source)]
        }

        let answer = ICERequestScreen.successResponse(to: request, source: source, key: localCredentials.key)
        if let first = seenTransactions.source(of: request.transactionID, now: now) {
            // Not a new check: neither a nomination nor consent (RFC 7675 needs a fresh
            // transaction). The same address lost our answer; another one replays a capture.
            guard first == source else { return [.dropped(.replayedTransaction, from: source)] }
            return [.send(bytes: answer, from: local, to: source)]
        }
        seenTransactions.remember(request.transactionID, from: source, now: now)

        var actions: [ICEAction] = [.send(bytes: answer, from: local, to: source)]
        let pair = ICECandidatePair(local: local, remote: source)
        if !validPairs.contains(pair) {
            validPairs.append(pair)
            if !learnedRemoteCandidates.contains(where: { $0.address == source }) {
                let priority = request.priority ?? ICEPriority.candidate(type: .peerReflexive, localPreference: 0)
                learnedRemoteCandidates.append(ICERemoteCandidate(
                    address: source, priority: priority, type: .peerReflexive, foundation: "prflx\(learnedRemoteCandidates.count)"))
            }
        }
        if state == .new { setState(.checking, into: &actions) }
        // RFC 8445 §7.3.1.5 and §8.1.1: the controlling agent's latest nomination wins.
        if request.useCandidate, selectedPair != pair {
            selectedPair = pair
            actions.append(.selectedPairChanged(pair))
        }
        if selectedPair == nil || selectedPair == pair {
            lastConsent = now
            if selectedPair != nil, state != .connected { setState(.connected, into: &actions) }
        }
        return actions
    }

    /// Runs the consent timers (RFC 7675): `disconnected` after `disconnectedAfter` without
    /// a check from the selected address, `failed` after `consentTimeout`.
    public mutating func handleTimeout(now: ICEInstant) -> [ICEAction] {
        var actions: [ICEAction] = []
        guard let lastConsent else { return actions }
        switch state {
        case .checking, .connected, .disconnected:
            if now - lastConsent >= configuration.consentTimeout {
                setState(.failed, into: &actions)
            } else if state == .connected, now - lastConsent >= configuration.disconnectedAfter {
                setState(.disconnected, into: &actions)
            }
        case .new, .failed, .closed:
            break
        }
        return actions
    }

    /// Stops the agent: it answers nothing more.
    public mutating func close() -> [ICEAction] {
        var actions: [ICEAction] = []
        if state != .closed { setState(.closed, into: &actions) }
        return actions
    }

    private mutating func setState(_ newState: ICEConnectionState, into actions: inout [ICEAction]) {
        guard state != newState else { return }
        state = newState
        actions.append(.stateChanged(newState))
    }
}
