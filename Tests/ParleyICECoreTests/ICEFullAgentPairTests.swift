import ParleyICECore
import ParleySTUN
import ParleyTestSupport
import Testing

@Suite("Full agent against full agent")
struct ICEFullAgentPairTests {
    let addressA = address("192.0.2.10", 40000)
    let addressB = address("192.0.2.20", 40002)
    let credentialsA = ICECredentials(ufrag: "aaaa", password: "password-of-agent-a-000")
    let credentialsB = ICECredentials(ufrag: "bbbb", password: "password-of-agent-b-000")

    func agent(
        _ role: ICEFullAgent.Role, tieBreaker: UInt64, local: ICECredentials, remote: ICECredentials,
        host: ICETransportAddress, peer: ICETransportAddress, seed: UInt64
    ) -> ICEFullAgent {
        let preference = ICEPriority.localPreference(for: peer, index: 0)
        return ICEFullAgent(
            role: role, tieBreaker: tieBreaker, localCredentials: local, remoteCredentials: remote, hostAddresses: [host],
            remoteCandidates: [ICERemoteCandidate(address: peer, priority: ICEPriority.candidate(type: .host, localPreference: preference), type: .host, foundation: "1")],
            random: SeededGenerator(seed: seed))
    }

    func pump(roleA: ICEFullAgent.Role, tieA: UInt64, roleB: ICEFullAgent.Role, tieB: UInt64) -> Pump<ICEFullAgent, ICEFullAgent> {
        var pump = Pump(
            device: agent(roleA, tieBreaker: tieA, local: credentialsA, remote: credentialsB, host: addressA, peer: addressB, seed: 1),
            server: agent(roleB, tieBreaker: tieB, local: credentialsB, remote: credentialsA, host: addressB, peer: addressA, seed: 2),
            deviceAddresses: [addressA], serverAddresses: [addressB])
        pump.record(pump.device.start(now: pump.now), from: .device)
        pump.record(pump.server.start(now: pump.now), from: .server)
        pump.run(for: .seconds(10)) { $0.bothConnected }
        return pump
    }

    @Test("controlling and controlled connect and select mirrored pairs")
    func controllingAndControlled() {
        let pump = pump(roleA: .controlling, tieA: 10, roleB: .controlled, tieB: 20)
        #expect(pump.bothConnected)
        #expect(pump.device.selectedPair == ICECandidatePair(local: addressA, remote: addressB))
        #expect(pump.server.selectedPair == ICECandidatePair(local: addressB, remote: addressA))
        #expect(pump.device.role == .controlling && pump.server.role == .controlled)
        // Only the controlling side nominates.
        #expect(pump.sent(by: .server).allSatisfy { !$0.message.useCandidate })
        #expect(pump.sent(by: .device).contains { $0.message.useCandidate })
    }

    @Test("RFC 8445 §7.3.1.1: both controlling; the larger tie-breaker stays controlling (487 to the other)")
    func bothControlling() {
        let pump = pump(roleA: .controlling, tieA: 0x10, roleB: .controlling, tieB: 0x20)
        #expect(pump.bothConnected)
        #expect(pump.server.role == .controlling)
        #expect(pump.device.role == .controlled)
        #expect(pump.device.selectedPair == ICECandidatePair(local: addressA, remote: addressB))
        #expect(pump.sent(by: .server).contains { $0.message.errorCode?.code == 487 })
    }

    @Test("RFC 8445 §7.3.1.1: both controlled; the larger tie-breaker switches to controlling")
    func bothControlled() {
        let pump = pump(roleA: .controlled, tieA: 0x99, roleB: .controlled, tieB: 0x20)
        #expect(pump.bothConnected)
        #expect(pump.device.role == .controlling)
        #expect(pump.server.role == .controlled)
        #expect(pump.server.selectedPair == ICECandidatePair(local: addressB, remote: addressA))
    }

    @Test("a controlled agent that was never started answers and checks back (triggered check, §7.3.1.4)")
    func controlledNotStarted() {
        var pump = Pump(
            device: agent(.controlling, tieBreaker: 1, local: credentialsA, remote: credentialsB, host: addressA, peer: addressB, seed: 3),
            server: agent(.controlled, tieBreaker: 2, local: credentialsB, remote: credentialsA, host: addressB, peer: addressA, seed: 4),
            deviceAddresses: [addressA], serverAddresses: [addressB])
        pump.record(pump.device.start(now: pump.now), from: .device)
        pump.run(for: .seconds(10)) { $0.bothConnected }
        #expect(pump.bothConnected)
        #expect(pump.sent(by: .server).contains { $0.message.messageClass == .request })
    }

    @Test("§7.3.1.3: a check from an unknown address adds a peer-reflexive remote candidate")
    func peerReflexiveRemote() {
        var agentB = agent(.controlled, tieBreaker: 2, local: credentialsB, remote: credentialsA, host: addressB, peer: addressA, seed: 4)
        let stranger = address("198.51.100.50", 1234)
        var check = STUNMessage(class: .request, method: .binding, transactionID: STUNTransactionID(bytes: [UInt8](repeating: 1, count: 12))!)
        try! check.append(.username("bbbb:aaaa"))
        try! check.append(.priority(1_845_501_695))
        try! check.append(.iceControlling(tieBreaker: 1))
        let bytes = try! check.encoded(addingIntegrity: [.sha1(key: .shortTerm(password: credentialsB.password))], fingerprint: true)
        let actions = agentB.receive(bytes, from: stranger, on: addressB, now: .now)
        #expect(agentB.remoteCandidates.last == ICERemoteCandidate(address: stranger, priority: 1_845_501_695, type: .peerReflexive, foundation: "prflx1"))
        #expect(agentB.checklist.contains { $0.pair == ICECandidatePair(local: addressB, remote: stranger) })
        // The answer, then the triggered check to the stranger.
        let sends = actions.compactMap { action -> ICETransportAddress? in
            if case .send(_, _, let to) = action { return to }
            return nil
        }
        #expect(sends == [stranger, stranger])
    }
}
