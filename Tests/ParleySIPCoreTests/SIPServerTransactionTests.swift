import Testing
import ParleySIP
import ParleySIPCore

/// Server transactions (RFC 3261 §17.2, RFC 6026 §7.1), the 2xx retransmission of
/// §13.3.1.4, and what the layer answers by itself (CANCEL, merged requests, Max-Forwards,
/// malformed requests, too many transactions).
@Suite struct SIPServerTransactionTests {
    private let invite = Messages.request(.invite, branch: "z9hG4bKsrv1")

    private func sends(_ events: [(at: Int, output: SIPTransactionOutput)]) -> [(at: Int, status: Int?)] {
        events.compactMap { if case .send(let message, _) = $0.output { ($0.at, message.statusCode) } else { nil } }
    }

    // MARK: INVITE server

    @Test func rfc3261_17_2_1_hundredTryingAfter200MillisecondsOfSilence() throws {
        var clock = LayerClock()
        let outputs = clock.receive(invite)
        let id = try #require(serverTransaction(in: outputs))
        #expect(outputs.sent.isEmpty)
        #expect(VirtualTime.ms(clock.layer.nextDeadline) == 200)
        let events = clock.run(until: 199)
        #expect(events.isEmpty)
        let trying = clock.run(until: 200)
        #expect(sends(trying).map(\.status) == [100])
        #expect(trying.first?.at == 200)
        // The 100 has no To tag (§8.2.6.1) and goes where the request came from.
        if case .send(let hundred, let hop) = trying.first?.output {
            #expect(try hundred.to()?.tag == nil)
            #expect(hop == Hops.peer)
        }
        // A retransmitted INVITE gets the 100 again.
        clock.now = 500
        #expect(clock.receive(invite).sentStatusCodes == [100])
        #expect(clock.layer.contains(id))
    }

    @Test func rfc3261_17_2_1_noHundredWhenTheTUAnswersFirst() throws {
        var clock = LayerClock()
        let id = try #require(serverTransaction(in: clock.receive(invite)))
        clock.now = 150
        let ringing = Messages.response(180, to: invite, toTag: "uas")
        #expect(try clock.respond(ringing, on: id).sent == [ringing])
        #expect(clock.run(until: 10_000).isEmpty)
        clock.now = 10_000
        // A retransmission gets the latest provisional response.
        #expect(clock.receive(invite).sent == [ringing])
    }

    @Test func rfc3261_17_2_1_failureRetransmittedByTimerGUntilTimerH() throws {
        var clock = LayerClock()
        let id = try #require(serverTransaction(in: clock.receive(invite)))
        clock.now = 100
        let busy = Messages.response(486, to: invite)
        #expect(try clock.respond(busy, on: id).sent == [busy])
        let events = clock.run(until: 40_000)
        // G: T1 doubling up to T2 from 100 ms; H (64·T1) at 32.1 s: a timeout for the TU.
        #expect(sends(events).map(\.at) == [600, 1600, 3600, 7600, 11_600, 15_600, 19_600, 23_600, 27_600, 31_600])
        #expect(events.last.map { $0.at == 32_100 && $0.output == .timeout(id) } == true)
        #expect(!clock.layer.contains(id))
    }

    @Test func rfc3261_17_2_1_ackConfirmsAndTimerIAbsorbsAcks() throws {
        var clock = LayerClock()
        let id = try #require(serverTransaction(in: clock.receive(invite)))
        let busy = Messages.response(486, to: invite)
        _ = try clock.respond(busy, on: id)
        // A retransmitted INVITE in Completed gets the 486 again.
        clock.now = 300
        #expect(clock.receive(invite).sent == [busy])
        clock.now = 400
        let ack = Messages.request(.ack, branch: "z9hG4bKsrv1", toTag: "t1")
        #expect(clock.receive(ack).isEmpty)  // absorbed: the non-2xx ACK is the transaction's
        #expect(VirtualTime.ms(clock.layer.nextDeadline) == 5_400)  // I = T4
        #expect(clock.receive(ack).isEmpty)
        #expect(clock.run(until: 5_400).isEmpty)
        #expect(!clock.layer.contains(id))
    }

