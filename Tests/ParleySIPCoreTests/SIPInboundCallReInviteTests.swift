import Testing
import ParleySIP
import ParleySIPCore
import ParleyTestSupport

/// Our own re-INVITE on the inbound leg (`offer(sdp:now:)`): hold and resume from our
/// side toward the caller, RFC 3261 §14.1 and RFC 3264 §8.
@Suite struct SIPInboundCallReInviteTests {
    /// A call confirmed at t = 0; `seed` feeds the call's random source (tag, branches,
    /// the glare wait).
    private func confirmedCall(headers: [(String, String)] = [], seed: UInt64 = 42) throws -> InboundHarness {
        let invite = InboundHarness.makeInvite(headers: headers)
        var harness = try InboundHarness(invite: invite)
        harness.call = try SIPInboundCall(invite: invite, from: InboundHarness.proxy, local: InboundHarness.local,
                                          random: SeededGenerator(seed: seed))
        try harness.start()
        try harness.answer()
        harness.receive(harness.ack())
        #expect(harness.call.phase == .confirmed)
        return harness
    }

    private func offer(_ harness: inout InboundHarness, _ body: [UInt8]) throws(SIPInboundCallError) {
        harness.take(try harness.call.offer(sdp: body, now: VirtualTime.at(harness.now)))
    }

    /// The caller's response to our `request`, with an SDP `body` when given.
    private func answer(_ harness: InboundHarness, _ code: Int, to request: SIPMessage, body: [UInt8] = [],
                        headers: [(String, String)] = []) -> SIPMessage {
        var response = harness.farResponse(code, to: request, headers: headers)
        if !body.isEmpty {
            try! response.headers.add(name: "Content-Type", value: "application/sdp")
            response.body = body
        }
        return response
    }

    /// The outcomes of our offers, in order.
    private func outcomes(_ harness: InboundHarness) -> [SIPInboundCall.Event] {
        let answered = harness.events.map(\.event).filter { if case .localOfferAnswered = $0 { true } else { false } }
        let refused = harness.events.map(\.event).filter { if case .localOfferRefused = $0 { true } else { false } }
        return answered + refused
    }

    /// The kind `offer` threw, or nil when it sent.
    private func thrown(by harness: inout InboundHarness, offering body: [UInt8]) -> SIPInboundCallError.Kind? {
        do throws(SIPInboundCallError) {
            try offer(&harness, body)
        } catch {
            return error.kind
        }
        return nil
    }

    @Test func rfc3261_14_1_offerAnsweredIsAcknowledgedThroughTheRouteSet() throws {
        var harness = try confirmedCall()
        harness.now = 2_000
        try offer(&harness, sdp("sendonly", version: 2))
        let (_, reInvite, hop) = try #require(harness.requests(.invite).last)
        // The caller's Contact is the target; the proxy's Record-Route is the route.
        #expect(hop == InboundHarness.proxy)
        #expect(reInvite.requestURI == Messages.uri("sip:caller@198.51.100.30:5080"))
        #expect(reInvite.headers.values("route") == ["<sip:198.51.100.5;lr>"])
        #expect(try reInvite.cseq() == SIPCSeq(sequence: 1, method: .invite))
        #expect(try reInvite.from()?.tag == harness.call.localTag)
        #expect(reInvite.headers.first("Contact") != nil)
        harness.receive(answer(harness, 200, to: reInvite, body: sdp("recvonly"), headers: [("Contact", InboundHarness.callerContact)]),
                        from: InboundHarness.proxy)
        let (_, ack, ackHop) = try #require(harness.requests(.ack).last)
        #expect(ackHop == InboundHarness.proxy)
        #expect(try ack.cseq() == SIPCSeq(sequence: 1, method: .ack))
        #expect(outcomes(harness) == [.localOfferAnswered(sdp: sdp("recvonly"))])
        // The 2xx again (our ACK was lost): the ACK again, no second event.
        harness.receive(answer(harness, 200, to: reInvite, body: sdp("recvonly"), headers: [("Contact", InboundHarness.callerContact)]),
                        from: InboundHarness.proxy)
        #expect(harness.requests(.ack).count == 2)
        #expect(outcomes(harness).count == 1)
    }

    @Test func rfc3261_14_1_refusedOfferLeavesTheCallUp() throws {
        var harness = try confirmedCall()
        try offer(&harness, sdp("sendonly", version: 2))
        let reInvite = try #require(harness.requests(.invite).last?.message)
        harness.receive(answer(harness, 488, to: reInvite), from: InboundHarness.proxy)
        #expect(outcomes(harness) == [.localOfferRefused(statusCode: 488)])
        #expect(harness.call.phase == .confirmed)
        #expect(harness.requests(.bye).isEmpty)
        try offer(&harness, sdp("inactive", version: 2))
        #expect(try harness.requests(.invite).last?.message.cseq()?.sequence == 2)
    }

