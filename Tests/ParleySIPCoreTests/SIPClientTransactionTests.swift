import Testing
import ParleySIP
import ParleySIPCore

/// Client transactions (RFC 3261 §17.1, RFC 6026 §7.2), every timer on virtual time with
/// the default T1 500 ms, T2 4 s, T4 5 s.
@Suite struct SIPClientTransactionTests {
    private let invite = Messages.request(.invite, branch: "z9hG4bKinv1", viaHost: Hops.local)

    // MARK: INVITE client

    @Test func rfc3261_17_1_1_2_timerADoublesWithoutCapUntilTimerB() throws {
        var clock = LayerClock()
        let (id, first) = try clock.send(invite)
        #expect(first.sent == [invite])
        #expect(VirtualTime.ms(clock.layer.nextDeadline) == 500)
        let events = clock.run(until: 40_000)
        let retransmissions = events.filter { if case .send = $0.output { true } else { false } }
        // A: T1, 2·T1, 4·T1... (no T2 cap for INVITE, §17.1.1.2): sent at 0.5, 1.5, 3.5,
        // 7.5, 15.5 and 31.5 s; Timer B (64·T1) at 32 s.
        #expect(retransmissions.map(\.at) == [500, 1500, 3500, 7500, 15_500, 31_500])
        #expect(retransmissions.allSatisfy { if case .send(let m, let hop) = $0.output { m == invite && hop == Hops.peer } else { false } })
        let tu = events.filter { if case .send = $0.output { false } else { true } }
        #expect(tu.count == 1)
        #expect(tu.first?.at == 32_000)
        #expect(tu.first.map { $0.output == .timeout(id) } == true)
        #expect(clock.layer.transactionCount == 0)
        #expect(clock.layer.nextDeadline == nil)
    }

    @Test func rfc3261_17_1_1_2_reliableTransportSkipsTimerA() throws {
        var clock = LayerClock()
        let (id, _) = try clock.send(invite, to: Hops.peerTCP)
        #expect(VirtualTime.ms(clock.layer.nextDeadline) == 32_000)
        let events = clock.run(until: 40_000)
        #expect(events.map(\.output) == [.timeout(id)])
    }

    @Test func rfc3261_17_1_1_2_provisionalStopsTimersAAndB() throws {
        var clock = LayerClock()
        let (id, _) = try clock.send(invite)
        clock.now = 200
        let ringing = Messages.response(180, to: invite)
        #expect(clock.receive(ringing) == [.response(ringing, transaction: id)])
        // Proceeding has no timer: the TU decides when to give up (it sends CANCEL).
        #expect(clock.layer.nextDeadline == nil)
        #expect(clock.run(until: 120_000).isEmpty)
        #expect(clock.layer.contains(id))
    }

    @Test func rfc3261_17_1_1_3_failureIsAcknowledgedByTheTransactionUntilTimerD() throws {
        var clock = LayerClock()
        let (id, _) = try clock.send(invite)
        clock.now = 100
        _ = clock.receive(Messages.response(180, to: invite))
        clock.now = 1_000
        let busy = Messages.response(486, to: invite, toTag: "busy1")
        let outputs = clock.receive(busy)
        #expect(outputs.toTU == [.response(busy, transaction: id)])
        let ack = try #require(outputs.sent.first)
        #expect(outputs.sentHops == [Hops.peer])
        // §17.1.1.3: the INVITE's Request-URI, Call-ID, From and top Via (same branch),
        // the response's To with its tag, CSeq number with method ACK.
        #expect(ack.method == .ack)
        #expect(ack.requestURI == invite.requestURI)
        #expect(try ack.topVia()?.branch == "z9hG4bKinv1")
        #expect(try ack.to()?.tag == "busy1")
        #expect(try ack.from() == invite.from())
        #expect(try ack.callID() == invite.callID())
        #expect(try ack.cseq() == SIPCSeq(sequence: 1, method: .ack))
        #expect(ack.body.isEmpty)
        #expect(VirtualTime.ms(clock.layer.nextDeadline) == 33_000)

        // The 486 again (our ACK was lost): ACK again, the TU hears nothing.
        clock.now = 2_000
        let again = clock.receive(busy)
        #expect(again.sent == [ack])
        #expect(again.toTU.isEmpty)
        #expect(clock.run(until: 33_000).isEmpty)
        #expect(!clock.layer.contains(id))
    }

    @Test func rfc3261_17_1_1_2_timerDIsZeroOverReliableTransports() throws {
        var clock = LayerClock()
        let (id, _) = try clock.send(invite, to: Hops.peerTCP)
        let outputs = clock.receive(Messages.response(603, to: invite), from: Hops.peerTCP)
        #expect(outputs.sent.map(\.method) == [.ack])
        #expect(!clock.layer.contains(id))
    }

    @Test func rfc6026_7_2_acceptedPassesEvery2xxUpUntilTimerM() throws {
        var clock = LayerClock()
        let (id, _) = try clock.send(invite)
        clock.now = 300
        let ok = Messages.response(200, to: invite, toTag: "uas1")
        let outputs = clock.receive(ok)
        // No ACK from the transaction: the 2xx's ACK is the TU's (§13.2.2.4).
        #expect(outputs == [.response(ok, transaction: id)])
        #expect(VirtualTime.ms(clock.layer.nextDeadline) == 32_300)
        // A retransmission and another fork's 2xx both reach the TU.
        clock.now = 800
        #expect(clock.receive(ok) == [.response(ok, transaction: id)])
        let fork = Messages.response(200, to: invite, toTag: "uas2")
        #expect(clock.receive(fork) == [.response(fork, transaction: id)])
        // A late failure is ignored in Accepted.
        #expect(clock.receive(Messages.response(500, to: invite)).isEmpty)
        #expect(clock.run(until: 32_300).isEmpty)
        #expect(!clock.layer.contains(id))
        // After Timer M a 2xx is a stray, for the TU to acknowledge again.
        #expect(clock.receive(ok) == [.strayResponse(ok, from: Hops.peer)])
    }

