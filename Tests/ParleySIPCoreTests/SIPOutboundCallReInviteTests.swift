import Testing
import ParleySIP
import ParleySIPCore
import ParleyTestSupport

/// Our own re-INVITE on the outbound leg (`offer(sdp:now:)`): hold and resume from our
/// side, RFC 3261 §14.1 and RFC 3264 §8.
@Suite struct SIPOutboundCallReInviteTests {
    /// A call answered at t = 0, its far side's 2xx carrying `headers`; `seed` feeds the
    /// call's random source (tags, branches, the glare wait).
    private func answeredCall(headers: [(String, String)] = [], seed: UInt64 = 42) throws -> CallHarness {
        var harness = try CallHarness()
        harness.call = try SIPOutboundCall(invitation: CallHarness.invitation(), random: SeededGenerator(seed: seed))
        harness.start()
        harness.receive(harness.response(180))
        harness.answerCall(headers: headers)
        #expect(harness.call.phase == .answered)
        return harness
    }

    private func offer(_ harness: inout CallHarness, _ body: [UInt8]) throws {
        harness.take(try harness.call.offer(sdp: body, now: VirtualTime.at(harness.now)))
    }

    /// Why `offer` threw, or nil when it sent.
    private func refusal(_ harness: inout CallHarness, _ body: [UInt8]) -> SIPOutboundCallError.Kind? {
        do {
            harness.take(try harness.call.offer(sdp: body, now: VirtualTime.at(harness.now)))
            return nil
        } catch {
            return error.kind
        }
    }

    /// The outcomes of our offers, in order.
    private func outcomes(_ harness: CallHarness) -> [SIPOutboundCall.Event] {
        harness.events.compactMap { entry in
            if case .localOfferAnswered = entry.event { return entry.event }
            if case .localOfferRefused = entry.event { return entry.event }
            return nil
        }
    }

    @Test func rfc3261_14_1_offerAnsweredIsAcknowledgedTowardTheRemoteTarget() throws {
        var harness = try answeredCall()
        harness.now = 1_000
        try offer(&harness, sdp("sendonly", version: 2))
        let sent = try #require(harness.requests(.invite).last)
        let reInvite = sent.message
        #expect(try reInvite.cseq() == SIPCSeq(sequence: 2, method: .invite))
        // Toward the far side's Contact, its remote target (no Record-Route here).
        #expect(sent.hop == CallHarness.gateway && reInvite.requestURI == Messages.uri("sip:gw@198.51.100.20:5070"))
        #expect(reInvite.headers.first("Contact") != nil)
        #expect(try reInvite.contentType() == .sdp)
        #expect(text(reInvite.body) == text(sdp("sendonly", version: 2)))
        harness.receive(harness.response(200, to: reInvite, body: sdp("recvonly")), from: CallHarness.gateway)
        let (_, ack, ackHop) = try #require(harness.requests(.ack).last)
        #expect(ackHop == CallHarness.gateway)
        #expect(try ack.cseq() == SIPCSeq(sequence: 2, method: .ack))
        #expect(outcomes(harness) == [.localOfferAnswered(sdp: sdp("recvonly"))])
        // A retransmitted 2xx gets the ACK again, and no second event.
        harness.receive(harness.response(200, to: reInvite, body: sdp("recvonly")), from: CallHarness.gateway)
        #expect(harness.requests(.ack).filter { (try? $0.message.cseq())?.sequence == 2 }.count == 2)
        #expect(outcomes(harness).count == 1)
        // Resume: the next offer is a new transaction with the next CSeq.
        try offer(&harness, sdp("sendrecv", version: 3))
        #expect(try harness.requests(.invite).last?.message.cseq() == SIPCSeq(sequence: 3, method: .invite))
    }

    @Test func rfc3261_14_1_refusedOfferLeavesTheCallUp() throws {
        var harness = try answeredCall()
        try offer(&harness, sdp("sendonly", version: 2))
        let reInvite = try #require(harness.requests(.invite).last?.message)
        harness.receive(harness.response(488, to: reInvite), from: CallHarness.gateway)
        #expect(outcomes(harness) == [.localOfferRefused(statusCode: 488)])
        #expect(harness.call.phase == .answered)
        #expect(harness.requests(.bye).isEmpty)
        #expect(harness.ends.isEmpty)
        // The transaction layer acknowledged the 488; a new offer may go.
        try offer(&harness, sdp("sendonly", version: 2))
        #expect(harness.requests(.invite).count == 3)
    }

