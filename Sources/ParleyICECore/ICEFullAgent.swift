public import ParleySTUN

/// A full ICE agent (RFC 8445) for one component over UDP: the device side, normally
/// controlling, but able to play controlled against another full agent.
///
/// It pairs its host addresses with the remote candidates, sorts the pairs by priority
/// (§6.1.2.3), sends one check every `pacing` interval (Ta, §14.2), triggered checks first
/// (the nomination at once, without waiting for the next Ta),
/// retransmits with a doubling RTO, learns peer-reflexive candidates from both directions,
/// nominates with regular nomination (§8.1.1: the first pair to succeed is checked again
/// with USE-CANDIDATE, and selected when that succeeds), resolves role conflicts by
/// tie-breaker (§7.3.1.1, §7.2.5.1), and after selection keeps consent fresh (RFC 7675): a
/// check every `consentInterval` ± 20 %, failure after `consentTimeout` without a success.
///
/// Simplifications (one stream, one component, no TURN): no frozen state or foundations
/// in the schedule (every pair starts waiting), and no aggressive nomination.
///
/// Deterministic: transaction IDs and consent jitter come from the caller's generator,
/// the tie-breaker from the caller, time from `now`.
public struct ICEFullAgent: Sendable {
    /// Which side decides the nomination (RFC 8445 §6.1.1).
    public enum Role: String, Sendable, Hashable, CustomStringConvertible {
        case controlling, controlled
        public var description: String { rawValue }
    }

    /// Timers and limits.
    public struct Configuration: Sendable, Hashable {
        /// Ta, the interval between new checks (RFC 8445 §14.2: 50 ms by default).
        public var pacing: Duration
        /// The first retransmission timeout of a check; doubles on each retransmission
        /// (RFC 8489 §6.2.1). RFC 8445 §14.3 derives it from Ta and the pair count; a fixed
        /// start suits one component with few pairs.
        public var initialRTO: Duration
        /// Transmissions of one check, including the first (RFC 8489's Rc is 7; 5 keeps
        /// the worst case short: with 250 ms, sends at 0, 0.25, 0.75, 1.75, 3.75 s and the
        /// pair fails at 7.75 s).
        public var maxTransmissions: Int
        /// Mean interval between consent checks (RFC 7675 §5.1: 5 s), jittered ± 20 %.
        public var consentInterval: Duration
        /// No successful consent check for this long: `disconnected`.
        public var disconnectedAfter: Duration
        /// No successful consent check for this long: consent expired, `failed` (30 s).
        public var consentTimeout: Duration

        public init(
            pacing: Duration = .milliseconds(50), initialRTO: Duration = .milliseconds(250), maxTransmissions: Int = 5,
            consentInterval: Duration = .seconds(5), disconnectedAfter: Duration = .seconds(10), consentTimeout: Duration = .seconds(30)
        ) {
            self.pacing = pacing
            self.initialRTO = initialRTO
            self.maxTransmissions = max(1, maxTransmissions)
            self.consentInterval = consentInterval
            self.disconnectedAfter = disconnectedAfter
            self.consentTimeout = consentTimeout
        }
    }

    /// The state of one candidate pair (RFC 8445 §6.1.2.6, without Frozen).
    public enum PairState: String, Sendable, Hashable, CustomStringConvertible {
        case waiting, inProgress, succeeded, failed
        public var description: String { rawValue }
    }

    /// One entry of the checklist.
    public struct CheckedPair: Sendable, Hashable, CustomStringConvertible {
        /// The local host candidate (its address is the base checks are sent from).
        public var local: ICELocalCandidate
        public var remote: ICERemoteCandidate
        /// RFC 8445 §6.1.2.3, for the current role.
        public var priority: UInt64
        public var state: PairState
        /// A check with USE-CANDIDATE succeeded on it (controlling) or the peer nominated
        /// it and our check succeeded (controlled).
        public var nominated: Bool
        /// What the peer saw as our address (XOR-MAPPED-ADDRESS of the success).
        public var mappedAddress: ICETransportAddress?
        /// Controlled side: the peer nominated it before our own check succeeded.
        var nominateOnSuccess = false