    @Test func rfc3261_17_2_1_reliableTransportSkipsTimersGAndI() throws {
        var clock = LayerClock()
        let tcpInvite = Messages.request(.invite, branch: "z9hG4bKtcp", transport: "TCP")
        let id = try #require(serverTransaction(in: clock.receive(tcpInvite, from: Hops.peerTCP)))
        _ = try clock.respond(Messages.response(404, to: tcpInvite), on: id)
        #expect(VirtualTime.ms(clock.layer.nextDeadline) == 32_000)  // H only
        _ = clock.receive(Messages.request(.ack, branch: "z9hG4bKtcp", transport: "TCP", toTag: "t1"), from: Hops.peerTCP)
        #expect(!clock.layer.contains(id))
    }

    @Test func rfc6026_7_1_acceptedAbsorbsRetransmittedInvitesUntilTimerL() throws {
        var clock = LayerClock()
        let id = try #require(serverTransaction(in: clock.receive(invite)))
        let ok = Messages.response(200, to: invite)
        _ = try clock.respond(ok, on: id)
        // The INVITE again: absorbed, not a new request for the TU (RFC 3261's
        // original machine ended at the 2xx and would have passed it up as new).
        clock.now = 100
        #expect(clock.receive(invite).isEmpty)
        // The TU may send the 2xx again itself.
        #expect(try clock.respond(ok, on: id).sent == [ok])
        // ACK (new branch) stops the 2xx retransmission; Timer L still runs.
        clock.now = 200
        let ack = Messages.request(.ack, branch: "z9hG4bKack2xx", toTag: "t1")
        #expect(clock.receive(ack) == [.ack(ack, from: Hops.peer, acknowledged: id)])
        #expect(VirtualTime.ms(clock.layer.nextDeadline) == 32_000)
        #expect(clock.run(until: 32_000).isEmpty)
        #expect(!clock.layer.contains(id))
    }

    @Test func rfc3261_13_3_1_4_2xxRetransmittedUntilAck() throws {
        var clock = LayerClock()
        let id = try #require(serverTransaction(in: clock.receive(invite)))
        let ok = Messages.response(200, to: invite)
        _ = try clock.respond(ok, on: id)
        let events = clock.run(until: 8_000)
        #expect(sends(events).map(\.at) == [500, 1500, 3500, 7500])
        #expect(sends(events).allSatisfy { $0.status == 200 })
        clock.now = 8_000
        let ack = Messages.request(.ack, branch: "z9hG4bKack2xx", toTag: "t1")
        #expect(clock.receive(ack) == [.ack(ack, from: Hops.peer, acknowledged: id)])
        #expect(sends(clock.run(until: 40_000)).isEmpty)
        // A retransmitted ACK still reaches the TU, matched to nothing.
        #expect(clock.receive(ack) == [.ack(ack, from: Hops.peer, acknowledged: nil)])
    }

    @Test func rfc3261_13_3_1_4_2xxWithoutAckIsReportedAfter64T1() throws {
        var clock = LayerClock()
        let id = try #require(serverTransaction(in: clock.receive(invite)))
        _ = try clock.respond(Messages.response(200, to: invite), on: id)
        let events = clock.run(until: 40_000)
        #expect(sends(events).map(\.at) == [500, 1500, 3500, 7500, 11_500, 15_500, 19_500, 23_500, 27_500, 31_500])
        let reports = events.filter { if case .send = $0.output { false } else { true } }
        #expect(reports.map(\.at) == [32_000])
        #expect(reports.map(\.output) == [.unacknowledged(id)])
    }