    @Test func rfc3261_14_1_glareRetriedAfter2_1To4SecondsAsWeOwnTheCallID() throws {
        var waits: Set<Int> = []
        for seed in UInt64(1)...12 {
            var harness = try answeredCall(seed: seed)
            harness.now = 1_000
            try offer(&harness, sdp("sendonly", version: 2))
            let reInvite = try #require(harness.requests(.invite).last?.message)
            harness.receive(harness.response(491, to: reInvite), from: CallHarness.gateway)
            #expect(outcomes(harness).isEmpty)
            let deadline = try #require(VirtualTime.ms(harness.call.nextDeadline))
            // The transaction layer's own timers (Timer D for the 491's ACK) may come
            // first; the retry is the next INVITE.
            harness.advance(to: 6_000)
            let retries = harness.requests(.invite).filter { (try? $0.message.cseq())?.sequence == 3 }
            let retry = try #require(retries.first)
            #expect((3_100...5_000).contains(retry.at), "seed \(seed): retried at \(retry.at)")
            #expect(deadline <= retry.at)
            #expect(text(retry.message.body) == text(sdp("sendonly", version: 2)))
            waits.insert(retry.at)
            harness.receive(harness.response(200, to: retry.message, body: sdp("recvonly")), from: CallHarness.gateway)
            #expect(outcomes(harness) == [.localOfferAnswered(sdp: sdp("recvonly"))])
        }
        // The wait is drawn, not fixed.
        #expect(waits.count > 1)
    }

    @Test func rfc3261_14_2_farSideReInviteDuringOursGets491() throws {
        var harness = try answeredCall()
        try offer(&harness, sdp("sendonly", version: 2))
        harness.receive(harness.farRequest(.invite, body: sdp("sendonly", version: 2)), from: CallHarness.gateway)
        #expect(harness.responses(491).count == 1)
        #expect(!harness.events.contains { if case .remoteOffer = $0.event { true } else { false } })
        // A second offer of ours while the first is out is refused, not queued.
        #expect(refusal(&harness, sdp("inactive")) == .offerPending)
    }

    @Test func offerWhileTheFarSidesOfferIsOpenThrows() throws {
        var harness = try answeredCall()
        harness.receive(harness.farRequest(.invite, body: sdp("sendonly", version: 2)), from: CallHarness.gateway)
        #expect(refusal(&harness, sdp("sendonly")) == .offerPending)
        #expect(harness.requests(.invite).count == 1)
    }

    @Test func offerBeforeTheAnswerOrWithoutSDPThrows() throws {
        var harness = try CallHarness()
        harness.start()
        #expect(refusal(&harness, sdp("sendonly")) == .invalidState)
        var answered = try answeredCall()
        #expect(refusal(&answered, []) == .invalidSDP)
        #expect(answered.requests(.invite).count == 1)
    }

    @Test func rfc3261_12_2_1_2_offerAnswered408EndsTheCallWithBye() throws {
        var harness = try answeredCall()
        try offer(&harness, sdp("sendonly", version: 2))
        let reInvite = try #require(harness.requests(.invite).last?.message)
        harness.receive(harness.response(408, to: reInvite), from: CallHarness.gateway)
        #expect(harness.requests(.bye).count == 1)
        #expect(harness.ends == [.dialogFailed(statusCode: 408)])
    }

    @Test func rfc3261_12_2_1_2_offerAnswered481EndsTheCallWithoutBye() throws {
        var harness = try answeredCall()
        try offer(&harness, sdp("sendonly", version: 2))
        let reInvite = try #require(harness.requests(.invite).last?.message)
        harness.receive(harness.response(481, to: reInvite), from: CallHarness.gateway)
        #expect(harness.requests(.bye).isEmpty)
        #expect(harness.ends == [.dialogFailed(statusCode: 481)])
    }

    @Test func rfc3261_13_2_2_4_answerCrossingOurByeIsStillAcknowledged() throws {
        var harness = try answeredCall()
        try offer(&harness, sdp("sendonly", version: 2))
        let reInvite = try #require(harness.requests(.invite).last?.message)
        harness.hangUp()
        #expect(harness.call.phase == .ending)
        harness.receive(harness.response(200, to: reInvite, body: sdp("recvonly")), from: CallHarness.gateway)
        #expect(try harness.requests(.ack).last?.message.cseq() == SIPCSeq(sequence: 2, method: .ack))
        #expect(outcomes(harness).isEmpty)
    }