        public var pair: ICECandidatePair { ICECandidatePair(local: local.base, remote: remote.address) }
        public var description: String { "\(pair) \(state) priority \(priority)\(nominated ? " nominated" : "")" }
    }

    private struct Transaction: Sendable {
        var pair: ICECandidatePair
        var bytes: [UInt8]
        var transmissions: Int
        var nextAt: ICEInstant
        var rto: Duration
        var useCandidate: Bool
        var isConsent: Bool
        var sentAsControlling: Bool
    }

    private struct QueuedCheck: Sendable, Hashable {
        var pair: ICECandidatePair
        var useCandidate: Bool
    }

    /// The current role; changes on a role conflict.
    public private(set) var role: Role
    /// The 64-bit tie-breaker (RFC 8445 §7.1.3), random, from the caller.
    public let tieBreaker: UInt64
    public let localCredentials: ICECredentials
    public let remoteCredentials: ICECredentials
    public let configuration: Configuration

    /// Host candidates, then reflexive ones learned from XOR-MAPPED-ADDRESS.
    public private(set) var localCandidates: [ICELocalCandidate] = []
    /// Candidates from the peer's SDP, then peer-reflexive ones learned from its checks.
    public private(set) var remoteCandidates: [ICERemoteCandidate] = []
    /// Every pair, highest priority first.
    public private(set) var checklist: [CheckedPair] = []
    public private(set) var state: ICEConnectionState = .new
    /// The pair media uses.
    public private(set) var selectedPair: ICECandidatePair?
    /// When consent was last confirmed (a consent check, or the selecting check, succeeded).
    public private(set) var lastConsent: ICEInstant?

    private var random: any RandomNumberGenerator & Sendable
    private var transactions: [STUNTransactionID: Transaction] = [:]
    private var triggered: [QueuedCheck] = []
    private var lastPacedCheck: ICEInstant?
    private var nextConsentCheck: ICEInstant?
    private var nominating: ICECandidatePair?
    private var started = false

    /// - Parameters:
    ///   - hostAddresses: local host candidates (IPv4 and IPv6), best first within a family.
    ///   - remoteCandidates: from the peer's SDP; more can come with `addRemoteCandidate`.
    ///   - random: source of transaction IDs and consent jitter; use
    ///     `SystemRandomNumberGenerator` in production, a seeded one in tests.
    public init(
        role: Role, tieBreaker: UInt64, localCredentials: ICECredentials, remoteCredentials: ICECredentials,
        hostAddresses: [ICETransportAddress], remoteCandidates: [ICERemoteCandidate] = [],
        random: some RandomNumberGenerator & Sendable, configuration: Configuration = Configuration()
    ) {
        self.role = role
        self.tieBreaker = tieBreaker
        self.localCredentials = localCredentials
        self.remoteCredentials = remoteCredentials
        self.configuration = configuration
        self.random = random
        var perFamily = (v4: 0, v6: 0)
        for address in hostAddresses where !localCandidates.contains(where: { $0.base == address }) {
            let index: Int
            if address.isIPv6 { index = perFamily.v6; perFamily.v6 += 1 } else { index = perFamily.v4; perFamily.v4 += 1 }
            let preference = ICEPriority.localPreference(for: address, index: index)
            localCandidates.append(ICELocalCandidate(
                address: address, base: address, priority: ICEPriority.candidate(type: .host, localPreference: preference), type: .host))
        }
        for candidate in remoteCandidates { addRemoteCandidate(candidate) }
    }

    /// The address to send media to.
    public var selectedRemoteAddress: ICETransportAddress? { selectedPair?.remote }

    private var isActive: Bool { state != .failed && state != .closed }