    @Test func rfc3261_13_3_1_4_2xxIsRetransmittedOverReliableTransportsToo() throws {
        var clock = LayerClock()
        let tcpInvite = Messages.request(.invite, branch: "z9hG4bKtcp2", transport: "TCP")
        let id = try #require(serverTransaction(in: clock.receive(tcpInvite, from: Hops.peerTCP)))
        _ = try clock.respond(Messages.response(200, to: tcpInvite), on: id)
        // A proxy may forward it over UDP, so the UAS retransmits whatever its transport.
        #expect(sends(clock.run(until: 2_000)).map(\.at) == [500, 1500])
    }

    @Test func refusesResponsesTheTransactionCannotSend() throws {
        var clock = LayerClock()
        let id = try #require(serverTransaction(in: clock.receive(invite)))
        _ = try clock.respond(Messages.response(486, to: invite), on: id)
        #expect(throws: SIPTransactionError.self) { try clock.respond(Messages.response(200, to: invite), on: id) }
        let other = Messages.request(.invite, branch: "z9hG4bKother", cseq: 9)
        #expect(throws: SIPTransactionError.self) { try clock.respond(Messages.response(180, to: other), on: id) }
    }

    // MARK: Non-INVITE server

    @Test func rfc3261_17_2_2_retransmissionsAnsweredUntilTimerJ() throws {
        var clock = LayerClock()
        let bye = Messages.request(.bye, branch: "z9hG4bKbye", cseq: 2, toTag: "t1")
        let id = try #require(serverTransaction(in: clock.receive(bye)))
        // Trying: a retransmission is absorbed, nothing is sent for a non-INVITE.
        clock.now = 500
        #expect(clock.receive(bye).isEmpty)
        #expect(clock.layer.nextDeadline == nil)
        clock.now = 600
        let ok = Messages.response(200, to: bye)
        #expect(try clock.respond(ok, on: id).sent == [ok])
        #expect(VirtualTime.ms(clock.layer.nextDeadline) == 32_600)  // J = 64·T1
        clock.now = 1_500
        #expect(clock.receive(bye).sent == [ok])
        #expect(clock.run(until: 32_600).isEmpty)
        #expect(!clock.layer.contains(id))
        // After J the same request is new again.
        #expect(serverTransaction(in: clock.receive(bye)) == id)
    }

    @Test func rfc3261_17_2_2_provisionalResentInProceeding() throws {
        var clock = LayerClock()
        let info = Messages.request(.info, branch: "z9hG4bKinfo", cseq: 3, toTag: "t1")
        let id = try #require(serverTransaction(in: clock.receive(info)))
        let trying = Messages.response(100, to: info)
        _ = try clock.respond(trying, on: id)
        #expect(clock.receive(info).sent == [trying])
    }

    @Test func rfc3261_17_2_2_timerJIsZeroOverReliableTransports() throws {
        var clock = LayerClock()
        let bye = Messages.request(.bye, branch: "z9hG4bKbyetcp", transport: "TCP", cseq: 2, toTag: "t1")
        let id = try #require(serverTransaction(in: clock.receive(bye, from: Hops.peerTCP)))
        let outputs = try clock.respond(Messages.response(200, to: bye), on: id)
        #expect(outputs.sentHops == [Hops.peerTCP])
        #expect(!clock.layer.contains(id))
    }

    // MARK: CANCEL

