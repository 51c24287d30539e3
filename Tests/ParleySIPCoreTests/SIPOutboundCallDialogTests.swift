import Testing
import ParleySDP
import ParleySIP
import ParleySIPCore

/// The outbound call once answered: hang-up from each side, the far side's re-INVITEs
/// (hold and resume, refused changes, glare), OPTIONS and INFO, session timers.
@Suite struct SIPOutboundCallDialogTests {
    /// A call answered at t = 0 by the gateway, with the far side's 2xx `headers`.
    private func answeredCall(headers: [(String, String)] = [], configuration: SIPOutboundCall.Configuration = .init()) throws -> CallHarness {
        var harness = try CallHarness(configuration: configuration)
        harness.start()
        harness.receive(harness.response(180))
        harness.answerCall(headers: headers)
        #expect(harness.call.phase == .answered)
        return harness
    }

    /// What an owner answers to an offer: the direction RFC 3264 §6.1 gives for wanting
    /// sendrecv (sendonly → recvonly for hold, sendrecv for resume).
    private func answerDirection(to offer: [UInt8]?) throws -> MediaDirection {
        let session = try SessionDescription(parsing: try #require(offer))
        let media = try #require(session.media.first)
        return media.direction(in: session).answer(wanting: .sendrecv)
    }

    // MARK: Hanging up

    @Test func rfc3261_15_1_1_hangUpSendsByeAndEndsWhenItIsAnswered() throws {
        var harness = try answeredCall()
        harness.now = 10_000
        harness.hangUp()
        let (_, bye, hop) = try #require(harness.requests(.bye).first)
        #expect(hop == CallHarness.gateway)
        #expect(try bye.cseq() == SIPCSeq(sequence: 2, method: .bye))
        #expect(harness.call.phase == .ending)
        #expect(harness.ends.isEmpty)
        // Retransmitted over UDP until answered.
        harness.advance(to: 11_600)
        #expect(harness.requests(.bye).map(\.at) == [10_000, 10_500, 11_500])
        harness.receive(harness.response(200, to: bye), from: CallHarness.gateway)
        #expect(harness.ends == [.localHangUp])
        harness.advance(to: 60_000)
        #expect(harness.call.isFinished)
    }

    @Test func rfc3261_12_2_1_2_byeAnswered481Or408EndsTheCallAnyway() throws {
        for code in [481, 408] {
            var harness = try answeredCall()
            harness.hangUp()
            let bye = try #require(harness.requests(.bye).first?.message)
            harness.receive(harness.response(code, to: bye), from: CallHarness.gateway)
            #expect(harness.ends == [.localHangUp])
        }
    }

    @Test func byeWithoutAnyResponseEndsAtTimerF() throws {
        var harness = try answeredCall()
        harness.now = 1_000
        harness.hangUp()
        harness.advance(to: 40_000)
        #expect(harness.ends == [.localHangUp])
        #expect(harness.events.last?.at == 33_000)
    }

    @Test func rfc3261_15_1_2_farSideByeIsAnswered200() throws {
        var harness = try answeredCall()
        harness.now = 5_000
        let bye = harness.farRequest(.bye)
        harness.receive(bye, from: CallHarness.gateway)
        let (_, ok, hop) = try #require(harness.responses(200).first)
        #expect(try ok.cseq()?.method == .bye)
        #expect(hop == CallHarness.gateway)
        #expect(harness.ends == [.remoteHangUp])
        #expect(harness.call.phase == .ended)
        // Its retransmission gets the 200 again, and no second event.
        harness.receive(bye, from: CallHarness.gateway)
        #expect(harness.responses(200).count == 2)
        #expect(harness.ends.count == 1)
        harness.advance(to: 60_000)
        #expect(harness.call.isFinished)
    }

    @Test func rfc3261_12_2_2_requestsOfAnotherDialogAre481AndOutOfOrderOnes500() throws {
        var harness = try answeredCall()
        var stranger = harness.farRequest(.bye)
        try stranger.headers.set(name: "To", value: "<sip:+4615550100@parley.example.test>;tag=not-ours")
        harness.receive(stranger, from: CallHarness.gateway)
        #expect(harness.responses(481).count == 1)
        let info = harness.farRequest(.info)   // CSeq 1 of the far side
        _ = harness.farRequest(.info)          // CSeq 2, never sent
        let late = harness.farRequest(.info)   // CSeq 3
        harness.receive(late, from: CallHarness.gateway)
        harness.receive(info, from: CallHarness.gateway)
        #expect(harness.responses(500).count == 1)
        #expect(harness.ends.isEmpty)
    }

    // MARK: The far side's offers

    @Test func rfc3264_8_4_holdAndResumeFromTheFarSide() throws {
        var harness = try answeredCall()
        // Hold: the far side offers a=sendonly.
        harness.now = 10_000
        let hold = harness.farRequest(.invite, body: sdp("sendonly", version: 2))
        harness.receive(hold, from: CallHarness.gateway)
        guard case .remoteOffer(.invite, let offer) = harness.events.last?.event else {
            Issue.record("no offer: \(harness.events)")
            return
        }
        #expect(try answerDirection(to: offer) == .recvonly)
        // The owner takes its time: the transaction sends 100 Trying at 200 ms.
        harness.advance(to: 10_200)
        #expect(harness.responses(100).count == 1)
        try harness.answer(sdp("recvonly", version: 2))
        let (_, ok, hop) = try #require(harness.responses(200).last)
        #expect(hop == CallHarness.gateway)
        #expect(text(ok.body)?.contains("a=recvonly") == true)
        #expect(try ok.contentType() == .sdp)
        #expect(try ok.contacts()?.addresses.first?.uri == Messages.uri("sip:parley@192.0.2.1:5060"))
        // The 200 is retransmitted until the ACK.
        harness.advance(to: 11_300)
        #expect(harness.responses(200).map(\.at) == [10_200, 10_700])
        harness.receive(harness.farAck(for: hold), from: CallHarness.gateway)
        #expect(harness.events.last?.event == .remoteOfferCompleted(sdp: nil))
        harness.advance(to: 20_000)
        #expect(harness.responses(200).count == 2)

        // Resume: a=sendrecv, answered sendrecv.
        let resume = harness.farRequest(.invite, body: sdp("sendrecv", version: 3))
        harness.receive(resume, from: CallHarness.gateway)
        guard case .remoteOffer(.invite, let resumeOffer) = harness.events.last?.event else {
            Issue.record("no offer: \(harness.events)")
            return
        }
        #expect(try answerDirection(to: resumeOffer) == .sendrecv)
        try harness.answer(sdp("sendrecv", version: 3))
        #expect(text(harness.responses(200).last?.message.body)?.contains("a=sendrecv") == true)
        harness.receive(harness.farAck(for: resume), from: CallHarness.gateway)
        #expect(harness.call.phase == .answered)
        #expect(harness.ends.isEmpty)
    }

    @Test func aChangeWeCannotMakeIs488() throws {
        var harness = try answeredCall()
        let reinvite = harness.farRequest(.invite, body: sdp("sendrecv", version: 2, port: 41_000))
        harness.receive(reinvite, from: CallHarness.gateway)
        try harness.reject(488)
        #expect(harness.responses(488).count == 1)
        // The ACK of the 488 is the transaction's; the call goes on.
        harness.receive(harness.farAck(for: reinvite), from: CallHarness.gateway)
        #expect(!harness.events.contains { if case .remoteOfferCompleted = $0.event { true } else { false } })
        #expect(harness.call.phase == .answered)
        #expect(throws: SIPOutboundCallError.self) { try harness.answer(sdp("sendrecv")) }
    }

    @Test func rfc3261_14_2_aSecondOfferBeforeTheFirstIsAnswered500WithRetryAfter() throws {
        var harness = try answeredCall()
        harness.receive(harness.farRequest(.invite, body: sdp("sendonly", version: 2)), from: CallHarness.gateway)
        harness.receive(harness.farRequest(.update, body: sdp("inactive", version: 3)), from: CallHarness.gateway)
        let (_, refusal, _) = try #require(harness.responses(500).first)
        let retryAfter = try #require(refusal.headers.first("Retry-After").flatMap { Int($0) })
        #expect((0...10).contains(retryAfter))
    }

    @Test func offerlessReInviteGetsOurOfferAndTheAckCarriesTheAnswer() throws {
        var harness = try answeredCall()
        let reinvite = harness.farRequest(.invite)
        harness.receive(reinvite, from: CallHarness.gateway)
        #expect(harness.events.last?.event == .remoteOffer(method: .invite, sdp: nil))
        try harness.answer(CallHarness.offer)
        harness.receive(harness.farAck(for: reinvite, body: sdp("sendrecv", version: 2)), from: CallHarness.gateway)
        #expect(harness.events.last?.event == .remoteOfferCompleted(sdp: sdp("sendrecv", version: 2)))
    }

    @Test func rfc3261_13_3_1_4_our2xxNeverAcknowledgedEndsTheCall() throws {
        var harness = try answeredCall()
        harness.now = 1_000
        harness.receive(harness.farRequest(.invite, body: sdp("sendonly", version: 2)), from: CallHarness.gateway)
        try harness.answer(sdp("recvonly", version: 2))
        harness.advance(to: 40_000)
        #expect(harness.ends == [.unacknowledged])
        #expect(harness.events.last?.at == 33_000)
        #expect(harness.requests(.bye).first?.at == 33_000)
        #expect(Set(harness.requests(.bye).compactMap { try? $0.message.topVia()?.branch }).count == 1)
    }

    @Test func farSideCancelsItsReInvite() throws {
        var harness = try answeredCall()
        let reinvite = harness.farRequest(.invite, body: sdp("sendonly", version: 2))
        harness.receive(reinvite, from: CallHarness.gateway)
        // §9.1: the re-INVITE's Request-URI, top Via, From, To, Call-ID and CSeq number.
        let cancel = try SIPMessage.request(method: .cancel, uri: reinvite.requestURI!, via: try reinvite.topVia()!,
                                        from: try reinvite.from()!, to: try reinvite.to()!, callID: try reinvite.callID()!,
                                        cseq: try reinvite.cseq()!.sequence)
        harness.receive(cancel, from: CallHarness.gateway)
        #expect(harness.responses(487).count == 1)
        #expect(harness.events.last?.event == .remoteOfferCancelled)
        #expect(throws: SIPOutboundCallError.self) { try harness.answer(sdp("recvonly")) }
    }

    // MARK: OPTIONS and INFO

    @Test func optionsInTheDialogIsAnswered200() throws {
        var harness = try answeredCall()
        harness.receive(harness.farRequest(.options), from: CallHarness.gateway)
        let (_, ok, _) = try #require(harness.responses(200).first)
        #expect(try ok.allow()?.contains(.invite) == true)
        #expect(harness.events.count == 2)  // provisional and answered: OPTIONS adds nothing
    }

    @Test func infoIsAnswered200AndReported() throws {
        var harness = try answeredCall()
        var info = harness.farRequest(.info)
        try info.headers.add(name: "Content-Type", value: "application/dtmf-relay")
        info.body = Array("Signal=5\r\nDuration=160\r\n".utf8)
        harness.receive(info, from: CallHarness.gateway)
        #expect(harness.responses(200).count == 1)
        guard case .info(let type, let body) = harness.events.last?.event else {
            Issue.record("no INFO event: \(harness.events)")
            return
        }
        #expect(type?.subtype == "dtmf-relay")
        #expect(body == Array("Signal=5\r\nDuration=160\r\n".utf8))
    }

    @Test func unknownMethodIs501AndUnsupportedOne405() throws {
        var harness = try answeredCall()
        harness.receive(harness.farRequest(.extension("FROB")), from: CallHarness.gateway)
        harness.receive(harness.farRequest(.message), from: CallHarness.gateway)
        #expect(harness.responses(501).count == 1)
        #expect(try harness.responses(405).first?.message.allow()?.contains(.update) == true)
    }

    // MARK: Session timers (RFC 4028)

    @Test func rfc4028_10_refresherUacRefreshesWithUpdateAtHalfTheInterval() throws {
        var harness = try answeredCall(headers: [("Session-Expires", "90;refresher=uac"), ("Require", "timer"),
                                                 ("Allow", "INVITE, ACK, CANCEL, BYE, UPDATE")])
        harness.advance(to: 44_999)
        #expect(harness.requests(.update).isEmpty)
        harness.advance(to: 45_000)
        let (at, update, hop) = try #require(harness.requests(.update).first)
        #expect(at == 45_000)
        #expect(hop == CallHarness.gateway)
        #expect(try update.sessionExpires() == SIPSessionExpires(interval: 90, refresher: .uac))
        #expect(update.body.isEmpty)
        #expect(try update.cseq()?.sequence == 2)
        harness.receive(harness.response(200, to: update, headers: [("Session-Expires", "90;refresher=uac")]), from: CallHarness.gateway)
        #expect(harness.events.last?.event == .sessionRefreshed(interval: 90))
        // The next one 45 s after that.
        harness.advance(to: 90_000)
        #expect(harness.requests(.update).map(\.at) == [45_000, 90_000])
        #expect(harness.ends.isEmpty)
    }

    @Test func rfc4028_7_4_withoutUpdateTheRefreshIsAReInviteWithTheSameSDP() throws {
        var harness = try answeredCall(headers: [("Session-Expires", "120;refresher=uac"), ("Allow", "INVITE, ACK, BYE")])
        harness.advance(to: 60_000)
        let (_, reinvite, _) = try #require(harness.requests(.invite).last)
        #expect(try reinvite.cseq() == SIPCSeq(sequence: 2, method: .invite))
        #expect(reinvite.body == CallHarness.offer)
        #expect(try reinvite.sessionExpires()?.interval == 120)
        let ok = harness.response(200, to: reinvite, body: sdp("sendrecv"), headers: [("Session-Expires", "120;refresher=uac")])
        harness.receive(ok, from: CallHarness.gateway)
        let (_, ack, hop) = try #require(harness.requests(.ack).last)
        #expect(try ack.cseq() == SIPCSeq(sequence: 2, method: .ack))
        #expect(hop == CallHarness.gateway)
        // A retransmitted 2xx of the re-INVITE gets that ACK again.
        harness.receive(ok, from: CallHarness.gateway)
        #expect(harness.requests(.ack).count == 3)
        #expect(harness.requests(.ack).last?.message == ack)
    }

    @Test func rfc3261_14_1_glareWhileOurRefreshIsInFlightIs491() throws {
        var harness = try answeredCall(headers: [("Session-Expires", "90;refresher=uac"), ("Allow", "INVITE, ACK, BYE")])
        harness.advance(to: 45_000)
        let ours = try #require(harness.requests(.invite).last?.message)
        harness.receive(harness.farRequest(.invite, body: sdp("sendonly", version: 2)), from: CallHarness.gateway)
        #expect(harness.responses(491).count == 1)
        // And ours gets 491 too: we try again 2.1 to 4 s later.
        harness.now = 45_100
        harness.receive(harness.response(491, to: ours), from: CallHarness.gateway)
        harness.advance(to: 49_200)
        let retries = harness.requests(.invite).filter { $0.at > 45_100 }
        #expect(Set(retries.compactMap { try? $0.message.topVia()?.branch }).count == 1)  // one request, retransmitted
        #expect(retries.first.map { (47_200...49_100).contains($0.at) } == true)
        #expect(try retries.first?.message.cseq()?.sequence == 3)
    }

    @Test func rfc4028_10_refresherUasWithoutRefreshEndsTheCall() throws {
        var harness = try answeredCall(headers: [("Session-Expires", "90;refresher=uas")])
        // We do not refresh; with no refresh from the far side we send BYE before the
        // session expires: 90 s less min(32, 90/3) = 60 s.
        harness.advance(to: 59_999)
        #expect(harness.requests(.bye).isEmpty)
        #expect(harness.requests(.update).isEmpty && harness.requests(.invite).count == 1)
        harness.advance(to: 60_000)
        #expect(harness.requests(.bye).map(\.at) == [60_000])
        #expect(harness.ends == [.sessionExpired])
    }

    @Test func rfc4028_9_theFarSidesRefreshPostponesTheExpiry() throws {
        var harness = try answeredCall(headers: [("Session-Expires", "90;refresher=uas")])
        harness.now = 40_000
        let refresh = harness.farRequest(.update, headers: [("Session-Expires", "90;refresher=uas"), ("Supported", "timer")])
        harness.receive(refresh, from: CallHarness.gateway)
        let (_, ok, _) = try #require(harness.responses(200).first)
        // Echoed back. The refresher is named from the UPDATE's point of view, whose UAS
        // is us: we refresh from now on, at half of 90 s, by UPDATE since the far side
        // just showed it takes one.
        #expect(try ok.sessionExpires() == SIPSessionExpires(interval: 90, refresher: .uas))
        #expect(harness.events.last?.event == .sessionRefreshed(interval: 90))
        harness.advance(to: 85_000)
        #expect(harness.requests(.update).map(\.at) == [85_000])
        #expect(harness.ends.isEmpty)
    }

    @Test func rfc4028_9_refreshByTheFarSideKeepsItTheRefresher() throws {
        var harness = try answeredCall(headers: [("Session-Expires", "90;refresher=uas")])
        harness.now = 40_000
        harness.receive(harness.farRequest(.update, headers: [("Session-Expires", "90"), ("Supported", "timer")]), from: CallHarness.gateway)
        let (_, ok, _) = try #require(harness.responses(200).first)
        // No refresher named and the far side supports timers: it refreshes (uac of
        // its UPDATE), which Require: timer tells it.
        #expect(try ok.sessionExpires() == SIPSessionExpires(interval: 90, refresher: .uac))
        #expect(try ok.require() == ["timer"])
        // Expiry moved to 40 + 60 = 100 s.
        harness.advance(to: 99_999)
        #expect(harness.ends.isEmpty)
        harness.advance(to: 100_000)
        #expect(harness.ends == [.sessionExpired])
        #expect(harness.requests(.update).isEmpty)
    }

    @Test func rfc4028_5_tooShortAnIntervalIs422() throws {
        var harness = try answeredCall()
        harness.receive(harness.farRequest(.update, headers: [("Session-Expires", "30")]), from: CallHarness.gateway)
        let (_, refusal, _) = try #require(harness.responses(422).first)
        #expect(try refusal.minSE() == 90)
    }

    @Test func noSessionExpiresInTheAnswerMeansNoTimer() throws {
        var harness = try answeredCall()
        #expect(harness.call.nextDeadline.map { VirtualTime.ms($0)! } == 32_000)  // the INVITE's Timer M only
        harness.advance(to: 3_600_000)
        #expect(harness.ends.isEmpty)
        #expect(harness.sent.count == 2)  // the INVITE and the ACK
    }
}