    /// Adds a remote candidate (trickled or from SDP) and pairs it with every host candidate
    /// of the same address family (RFC 8445 §6.1.2.2).
    public mutating func addRemoteCandidate(_ candidate: ICERemoteCandidate) {
        guard isActive, !remoteCandidates.contains(where: { $0.address == candidate.address }) else { return }
        remoteCandidates.append(candidate)
        for local in localCandidates where local.type == .host && local.base.isIPv6 == candidate.address.isIPv6 {
            checklist.append(CheckedPair(
                local: local, remote: candidate, priority: pairPriority(local: local, remote: candidate),
                state: .waiting, nominated: false, mappedAddress: nil))
        }
        sortChecklist()
    }

    /// Starts checking: state `checking` and the first check right away.
    public mutating func start(now: ICEInstant) -> [ICEAction] {
        guard isActive, !started else { return [] }
        var actions: [ICEAction] = []
        started = true
        setState(.checking, into: &actions)
        runTimers(now: now, into: &actions)
        return actions
    }

    /// When to call `handleTimeout(now:)` next; nil when nothing is scheduled.
    public var nextDeadline: ICEInstant? {
        guard isActive, started else { return nil }
        var deadline: ICEInstant? = nil
        func consider(_ instant: ICEInstant?) {
            guard let instant else { return }
            if deadline.map({ instant < $0 }) ?? true { deadline = instant }
        }
        for transaction in transactions.values { consider(transaction.nextAt) }
        if hasPacedWork, let lastPacedCheck { consider(lastPacedCheck + configuration.pacing) }
        if selectedPair != nil, let lastConsent {
            consider(nextConsentCheck)
            if state == .connected { consider(lastConsent + configuration.disconnectedAfter) }
            consider(lastConsent + configuration.consentTimeout)
        }
        return deadline
    }

    /// Retransmits, sends the next paced check, runs consent; call when `nextDeadline` passes.
    public mutating func handleTimeout(now: ICEInstant) -> [ICEAction] {
        var actions: [ICEAction] = []
        guard isActive, started else { return actions }
        runTimers(now: now, into: &actions)
        return actions
    }

    /// Stops the agent.
    public mutating func close() -> [ICEAction] {
        var actions: [ICEAction] = []
        transactions.removeAll()
        triggered.removeAll()
        if state != .closed { setState(.closed, into: &actions) }
        return actions
    }

    // MARK: Receiving

    /// Handles one datagram that arrived from `source` on the socket bound to `local`:
    /// responses to our checks, and the peer's checks (answered, then checked back, §7.3.1.4).
    public mutating func receive(
        _ bytes: [UInt8], from source: ICETransportAddress, on local: ICETransportAddress, now: ICEInstant
    ) -> [ICEAction] {
        guard isActive else { return [.dropped(.inactive, from: source)] }
        var actions: [ICEAction] = []
        switch ICERequestScreen.screen(bytes, local: localCredentials, remoteUfrag: remoteCredentials.ufrag) {
        case .drop(let reason): return [.dropped(reason, from: source)]
        case .reject(let answer): return [.send(bytes: answer, from: local, to: source)]
        case .response(let response): handleResponse(response, from: source, on: local, now: now, into: &actions)
        case .request(let request): handleRequest(request, from: source, on: local, now: now, into: &actions)
        }
        if isActive, started { runTimers(now: now, into: &actions) }
        return actions
    }