    @Test func rfc3261_9_2_cancelAnswered200AndTheInviteLeftToTheTU() throws {
        var clock = LayerClock()
        let inviteID = try #require(serverTransaction(in: clock.receive(invite)))
        let ringing = Messages.response(180, to: invite, toTag: "ring1")
        _ = try clock.respond(ringing, on: inviteID)
        clock.now = 1_000
        let cancel = Messages.request(.cancel, branch: "z9hG4bKsrv1")
        let outputs = clock.receive(cancel)
        let ok = try #require(outputs.sent.first)
        #expect(ok.statusCode == 200)
        #expect(try ok.cseq() == SIPCSeq(sequence: 1, method: .cancel))
        #expect(try ok.to()?.tag == "ring1")  // the INVITE's tag (§9.2)
        #expect(outputs.toTU == [.cancel(cancel, from: Hops.peer, invite: inviteID)])
        // The TU ends the INVITE with 487, acknowledged by the peer's transaction.
        #expect(try clock.respond(Messages.response(487, to: invite, toTag: "ring1"), on: inviteID).sentStatusCodes == [487])
        #expect(clock.receive(Messages.request(.ack, branch: "z9hG4bKsrv1", toTag: "ring1")).isEmpty)
        // A retransmitted CANCEL gets its 200 again.
        #expect(clock.receive(cancel).sentStatusCodes == [200])
    }

    @Test func rfc3261_9_2_cancelAfterTheFinalResponseIsOnly200() throws {
        var clock = LayerClock()
        let inviteID = try #require(serverTransaction(in: clock.receive(invite)))
        _ = try clock.respond(Messages.response(200, to: invite), on: inviteID)
        let outputs = clock.receive(Messages.request(.cancel, branch: "z9hG4bKsrv1"))
        #expect(outputs.sentStatusCodes == [200])
        #expect(outputs.toTU.isEmpty)
    }

    @Test func rfc3261_9_2_cancelWithoutItsInviteIs481() throws {
        var clock = LayerClock()
        let outputs = clock.receive(Messages.request(.cancel, branch: "z9hG4bKnone"))
        #expect(outputs.sentStatusCodes == [481])
        #expect(outputs.toTU.count == 1)
        guard case .refused(481, _, _) = outputs.toTU.first else {
            Issue.record("expected a refusal, got \(outputs)")
            return
        }
    }

    // MARK: Merged requests and loops

    @Test func rfc3261_8_2_2_2_mergedRequestIs482() throws {
        var clock = LayerClock()
        let first = clock.receive(invite)
        let id = try #require(serverTransaction(in: first))
        // The same request forked by a proxy and back by another path: another branch
        // and sent-by, the same From tag, Call-ID and CSeq, no To tag.
        let looped = Messages.request(.invite, branch: "z9hG4bKsrv1-fork", viaHost: .ipv4("203.0.113.9"))
        let outputs = clock.receive(looped, from: SIPHop(transport: .udp, host: .ipv4("203.0.113.9"), port: 5060))
        #expect(outputs.sentStatusCodes == [482])
        #expect(outputs.sentHops == [SIPHop(transport: .udp, host: .ipv4("203.0.113.9"), port: 5060)])
        #expect(outputs.toTU.count == 1)
        guard case .refused(482, _, _) = outputs.toTU.first else {
            Issue.record("expected 482, got \(outputs)")
            return
        }
        // Its retransmission gets the same 482 from its own transaction; the original
        // is untouched and still the TU's.
        let again = clock.receive(looped, from: SIPHop(transport: .udp, host: .ipv4("203.0.113.9"), port: 5060))
        #expect(again.sentStatusCodes == [482])
        #expect(again.toTU.isEmpty)
        #expect(clock.layer.hasFinalResponse(id) == false)
        // A request with a To tag is in a dialog and never merged.
        let inDialog = Messages.request(.invite, branch: "z9hG4bKreinv", cseq: 1, toTag: "t1")
        #expect(serverTransaction(in: clock.receive(inDialog)) != nil)
    }

    @Test func maxForwardsZeroIs483ExceptForOptions() throws {
        var clock = LayerClock()
        let outputs = clock.receive(Messages.request(.invite, branch: "z9hG4bKmf0", maxForwards: 0))
        #expect(outputs.sentStatusCodes == [483])
        #expect(outputs.toTU.allSatisfy { if case .refused(483, _, _) = $0 { true } else { false } })
        let options = Messages.request(.options, branch: "z9hG4bKmf0opt", maxForwards: 0)
        #expect(serverTransaction(in: clock.receive(options)) != nil)
    }