    // MARK: Non-INVITE client

    @Test func rfc3261_17_1_2_2_timerEDoublesUpToT2UntilTimerF() throws {
        var clock = LayerClock()
        let bye = Messages.request(.bye, branch: "z9hG4bKbye1", viaHost: Hops.local, cseq: 2, toTag: "t1")
        let (id, first) = try clock.send(bye)
        #expect(first.sent == [bye])
        let events = clock.run(until: 40_000)
        let sends = events.filter { if case .send = $0.output { true } else { false } }.map(\.at)
        // E: 0.5, 1, 2, then 4 s (T2) intervals.
        #expect(sends == [500, 1500, 3500, 7500, 11_500, 15_500, 19_500, 23_500, 27_500, 31_500])
        #expect(events.last.map { $0.at == 32_000 && $0.output == .timeout(id) } == true)
        #expect(clock.layer.transactionCount == 0)
    }

    @Test func rfc3261_17_1_2_2_proceedingRetransmitsAtT2() throws {
        var clock = LayerClock()
        let options = Messages.request(.options, branch: "z9hG4bKopt1", viaHost: Hops.local)
        let (id, _) = try clock.send(options)
        _ = clock.run(until: 600)  // one retransmission at 500
        let trying = Messages.response(100, to: options)
        #expect(clock.receive(trying) == [.response(trying, transaction: id)])
        // E was set to 1 s at 500 ms and fires at 1.5 s; in Proceeding it is reset to T2.
        let events = clock.run(until: 10_000)
        #expect(events.map(\.at) == [1500, 5500, 9500])
    }

    @Test func rfc3261_17_1_2_2_finalResponseThenTimerKAbsorbsRetransmissions() throws {
        var clock = LayerClock()
        let bye = Messages.request(.bye, branch: "z9hG4bKbye2", viaHost: Hops.local, cseq: 2, toTag: "t1")
        let (id, _) = try clock.send(bye)
        clock.now = 700
        let ok = Messages.response(200, to: bye)
        #expect(clock.receive(ok) == [.response(ok, transaction: id)])
        #expect(VirtualTime.ms(clock.layer.nextDeadline) == 5_700)  // K = T4
        #expect(clock.receive(ok).isEmpty)
        #expect(clock.run(until: 5_700).isEmpty)
        #expect(!clock.layer.contains(id))
    }

    @Test func rfc3261_17_1_2_2_reliableTransportNeitherRetransmitsNorWaits() throws {
        var clock = LayerClock()
        let bye = Messages.request(.bye, branch: "z9hG4bKbye3", viaHost: Hops.local, transport: "TCP", cseq: 2, toTag: "t1")
        let (id, _) = try clock.send(bye, to: Hops.peerTCP)
        #expect(VirtualTime.ms(clock.layer.nextDeadline) == 32_000)
        clock.now = 10_000
        _ = clock.receive(Messages.response(200, to: bye), from: Hops.peerTCP)
        #expect(!clock.layer.contains(id))
    }

    // MARK: The TU's mistakes and the transport's failures

    @Test func refusesRequestsThatCannotStartATransaction() throws {
        var clock = LayerClock()
        let ack = Messages.request(.ack, branch: "z9hG4bKack", viaHost: Hops.local)
        #expect(throws: SIPTransactionError.self) { try clock.send(ack) }
        let noCookie = Messages.request(.invite, branch: "old-branch", viaHost: Hops.local)
        #expect(throws: SIPTransactionError.self) { try clock.send(noCookie) }
        _ = try clock.send(invite)
        do {
            _ = try clock.send(invite)
            Issue.record("a second transaction with one branch was accepted")
        } catch let error as SIPTransactionError {
            #expect(error.kind == .duplicateTransaction)
        }
        #expect(clock.layer.transactionCount == 1)
    }

    @Test func transportFailureEndsTheTransaction() throws {
        var clock = LayerClock()
        let (id, _) = try clock.send(invite, to: Hops.peerTCP)
        #expect(clock.layer.transportFailed(id, now: VirtualTime.at(10)) == [.transportError(id)])
        #expect(clock.layer.transactionCount == 0)
        #expect(clock.layer.nextDeadline == nil)
    }

    @Test func rfc6026_8_responseWithoutTransactionIsStray() throws {
        var clock = LayerClock()
        let ok = Messages.response(200, to: invite)
        #expect(clock.receive(ok) == [.strayResponse(ok, from: Hops.peer)])
    }

    @Test func malformedResponseIsDropped() throws {
        var clock = LayerClock()
        _ = try clock.send(invite)
        var bad = Messages.response(180, to: invite)
        bad.headers.remove(name: "Call-ID")
        let outputs = clock.receive(bad)
        #expect(outputs.count == 1)
        guard case .refused(nil, _, Hops.peer) = outputs.first else {
            Issue.record("expected a drop, got \(outputs)")
            return
        }
    }
}