    private mutating func handleRequest(
        _ request: STUNMessage, from source: ICETransportAddress, on local: ICETransportAddress, now: ICEInstant,
        into actions: inout [ICEAction]
    ) {
        // RFC 8445 §7.3.1.1: both claim the same role; the larger tie-breaker controls.
        switch role {
        case .controlling:
            if let theirs = request.iceControlling {
                if tieBreaker >= theirs {
                    actions.append(.send(bytes: ICERequestScreen.errorResponse(to: request, .roleConflict, key: localCredentials.key), from: local, to: source))
                    return
                }
                switchRole(to: .controlled)
            }
        case .controlled:
            if let theirs = request.iceControlled {
                if tieBreaker < theirs {
                    actions.append(.send(bytes: ICERequestScreen.errorResponse(to: request, .roleConflict, key: localCredentials.key), from: local, to: source))
                    return
                }
                switchRole(to: .controlling)
            }
        }
        actions.append(.send(bytes: ICERequestScreen.successResponse(to: request, source: source, key: localCredentials.key), from: local, to: source))
        if !started {
            started = true
            setState(.checking, into: &actions)
        }

        // §7.3.1.3: an unknown source is a peer-reflexive candidate with the PRIORITY it sent.
        if !remoteCandidates.contains(where: { $0.address == source }) {
            let priority = request.priority ?? ICEPriority.candidate(type: .peerReflexive, localPreference: 0)
            addRemoteCandidate(ICERemoteCandidate(address: source, priority: priority, type: .peerReflexive, foundation: "prflx\(remoteCandidates.count)"))
        }
        let pair = ICECandidatePair(local: local, remote: source)
        guard let index = checklist.firstIndex(where: { $0.pair == pair }) else { return }

        // §7.3.1.5: the controlled agent nominates the pair once its own check succeeds.
        if role == .controlled, request.useCandidate {
            if checklist[index].state == .succeeded {
                select(index: index, now: now, into: &actions)
            } else {
                checklist[index].nominateOnSuccess = true
            }
        }
        // §7.3.1.4: triggered check, unless one is in flight or the pair already works.
        let inFlight = transactions.values.contains { $0.pair == pair && !$0.isConsent }
        if checklist[index].state != .succeeded, !inFlight, !triggered.contains(where: { $0.pair == pair }) {
            checklist[index].state = .waiting
            triggered.append(QueuedCheck(pair: pair, useCandidate: false))
        }
    }

    private mutating func handleResponse(
        _ response: STUNMessage, from source: ICETransportAddress, on local: ICETransportAddress, now: ICEInstant,
        into actions: inout [ICEAction]
    ) {
        guard let transaction = transactions[response.transactionID] else {
            actions.append(.dropped(.unknownTransaction, from: source))
            return
        }
        // RFC 8489 §9.1.4: successes must be signed with the peer's password. Error answers
        // to bad credentials (400/401) are unsigned by rule; a signed one must verify.
        let verdict = response.verifyMessageIntegrity(key: remoteCredentials.key)
        if verdict == .invalid || (response.messageClass == .success && verdict != .valid) {
            actions.append(.dropped(.badResponseIntegrity, from: source))
            return
        }
        transactions[response.transactionID] = nil
        let pairIndex = checklist.firstIndex { $0.pair == transaction.pair }

        // §7.2.5.2.1: a response from elsewhere than the check was sent to fails the pair.
        guard source == transaction.pair.remote, local == transaction.pair.local else {
            if !transaction.isConsent, let pairIndex { failPair(at: pairIndex) }
            return
        }
        if response.messageClass == .error {
            if response.errorCode?.code == 487, !transaction.isConsent, pairIndex != nil {
                // §7.2.5.1: take the other role than the one the check claimed, check again
                // (switching re-sorts the checklist, so find the pair anew).
                switchRole(to: transaction.sentAsControlling ? .controlled : .controlling)
                if let index = checklist.firstIndex(where: { $0.pair == transaction.pair }) {
                    checklist[index].state = .waiting
                }
                triggered.insert(QueuedCheck(pair: transaction.pair, useCandidate: false), at: 0)
            } else if !transaction.isConsent, let pairIndex {
                failPair(at: pairIndex)
            }
            return
        }

        if transaction.isConsent {
            lastConsent = now
            if state == .disconnected { setState(.connected, into: &actions) }
            return
        }
        guard let index = pairIndex else { return }
        // §7.2.5.3.1: a mapped address we do not know is a peer-reflexive local candidate.
        if let mapped = response.xorMappedAddress {
            checklist[index].mappedAddress = mapped
            if !localCandidates.contains(where: { $0.address == mapped }) {
                let host = checklist[index].local
                localCandidates.append(ICELocalCandidate(
                    address: mapped, base: host.base, priority: peerReflexivePriority(of: host), type: .peerReflexive))
            }
        }
        checklist[index].state = .succeeded
        switch role {
        case .controlling:
            if transaction.useCandidate {
                select(index: index, now: now, into: &actions)
            } else if selectedPair == nil, nominating == nil {
                // Regular nomination (§8.1.1): check the first valid pair again with USE-CANDIDATE.
                nominating = transaction.pair
                triggered.insert(QueuedCheck(pair: transaction.pair, useCandidate: true), at: 0)
            }
        case .controlled:
            if checklist[index].nominateOnSuccess { select(index: index, now: now, into: &actions) }
        }
    }