    // MARK: Where responses go

    @Test func rfc3581_responsesGoToTheSourceAddressAndPort() throws {
        var clock = LayerClock()
        // The Via names a private address; the packet came through a NAT.
        let natted = Messages.request(.options, branch: "z9hG4bKnat", viaHost: .ipv4("10.0.0.5"), rport: true)
        let outputs = clock.receive(natted, from: Hops.natted)
        guard case .request(let request, _, let id) = outputs.first else {
            Issue.record("no request: \(outputs)")
            return
        }
        let via = try #require(try request.topVia())
        #expect(via.received == Hops.natted.host)
        #expect(via.returnPort == .port(40_123))
        let ok = try request.makeResponse(statusCode: 200, toTag: "t9")
        let sent = try clock.respond(ok, on: id)
        #expect(sent.sentHops == [Hops.natted])
        #expect(try sent.sent.first?.topVia()?.received == Hops.natted.host)
    }

    @Test func rfc3261_18_2_2_withoutRportResponsesGoToReceivedAndTheViaPort() throws {
        var clock = LayerClock()
        let request = Messages.request(.options, branch: "z9hG4bKnorport", viaHost: .name("pbx.example.test"), viaPort: 5070)
        let outputs = clock.receive(request, from: SIPHop(transport: .udp, host: .ipv4("198.51.100.8"), port: 5070))
        let id = try #require(serverTransaction(in: outputs))
        guard case .request(let stamped, _, _) = outputs.first else { return }
        #expect(try stamped.topVia()?.received == .ipv4("198.51.100.8"))
        let sent = try clock.respond(try stamped.makeResponse(statusCode: 200, toTag: "t"), on: id)
        #expect(sent.sentHops == [SIPHop(transport: .udp, host: .ipv4("198.51.100.8"), port: 5070)])
    }

    // MARK: Bad input and limits

    @Test func malformedRequestIsAnswered400Statelessly() throws {
        var clock = LayerClock()
        var bad = Messages.request(.invite, branch: "z9hG4bKbad")
        bad.headers.remove(name: "CSeq")
        let outputs = clock.receive(bad)
        #expect(outputs.sentStatusCodes == [400])
        #expect(outputs.sent.first?.reasonPhrase == "Missing CSeq")
        #expect(clock.layer.transactionCount == 0)
    }

    @Test func tooManyTransactionsIs503() throws {
        var clock = LayerClock(.init(maxTransactions: 2))
        _ = clock.receive(Messages.request(.invite, branch: "z9hG4bKa", callID: "a@x"))
        _ = clock.receive(Messages.request(.invite, branch: "z9hG4bKb", callID: "b@x"))
        let outputs = clock.receive(Messages.request(.invite, branch: "z9hG4bKc", callID: "c@x"))
        #expect(outputs.sentStatusCodes == [503])
        #expect(clock.layer.transactionCount == 2)
        #expect(throws: SIPTransactionError.self) {
            try clock.send(Messages.request(.options, branch: "z9hG4bKd", viaHost: Hops.local))
        }
    }

    @Test func rfc3261_17_2_3_rfc2543RequestsMatchWithoutABranch() throws {
        var clock = LayerClock()
        let old = Messages.request(.invite, branch: "1234")
        let id = try #require(serverTransaction(in: clock.receive(old)))
        #expect(clock.receive(old).toTU.isEmpty)  // a retransmission, not a new request
        _ = try clock.respond(Messages.response(486, to: old), on: id)
        #expect(clock.receive(Messages.request(.ack, branch: "1234", toTag: "t1")).isEmpty)
        #expect(VirtualTime.ms(clock.layer.nextDeadline) == 5_000)  // Confirmed: Timer I
    }
}
