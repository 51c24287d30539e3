import ParleyICECore
import ParleySTUN
import ParleyTestSupport
import Testing

@Suite("Device (full, controlling) against server (lite), in memory")
struct ICEConnectivityTests {
    let deviceV4 = address("192.168.1.10", 50000)
    let deviceV6 = address("2001:db8::10", 50000)

    @Test("connects over IPv4: both select the same pair")
    func connectIPv4() throws {
        var pump = Pump(
            device: Fixture.device(hosts: [deviceV4], servers: [Fixture.serverV4]), server: Fixture.lite(),
            deviceAddresses: [deviceV4], serverAddresses: [Fixture.serverV4])
        pump.record(pump.device.start(now: pump.now), from: .device)
        pump.run(for: .seconds(5)) { $0.bothConnected }
        #expect(pump.bothConnected)
        #expect(pump.device.selectedPair == ICECandidatePair(local: deviceV4, remote: Fixture.serverV4))
        #expect(pump.server.selectedRemoteAddress == deviceV4)
        #expect(pump.server.selectedPair?.local == Fixture.serverV4)
        // A plain check, then the nominating one: two requests, no retransmission.
        let requests = pump.sent(by: .device).filter { $0.message.messageClass == .request }
        #expect(requests.count == 2)
        #expect(requests.first?.message.useCandidate == false)
        #expect(requests.last?.message.useCandidate == true)
        #expect(pump.actions(of: .device).contains(.selectedPairChanged(ICECandidatePair(local: deviceV4, remote: Fixture.serverV4))))
    }

    @Test("connects over IPv6")
    func connectIPv6() {
        var pump = Pump(
            device: Fixture.device(hosts: [deviceV6], servers: [Fixture.serverV6]), server: Fixture.lite(),
            deviceAddresses: [deviceV6], serverAddresses: [Fixture.serverV6])
        pump.record(pump.device.start(now: pump.now), from: .device)
        pump.run(for: .seconds(5)) { $0.bothConnected }
        #expect(pump.bothConnected)
        #expect(pump.device.selectedPair == ICECandidatePair(local: deviceV6, remote: Fixture.serverV6))
        #expect(pump.server.selectedRemoteAddress == deviceV6)
    }

    @Test("dual stack: pairs only within a family, IPv6 checked and selected first")
    func dualStack() {
        var pump = Pump(
            device: Fixture.device(hosts: [deviceV4, deviceV6], servers: [Fixture.serverV4, Fixture.serverV6]), server: Fixture.lite(),
            deviceAddresses: [deviceV4, deviceV6], serverAddresses: [Fixture.serverV4, Fixture.serverV6])
        #expect(pump.device.checklist.count == 2)
        #expect(pump.device.checklist.first?.pair == ICECandidatePair(local: deviceV6, remote: Fixture.serverV6))
        pump.record(pump.device.start(now: pump.now), from: .device)
        pump.run(for: .seconds(5)) { $0.bothConnected }
        #expect(pump.device.selectedPair == ICECandidatePair(local: deviceV6, remote: Fixture.serverV6))
    }

    @Test("through a NAT: the server learns the peer-reflexive address, the device its reflexive one")
    func throughNAT() {
        let privateAddress = address("10.0.0.2", 5000)
        let publicAddress = address("198.51.100.7", 62000)
        var pump = Pump(
            device: Fixture.device(hosts: [privateAddress], servers: [Fixture.serverV4]), server: Fixture.lite(),
            deviceAddresses: [privateAddress], serverAddresses: [Fixture.serverV4])
        pump.nat = [privateAddress: publicAddress]
        pump.record(pump.device.start(now: pump.now), from: .device)
        pump.run(for: .seconds(5)) { $0.bothConnected }
        #expect(pump.bothConnected)
        #expect(pump.server.selectedRemoteAddress == publicAddress)
        #expect(pump.server.learnedRemoteCandidates.map(\.address) == [publicAddress])
        #expect(pump.server.learnedRemoteCandidates.first?.type == .peerReflexive)
        let learned = pump.device.localCandidates.filter { $0.type == .peerReflexive }
        #expect(learned.map(\.address) == [publicAddress])
        #expect(learned.first?.base == privateAddress)
        #expect(pump.device.selectedPair == ICECandidatePair(local: privateAddress, remote: Fixture.serverV4))
        #expect(pump.device.checklist.first?.mappedAddress == publicAddress)
    }