    // MARK: Timers

    private var hasPacedWork: Bool {
        !triggered.isEmpty || (selectedPair == nil && checklist.contains { $0.state == .waiting })
    }

    private mutating func runTimers(now: ICEInstant, into actions: inout [ICEAction]) {
        // Retransmissions and timeouts (RFC 8489 §6.2.1).
        for (id, transaction) in transactions.sorted(by: { $0.value.nextAt < $1.value.nextAt }) where transaction.nextAt <= now {
            if transaction.isConsent || transaction.transmissions >= configuration.maxTransmissions {
                transactions[id] = nil
                if !transaction.isConsent, let index = checklist.firstIndex(where: { $0.pair == transaction.pair }) {
                    failPair(at: index)
                }
            } else {
                var next = transaction
                next.transmissions += 1
                next.rto = next.rto * 2
                next.nextAt = now + next.rto
                transactions[id] = next
                actions.append(.send(bytes: transaction.bytes, from: transaction.pair.local, to: transaction.pair.remote))
            }
        }

        // Consent freshness (RFC 7675 §5.1).
        if let selectedPair, let lastConsent, state == .connected || state == .disconnected {
            if now - lastConsent >= configuration.consentTimeout {
                transactions.removeAll()
                triggered.removeAll()
                setState(.failed, into: &actions)
                return
            }
            if state == .connected, now - lastConsent >= configuration.disconnectedAfter {
                setState(.disconnected, into: &actions)
            }
            if let due = nextConsentCheck, now >= due {
                if let action = sendCheck(on: selectedPair, useCandidate: false, consent: true, now: now) { actions.append(action) }
                nextConsentCheck = now + jitteredConsentInterval()
            }
        }

        // Pacing (RFC 8445 §6.1.4.2): one new check per Ta, triggered ones first. The
        // nomination is sent at once: it checks again the pair whose check has just come
        // back, so it adds no traffic on an untried path, and waiting a Ta for it would add
        // 50 ms to every call's setup.
        let nominationWaits = triggered.first.map { $0.useCandidate && role == .controlling } ?? false
        if hasPacedWork, nominationWaits || (lastPacedCheck.map({ now - $0 >= configuration.pacing }) ?? true) {
            var check: QueuedCheck? = nil
            if !triggered.isEmpty {
                check = triggered.removeFirst()
            } else if selectedPair == nil, let waiting = checklist.first(where: { $0.state == .waiting }) {
                check = QueuedCheck(pair: waiting.pair, useCandidate: false)
            }
            if let check {
                lastPacedCheck = now
                if let action = sendCheck(on: check.pair, useCandidate: check.useCandidate && role == .controlling, consent: false, now: now) {
                    actions.append(action)
                }
            }
        }

        // Every pair failed and nothing is left to try.
        if state == .checking, selectedPair == nil, !checklist.isEmpty, triggered.isEmpty,
           checklist.allSatisfy({ $0.state == .failed }), !transactions.values.contains(where: { !$0.isConsent }) {
            setState(.failed, into: &actions)
        }
    }