    @Test func rfc3261_17_1_1_2_offerRetransmittedOverUDPAndEndedWithByeAtTimerB() throws {
        var harness = try answeredCall()
        harness.now = 1_000
        try offer(&harness, sdp("sendonly", version: 2))
        harness.advance(to: 8_000)
        let copies = harness.requests(.invite).filter { (try? $0.message.cseq())?.sequence == 2 }
        #expect(copies.map(\.at) == [1_000, 1_500, 2_500, 4_500])
        #expect(Set(copies.map { (try? $0.message.topVia())??.branch }).count == 1)
        harness.advance(to: 40_000)
        // Timer B (64·T1) with no answer: as a 408, the call ends with BYE.
        #expect(harness.ends == [.dialogFailed(statusCode: 408)])
        #expect(harness.requests(.bye).first?.at == 33_000)
    }

    @Test func rfc4028_refreshDueDuringOurOfferWaitsAndTheOfferRefreshes() throws {
        var harness = try answeredCall(headers: [("Session-Expires", "120;refresher=uac")])
        harness.now = 59_000
        try offer(&harness, sdp("sendonly", version: 2))
        let reInvite = try #require(harness.requests(.invite).last?.message)
        #expect(reInvite.headers.first("Session-Expires") == "120;refresher=uac")
        // The refresh was due at 60 s: it does not run beside our offer.
        harness.advance(to: 61_000)
        #expect(harness.requests(.update).isEmpty)
        #expect(harness.requests(.invite).allSatisfy { (try? $0.message.cseq())?.sequence ?? 0 <= 2 })
        harness.receive(harness.response(200, to: reInvite, body: sdp("recvonly"), headers: [("Session-Expires", "120;refresher=uac")]),
                        from: CallHarness.gateway)
        #expect(harness.events.contains { $0.event == .sessionRefreshed(interval: 120) && $0.at == 61_000 })
        // The next refresh comes half an interval after the offer's 2xx.
        harness.advance(to: 125_000)
        let refreshes = harness.requests(.invite).filter { (try? $0.message.cseq())?.sequence == 3 }
        #expect(refreshes.first?.at == 121_000)
    }

    @Test func rfc4028_offerDuringOurRefreshGoesOnceTheRefreshIsAnswered() throws {
        var harness = try answeredCall(headers: [("Session-Expires", "120;refresher=uac")])
        harness.advance(to: 60_000)
        let refresh = try #require(harness.requests(.invite).last?.message)
        #expect(try refresh.cseq()?.sequence == 2)
        harness.now = 60_100
        try offer(&harness, sdp("sendonly", version: 2))
        #expect(harness.requests(.invite).count == 2)
        harness.now = 60_200
        harness.receive(harness.response(200, to: refresh, body: sdp("sendrecv"), headers: [("Session-Expires", "120;refresher=uac")]),
                        from: CallHarness.gateway)
        let offered = try #require(harness.requests(.invite).last)
        #expect(try offered.message.cseq()?.sequence == 3)
        #expect(offered.at == 60_200)
        #expect(text(offered.message.body) == text(sdp("sendonly", version: 2)))
    }

    @Test func malformedAnswersNeverCrash() throws {
        let broken: [(headers: [(String, String)], body: [UInt8])] = [
            ([], []),
            ([("Content-Type", "application/sdp")], Array("not sdp at all".utf8)),
            ([("Session-Expires", "forever")], sdp("recvonly")),
            ([("Contact", "<<<not a uri")], sdp("recvonly")),
            ([("Content-Type", "///")], Array([0xff, 0x00, 0xfe])),
        ]
        for (headers, body) in broken {
            var harness = try answeredCall()
            try offer(&harness, sdp("sendonly", version: 2))
            let reInvite = try #require(harness.requests(.invite).last?.message)
            var ok = harness.response(200, to: reInvite, headers: headers)
            if !body.isEmpty { ok.body = body }
            harness.receive(ok, from: CallHarness.gateway)
            harness.advance(to: 40_000)
            // Whatever came, the offer is over one way or the other, and the call decides.
            #expect(outcomes(harness).count <= 1)
            #expect(harness.call.phase == .answered || !harness.ends.isEmpty)
        }
    }
}