    @Test("the first three checks are lost: retransmissions (same bytes, doubling RTO) connect")
    func lossThenRetransmission() throws {
        var pump = Pump(
            device: Fixture.device(hosts: [deviceV4], servers: [Fixture.serverV4]), server: Fixture.lite(),
            deviceAddresses: [deviceV4], serverAddresses: [Fixture.serverV4])
        pump.lose = { side, _, index in side == .device && index < 3 }
        pump.record(pump.device.start(now: pump.now), from: .device)
        pump.run(for: .seconds(10)) { $0.bothConnected }
        #expect(pump.bothConnected)
        let sends = pump.log.filter { $0.side == .device }.compactMap { entry -> (Duration, [UInt8])? in
            if case .send(let bytes, _, _) = entry.action { return (entry.at, bytes) }
            return nil
        }
        try #require(sends.count >= 4)
        #expect(Set(sends.prefix(4).map(\.1)).count == 1)
        #expect(sends.prefix(4).map(\.0) == [.zero, .milliseconds(250), .milliseconds(750), .milliseconds(1750)])
    }

    @Test("all checks lost: the pair fails after maxTransmissions and the agent fails")
    func everythingLost() {
        var pump = Pump(
            device: Fixture.device(hosts: [deviceV4], servers: [Fixture.serverV4]), server: Fixture.lite(),
            deviceAddresses: [deviceV4], serverAddresses: [Fixture.serverV4])
        pump.lose = { _, _, _ in true }
        pump.record(pump.device.start(now: pump.now), from: .device)
        pump.run(for: .seconds(20)) { $0.device.state == .failed }
        #expect(pump.device.state == .failed)
        #expect(pump.sentCount[.device] == 5)
        #expect(pump.firstTime(.device, reached: .failed) == .milliseconds(7750))
    }

    @Test("wrong password: the server answers 401 without MESSAGE-INTEGRITY, the device fails")
    func wrongPassword() throws {
        let wrong = ICECredentials(ufrag: "srvU", password: "not-the-server-password")
        var pump = Pump(
            device: Fixture.device(hosts: [deviceV4], servers: [Fixture.serverV4], serverCredentials: wrong), server: Fixture.lite(),
            deviceAddresses: [deviceV4], serverAddresses: [Fixture.serverV4])
        pump.record(pump.device.start(now: pump.now), from: .device)
        pump.run(for: .seconds(10)) { $0.device.state == .failed }
        #expect(pump.device.state == .failed)
        #expect(pump.server.state == .new)
        let answer = try #require(pump.sent(by: .server).first?.message)
        #expect(answer.messageClass == .error)
        #expect(answer.errorCode?.code == 401)
        #expect(answer.verifyMessageIntegrity(key: .shortTerm(password: "x")) == .absent)
        #expect(answer.verifyFingerprint() == .valid)
    }

    @Test("wrong ufrag: 401, the device fails")
    func wrongUfrag() throws {
        let wrong = ICECredentials(ufrag: "nope", password: Fixture.serverCredentials.password)
        var pump = Pump(
            device: Fixture.device(hosts: [deviceV4], servers: [Fixture.serverV4], serverCredentials: wrong), server: Fixture.lite(),
            deviceAddresses: [deviceV4], serverAddresses: [Fixture.serverV4])
        pump.record(pump.device.start(now: pump.now), from: .device)
        pump.run(for: .seconds(10)) { $0.device.state == .failed }
        #expect(pump.device.state == .failed)
        #expect(pump.sent(by: .server).first?.message.errorCode?.code == 401)
    }

    @Test("RFC 7675: the device sends consent checks every 4-6 s; they keep both sides connected")
    func consentKeepsAlive() {
        var pump = Pump(
            device: Fixture.device(hosts: [deviceV4], servers: [Fixture.serverV4]), server: Fixture.lite(),
            deviceAddresses: [deviceV4], serverAddresses: [Fixture.serverV4])
        pump.record(pump.device.start(now: pump.now), from: .device)
        pump.run(for: .seconds(5)) { $0.bothConnected }
        let connectedAt = pump.elapsed
        pump.run(for: .seconds(60))
        #expect(pump.bothConnected)
        let times = pump.sent(by: .device).filter { $0.at > connectedAt }.map(\.at)
        #expect(times.count >= 10)
        for (earlier, later) in zip(times, times.dropFirst()) {
            #expect(later - earlier >= .seconds(4) && later - earlier <= .seconds(6))
        }
        #expect(!pump.log.contains { $0.action == .stateChanged(.disconnected) })
    }

    @Test("peer stops answering: consent expires at 30 s on both sides (disconnected first)")
    func consentExpires() throws {
        var pump = Pump(
            device: Fixture.device(hosts: [deviceV4], servers: [Fixture.serverV4]), server: Fixture.lite(),
            deviceAddresses: [deviceV4], serverAddresses: [Fixture.serverV4])
        pump.record(pump.device.start(now: pump.now), from: .device)
        pump.run(for: .seconds(5)) { $0.bothConnected }
        let cut = pump.elapsed
        pump.lose = { _, _, _ in true }
        pump.run(for: .seconds(60)) { $0.device.state == .failed && $0.server.state == .failed }
        let serverFailed = try #require(pump.firstTime(.server, reached: .failed))
        let deviceFailed = try #require(pump.firstTime(.device, reached: .failed))
        #expect(serverFailed - cut == .seconds(30))
        #expect(deviceFailed - cut == .seconds(30))
        #expect(pump.firstTime(.server, reached: .disconnected).map { $0 - cut } == .seconds(10))
        #expect(pump.firstTime(.device, reached: .disconnected).map { $0 - cut } == .seconds(10))
        #expect(pump.device.nextDeadline == nil)
        #expect(pump.server.nextDeadline == nil)
    }