    /// RFC 8445 §7.2.2 / §7.1: USERNAME `remoteUfrag:localUfrag`, PRIORITY as peer-reflexive,
    /// ICE-CONTROLLING or ICE-CONTROLLED with our tie-breaker, USE-CANDIDATE if nominating,
    /// MESSAGE-INTEGRITY with the remote password, FINGERPRINT.
    private mutating func sendCheck(on pair: ICECandidatePair, useCandidate: Bool, consent: Bool, now: ICEInstant) -> ICEAction? {
        guard let index = checklist.firstIndex(where: { $0.pair == pair }) else { return nil }
        let id = nextTransactionID()
        var request = STUNMessage(class: .request, method: .binding, transactionID: id)
        let bytes: [UInt8]
        do {
            try request.append(.username(remoteCredentials.ufrag + ":" + localCredentials.ufrag))
            try request.append(.priority(peerReflexivePriority(of: checklist[index].local)))
            switch role {
            case .controlling:
                try request.append(.iceControlling(tieBreaker: tieBreaker))
                if useCandidate { try request.append(.useCandidate) }
            case .controlled:
                try request.append(.iceControlled(tieBreaker: tieBreaker))
            }
            bytes = try request.encoded(addingIntegrity: [.sha1(key: remoteCredentials.key)], fingerprint: true)
        } catch {
            // Only an over-long ufrag can get here; such a pair can never be checked.
            if !consent { failPair(at: index) }
            return nil
        }
        transactions[id] = Transaction(
            pair: pair, bytes: bytes, transmissions: 1,
            nextAt: now + (consent ? configuration.consentInterval : configuration.initialRTO),
            rto: configuration.initialRTO, useCandidate: useCandidate, isConsent: consent, sentAsControlling: role == .controlling)
        // A pair that succeeded stays valid while it is checked again (the nomination):
        // what arrives from its remote address meanwhile, DTLS among it, is still accepted.
        if !consent, checklist[index].state != .succeeded { checklist[index].state = .inProgress }
        return .send(bytes: bytes, from: pair.local, to: pair.remote)
    }

    // MARK: Helpers

    private mutating func select(index: Int, now: ICEInstant, into actions: inout [ICEAction]) {
        checklist[index].nominated = true
        let pair = checklist[index].pair
        nominating = nil
        lastConsent = now
        if nextConsentCheck == nil || selectedPair == nil { nextConsentCheck = now + jitteredConsentInterval() }
        if selectedPair != pair {
            selectedPair = pair
            actions.append(.selectedPairChanged(pair))
        }
        setState(.connected, into: &actions)
    }

    private mutating func failPair(at index: Int) {
        checklist[index].state = .failed
        if nominating == checklist[index].pair { nominating = nil }
    }

    private mutating func switchRole(to newRole: Role) {
        guard role != newRole else { return }
        role = newRole
        if newRole == .controlled { nominating = nil }
        for index in checklist.indices {
            checklist[index].priority = pairPriority(local: checklist[index].local, remote: checklist[index].remote)
        }
        sortChecklist()
    }

    private func pairPriority(local: ICELocalCandidate, remote: ICERemoteCandidate) -> UInt64 {
        switch role {
        case .controlling: return ICEPriority.pair(controlling: local.priority, controlled: remote.priority)
        case .controlled: return ICEPriority.pair(controlling: remote.priority, controlled: local.priority)
        }
    }

    private mutating func sortChecklist() {
        checklist.sort { $0.priority > $1.priority }
    }

    /// RFC 8445 §7.1.1: PRIORITY is computed as for a peer-reflexive candidate with the
    /// local preference of the base.
    private func peerReflexivePriority(of host: ICELocalCandidate) -> UInt32 {
        let localPreference = UInt16(truncatingIfNeeded: host.priority >> 8)
        return ICEPriority.candidate(type: .peerReflexive, localPreference: localPreference)
    }

    private mutating func nextTransactionID() -> STUNTransactionID {
        STUNTransactionID.random(using: &random)
    }

    /// RFC 7675 §5.1: the interval randomized to 80-120 % of its mean.
    private mutating func jitteredConsentInterval() -> Duration {
        configuration.consentInterval / 1000 * Int(800 + random.next() % 401)
    }

    private mutating func setState(_ newState: ICEConnectionState, into actions: inout [ICEAction]) {
        guard state != newState else { return }
        state = newState
        actions.append(.stateChanged(newState))
    }
}
