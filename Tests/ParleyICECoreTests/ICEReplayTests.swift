@testable import ParleyICECore
import ParleySTUN
import ParleyTestSupport
import Testing

/// Issue 14 item 5: one captured, valid connectivity check re-sent from another address
/// moved a leg's media to that address. A transaction seen before is a retransmission (same
/// address) or a replay (another address), never a new nomination or consent; a real
/// network change sends a fresh transaction from the new address.
@Suite("ICE lite agent: retransmissions and replays")
struct ICEReplayTests {
    static let device = address("192.0.2.33", 50000)
    static let replayer = address("198.51.100.66", 41000)
    static let server = Fixture.serverV4

    static func pair(_ remote: ICETransportAddress) -> ICECandidatePair { ICECandidatePair(local: server, remote: remote) }

    @Test("a captured nomination re-sent from another address is dropped: the selection stays")
    func replayedNominationFromAnotherAddress() {
        var agent = Fixture.lite()
        let start = ICEInstant.now
        let nomination = Fixture.check(useCandidate: true, id: 1)
        _ = agent.receive(nomination, from: Self.device, on: Self.server, now: start)
        #expect(agent.selectedRemoteAddress == Self.device)
        let actions = agent.receive(nomination, from: Self.replayer, on: Self.server, now: start + .seconds(3))
        #expect(actions == [.dropped(.replayedTransaction, from: Self.replayer)])
        #expect(agent.selectedRemoteAddress == Self.device)
        #expect(agent.validPairs == [Self.pair(Self.device)])
        #expect(agent.learnedRemoteCandidates.map(\.address) == [Self.device])
        #expect(agent.lastConsent == start)
    }