    @Test("same seed, same run: the agents are deterministic")
    func deterministic() {
        func run() -> [ICEAction] {
            var pump = Pump(
                device: Fixture.device(hosts: [deviceV4], servers: [Fixture.serverV4], seed: 42), server: Fixture.lite(),
                deviceAddresses: [deviceV4], serverAddresses: [Fixture.serverV4])
            pump.record(pump.device.start(now: pump.now), from: .device)
            pump.run(for: .seconds(20))
            return pump.log.map(\.action)
        }
        #expect(run() == run())
    }

    @Test("RFC 8445 §7.2.2: the device's check carries USERNAME, PRIORITY, ICE-CONTROLLING, MI (remote password), FINGERPRINT")
    func checkContents() throws {
        var device = Fixture.device(hosts: [deviceV4], servers: [Fixture.serverV4])
        let actions = device.start(now: .now)
        guard case .send(let bytes, let from, let to)? = actions.last else { Issue.record("no check sent"); return }
        #expect(from == deviceV4 && to == Fixture.serverV4)
        let check = try STUNMessage(decoding: bytes)
        #expect(check.messageClass == .request && check.method == .binding)
        #expect(check.username == "srvU:devU")
        #expect(check.priority == ICEPriority.candidate(type: .peerReflexive, localPreference: 32767))
        #expect(check.iceControlling == 0x1111_2222_3333_4444)
        #expect(check.useCandidate == false)
        #expect(check.verifyMessageIntegrity(key: .shortTerm(password: Fixture.serverCredentials.password)) == .valid)
        #expect(check.verifyFingerprint() == .valid)
        #expect(actions.first == .stateChanged(.checking))
    }

    @Test("a success from another address than the check went to fails the pair (§7.2.5.2.1)")
    func asymmetricResponse() throws {
        var device = Fixture.device(hosts: [deviceV4], servers: [Fixture.serverV4])
        let now = ICEInstant.now
        guard case .send(let bytes, _, _)? = device.start(now: now).last else { Issue.record("no check"); return }
        var server = Fixture.lite()
        guard case .send(let answer, _, _)? = server.receive(bytes, from: deviceV4, on: Fixture.serverV4, now: now).first else {
            Issue.record("no answer"); return
        }
        _ = device.receive(answer, from: address("203.0.113.99", 3478), on: deviceV4, now: now)
        #expect(device.checklist.first?.state == .failed)
        #expect(device.state == .failed)
    }

    @Test("a forged success (wrong integrity) is dropped and the check goes on")
    func forgedResponse() throws {
        var device = Fixture.device(hosts: [deviceV4], servers: [Fixture.serverV4])
        let now = ICEInstant.now
        guard case .send(let bytes, _, _)? = device.start(now: now).last else { Issue.record("no check"); return }
        let check = try STUNMessage(decoding: bytes)
        var forged = STUNMessage(class: .success, method: .binding, transactionID: check.transactionID)
        try forged.append(.xorMappedAddress(deviceV4))
        let forgedBytes = try forged.encoded(addingIntegrity: [.sha1(key: .shortTerm(password: "guess"))], fingerprint: true)
        #expect(device.receive(forgedBytes, from: Fixture.serverV4, on: deviceV4, now: now) == [.dropped(.badResponseIntegrity, from: Fixture.serverV4)])
        #expect(device.checklist.first?.state == .inProgress)
        let unknown = try forged.encoded(addingIntegrity: [.sha1(key: .shortTerm(password: Fixture.serverCredentials.password))], fingerprint: true)
        var other = device
        _ = other.receive(unknown, from: Fixture.serverV4, on: deviceV4, now: now)
        #expect(other.checklist.first?.state == .succeeded)
        var wrongID = forged
        wrongID.transactionID = STUNTransactionID(bytes: [UInt8](repeating: 9, count: 12))!
        let stray = try wrongID.encoded(addingIntegrity: [.sha1(key: .shortTerm(password: Fixture.serverCredentials.password))], fingerprint: true)
        #expect(device.receive(stray, from: Fixture.serverV4, on: deviceV4, now: now) == [.dropped(.unknownTransaction, from: Fixture.serverV4)])
    }
}