    @Test func rfc3261_14_1_glareRetriedWithin2SecondsAsTheCallerOwnsTheCallID() throws {
        let retriedAt: [Int] = try (UInt64(1)...12).map { seed in
            var harness = try confirmedCall(seed: seed)
            harness.now = 1_000
            try offer(&harness, sdp("sendonly", version: 2))
            let glare = answer(harness, 491, to: try #require(harness.requests(.invite).last?.message))
            harness.receive(glare, from: InboundHarness.proxy)
            #expect(outcomes(harness).isEmpty)
            harness.advance(to: 5_000)
            return try #require(harness.requests(.invite).first { (try? $0.message.cseq())?.sequence == 2 }).at
        }
        #expect(retriedAt.allSatisfy { (1_000...3_000).contains($0) }, "retried at \(retriedAt)")
        // The wait is drawn, not fixed.
        #expect(Set(retriedAt).count > 1)
    }

    @Test func rfc3261_14_2_callersReInviteDuringOursGets491() throws {
        var harness = try confirmedCall()
        try offer(&harness, sdp("sendonly", version: 2))
        harness.receive(harness.farRequest(.invite, body: sdp("sendonly", version: 2)))
        #expect(harness.responses(491).count == 1)
        #expect(!harness.events.contains { if case .remoteOffer = $0.event { true } else { false } })
        #expect(thrown(by: &harness, offering: sdp("inactive")) == .offerPending)
    }

    @Test func offerBeforeTheAckThrows() throws {
        var harness = try InboundHarness()
        try harness.start()
        try harness.answer()
        #expect(harness.call.phase == .answered)
        #expect(thrown(by: &harness, offering: sdp("sendonly")) == .invalidState)
        #expect(harness.requests(.invite).isEmpty)
    }

    @Test func rfc3261_12_2_1_2_offerAnswered408EndsTheCallWithBye() throws {
        var harness = try confirmedCall()
        try offer(&harness, sdp("sendonly", version: 2))
        let reInvite = try #require(harness.requests(.invite).last?.message)
        harness.receive(answer(harness, 408, to: reInvite), from: InboundHarness.proxy)
        #expect(harness.requests(.bye).count == 1)
        #expect(harness.ends == [.dialogFailed(statusCode: 408)])
    }

    @Test func rfc3261_17_1_1_2_offerRetransmittedOverUDPUntilAnswered() throws {
        var harness = try confirmedCall()
        try offer(&harness, sdp("sendonly", version: 2))
        harness.advance(to: 3_000)
        #expect(harness.requests(.invite).map(\.at) == [0, 500, 1_500])
        harness.receive(answer(harness, 200, to: harness.requests(.invite)[0].message, body: sdp("recvonly"),
                               headers: [("Contact", InboundHarness.callerContact)]), from: InboundHarness.proxy)
        harness.advance(to: 10_000)
        #expect(harness.requests(.invite).count == 3)
        #expect(outcomes(harness) == [.localOfferAnswered(sdp: sdp("recvonly"))])
    }

    @Test func rfc4028_refreshDueDuringOurOfferWaits() throws {
        // The caller makes us the refresher (RFC 4028 §9): refresh due at 60 s.
        var harness = try confirmedCall(headers: [("Session-Expires", "120;refresher=uas")])
        harness.now = 59_500
        try offer(&harness, sdp("sendonly", version: 2))
        harness.advance(to: 61_000)
        // The offer carries the session timer, with us still the refresher.
        let reInvite = try #require(harness.requests(.invite).first?.message)
        #expect(reInvite.headers.first("Session-Expires") == "120;refresher=uac")
        // Only our offer's retransmissions went meanwhile: no UPDATE, no second re-INVITE.
        #expect(harness.sent.filter { $0.message.method != nil }.allSatisfy { $0.message.method == .invite && (try? $0.message.cseq())?.sequence == 1 })
        harness.receive(answer(harness, 200, to: reInvite, body: sdp("recvonly"),
                               headers: [("Contact", InboundHarness.callerContact), ("Session-Expires", "120;refresher=uac")]),
                        from: InboundHarness.proxy)
        #expect(harness.events.contains { $0.event == .sessionRefreshed(interval: 120) })
        #expect(harness.ends.isEmpty)
        // Refreshed by the offer: nothing is due before 121 s.
        harness.advance(to: 120_000)
        #expect(harness.sent.filter { $0.at > 61_000 && $0.message.method != nil }.isEmpty)
    }

    @Test func malformedAnswersNeverCrash() throws {
        let broken: [(headers: [(String, String)], body: [UInt8])] = [
            ([], []),
            ([("Content-Type", "application/sdp")], Array("garbage".utf8)),
            ([("Session-Expires", "-1")], []),
            ([("Contact", "<<<")], []),
            ([("Content-Type", "a/b/c")], [0xff, 0x00]),
        ]
        for (headers, body) in broken {
            var harness = try confirmedCall()
            try offer(&harness, sdp("sendonly", version: 2))
            let reInvite = try #require(harness.requests(.invite).last?.message)
            var ok = answer(harness, 200, to: reInvite, headers: headers)
            if !body.isEmpty { ok.body = body }
            harness.receive(ok, from: InboundHarness.proxy)
            harness.advance(to: 40_000)
            #expect(outcomes(harness).count <= 1)
            #expect(harness.call.phase == .confirmed || !harness.ends.isEmpty)
        }
    }
}