    @Test("a captured ordinary check re-sent from another address validates nothing and is not answered")
    func replayedCheckFromAnotherAddress() {
        var agent = Fixture.lite()
        let start = ICEInstant.now
        _ = agent.receive(Fixture.check(useCandidate: true, id: 1), from: Self.device, on: Self.server, now: start)
        let consent = Fixture.check(id: 2)
        _ = agent.receive(consent, from: Self.device, on: Self.server, now: start + .seconds(5))
        #expect(agent.receive(consent, from: Self.replayer, on: Self.server, now: start + .seconds(6))
            == [.dropped(.replayedTransaction, from: Self.replayer)])
        // The replayer's address never became a valid pair, so media from it stays refused.
        #expect(agent.validPairs == [Self.pair(Self.device)])
    }

    @Test("a retransmission from the same address is answered again, and is neither nomination nor consent")
    func retransmissionIsAnsweredOnly() throws {
        var agent = Fixture.lite()
        let start = ICEInstant.now
        let nomination = Fixture.check(useCandidate: true, id: 1)
        let first = agent.receive(nomination, from: Self.device, on: Self.server, now: start)
        let again = agent.receive(nomination, from: Self.device, on: Self.server, now: start + .seconds(9))
        // The same answer, byte for byte: the peer may have lost the first one.
        #expect(again == [try #require(first.first)])
        #expect(agent.lastConsent == start)
        #expect(agent.handleTimeout(now: start + .seconds(10)) == [.stateChanged(.disconnected)])
        // A fresh transaction from the selected address is consent again.
        let fresh = agent.receive(Fixture.check(id: 2), from: Self.device, on: Self.server, now: start + .seconds(11))
        #expect(fresh.last == .stateChanged(.connected))
    }

    @Test("a genuine move: after a refused replay, a fresh nomination from the new address selects it")
    func genuineSwitchStillWorks() {
        var agent = Fixture.lite()
        let start = ICEInstant.now
        let moved = address("198.51.100.7", 52000)
        _ = agent.receive(Fixture.check(useCandidate: true, id: 1), from: Self.device, on: Self.server, now: start)
        #expect(agent.receive(Fixture.check(useCandidate: true, id: 1), from: moved, on: Self.server, now: start + .seconds(1))
            == [.dropped(.replayedTransaction, from: moved)])
        // What a network change looks like: an ordinary check, then a nomination, each with
        // a transaction ID of its own, from the new address.
        let check = agent.receive(Fixture.check(id: 2), from: moved, on: Self.server, now: start + .seconds(2))
        #expect(check.count == 1 && agent.selectedRemoteAddress == Self.device)
        let nominated = agent.receive(Fixture.check(useCandidate: true, id: 3), from: moved, on: Self.server, now: start + .seconds(2))
        #expect(nominated.contains(.selectedPairChanged(Self.pair(moved))))
        #expect(agent.selectedRemoteAddress == moved && agent.lastConsent == start + .seconds(2))
        // Consent now comes from the new address only.
        _ = agent.receive(Fixture.check(id: 4), from: moved, on: Self.server, now: start + .seconds(7))
        #expect(agent.lastConsent == start + .seconds(7))
    }

    @Test("bounded in count: past rememberedTransactions the oldest ID is forgotten first")
    func boundedInCount() {
        var agent = Fixture.lite(configuration: .init(rememberedTransactions: 4))
        let start = ICEInstant.now
        for id in UInt8(1)...5 {
            _ = agent.receive(Fixture.check(id: id), from: Self.device, on: Self.server, now: start + .milliseconds(Int(id)))
        }
        #expect(agent.rememberedTransactionCount == 4)
        // ID 2 is still known; ID 1 was pushed out, so it reads as a new check.
        #expect(agent.receive(Fixture.check(id: 2), from: Self.replayer, on: Self.server, now: start + .seconds(1))
            == [.dropped(.replayedTransaction, from: Self.replayer)])
        let forgotten = agent.receive(Fixture.check(id: 1), from: Self.replayer, on: Self.server, now: start + .seconds(1))
        #expect(forgotten.count == 1)
        #expect(agent.validPairs.contains(Self.pair(Self.replayer)))
        #expect(agent.rememberedTransactionCount == 4)
    }

    @Test("bounded in time: an ID is forgotten transactionMemory after it was seen")
    func boundedInTime() {
        var agent = Fixture.lite(configuration: .init(
            disconnectedAfter: .seconds(100), consentTimeout: .seconds(200), transactionMemory: .seconds(60)))
        let start = ICEInstant.now
        let nomination = Fixture.check(useCandidate: true, id: 1)
        _ = agent.receive(nomination, from: Self.device, on: Self.server, now: start)
        _ = agent.receive(Fixture.check(id: 2), from: Self.device, on: Self.server, now: start + .seconds(30))
        #expect(agent.receive(nomination, from: Self.replayer, on: Self.server, now: start + .seconds(59))
            == [.dropped(.replayedTransaction, from: Self.replayer)])
        #expect(agent.rememberedTransactionCount == 2)
        _ = agent.receive(Fixture.check(id: 3), from: Self.device, on: Self.server, now: start + .seconds(60))
        #expect(agent.rememberedTransactionCount == 2)
        _ = agent.receive(Fixture.check(id: 4), from: Self.device, on: Self.server, now: start + .seconds(150))
        #expect(agent.rememberedTransactionCount == 1)
    }

    @Test("the memory against a plain model: 5000 random remembers and look-ups, capacity 7")
    func memoryMatchesAModel() {
        var memory = ICETransactionMemory(capacity: 7, lifetime: .seconds(10))
        var model: [(id: STUNTransactionID, source: ICETransportAddress, at: ICEInstant)] = []
        var random = SeededGenerator(seed: 5)
        let start = ICEInstant.now
        var now = start
        let sources = [Self.device, Self.replayer, Self.server]
        for _ in 0..<5000 {
            now = now + .milliseconds(random.below(900))
            model.removeAll { now - $0.at >= .seconds(10) }
            // Twelve IDs in play, so look-ups hit and miss and IDs come back.
            let id = STUNTransactionID(bytes: [UInt8](repeating: UInt8(random.below(12)), count: 12))!
            if random.below(2) == 0 {
                let source = sources[random.below(sources.count)]
                memory.remember(id, from: source, now: now)
                if !model.contains(where: { $0.id == id }) {
                    if model.count == 7 { model.removeFirst() }
                    model.append((id, source, now))
                }
            } else {
                #expect(memory.source(of: id, now: now) == model.first(where: { $0.id == id })?.source)
            }
            #expect(memory.count == model.count)
        }
    }

    @Test("device against server: a nomination replayed mid-call changes nothing through 30 s of consent")
    func replayAgainstARealDevice() throws {
        let deviceV4 = address("192.0.2.10", 50000)
        var pump = Pump(device: Fixture.device(hosts: [deviceV4], servers: [Fixture.serverV4]), server: Fixture.lite(),
                        deviceAddresses: [deviceV4], serverAddresses: [Fixture.serverV4])
        pump.record(pump.device.start(now: pump.now), from: .device)
        pump.run(for: .seconds(2)) { $0.bothConnected }
        #expect(pump.bothConnected)
        let nominations = pump.log.compactMap { entry -> [UInt8]? in
            guard entry.side == .device, case .send(let bytes, _, _) = entry.action,
                  let message = try? STUNMessage(decoding: bytes), message.useCandidate else { return nil }
            return bytes
        }
        let captured = try #require(nominations.first)
        pump.run(for: .seconds(3))
        let replay = pump.server.receive(captured, from: Self.replayer, on: Fixture.serverV4, now: pump.now)
        #expect(replay == [.dropped(.replayedTransaction, from: Self.replayer)])
        pump.run(for: .seconds(30))
        #expect(pump.bothConnected)
        #expect(pump.server.selectedRemoteAddress == deviceV4)
        #expect(!pump.actions(of: .server).contains(.selectedPairChanged(ICECandidatePair(local: Fixture.serverV4, remote: Self.replayer))))
    }
}
