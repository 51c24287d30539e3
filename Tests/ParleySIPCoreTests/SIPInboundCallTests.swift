import Testing
import ParleySIP
import ParleySIPCore
import ParleyTestSupport

/// The inbound call before and at the answer: 100 at once, 180/183, 200 until its ACK,
/// rejection, CANCEL, hang-up before the answer, offerless INVITEs, bad INVITEs.
@Suite struct SIPInboundCallTests {
    @Test func rfc3261_17_2_1_startSends100TryingAtOnceAndExposesTheInvite() throws {
        var harness = try InboundHarness()
        try harness.start()
        let (at, trying, hop) = try #require(harness.responses(100).first)
        #expect(at == 0)
        #expect(hop == InboundHarness.proxy)
        #expect(try trying.to()?.tag == nil)
        #expect(harness.call.phase == .proceeding)
        #expect(harness.call.callID == "in-1@198.51.100.5")
        #expect(harness.call.offer == sdp("sendrecv"))
        #expect(harness.call.requestURI == Messages.uri("sip:+4615550199@192.0.2.1:5060;user=phone"))
        #expect(harness.call.from.tag == "caller1")
        #expect(harness.call.from.uri == Messages.uri("sip:+4615550101@trunk.example.test"))
        #expect(harness.call.to.uri == Messages.uri("sip:+4615550199@parley.example.test"))
        #expect(harness.call.assertedIdentities.map(\.uri) == [Messages.uri("sip:+4615550101@trunk.example.test;user=phone")])
        #expect(harness.call.callHeaders.map(\.name) == ["X-Customer", "x-campaign"])
        #expect(harness.call.callHeaders.map(\.value) == ["42", "spring"])
        // The transaction's own 100 at 200 ms does not come again.
        harness.advance(to: 5_000)
        #expect(harness.responses(100).count == 1)
        #expect(throws: SIPInboundCallError.self) { try harness.start() }
    }

    @Test func retransmittedInviteGetsTheLatestProvisionalAgain() throws {
        var harness = try InboundHarness()
        try harness.start()
        try harness.ring()
        harness.receive(harness.invite, from: InboundHarness.proxy)
        #expect(harness.responses(180).count == 2)
        #expect(harness.events.isEmpty)
    }

    @Test func rfc3261_12_1_1_ringingCarriesOurTagContactAndTheRecordRoute() throws {
        var harness = try InboundHarness()
        try harness.start()
        try harness.ring()
        let (_, ringing, hop) = try #require(harness.responses(180).first)
        #expect(hop == InboundHarness.proxy)
        #expect(try ringing.to()?.tag == harness.call.localTag)
        #expect(try ringing.contacts()?.addresses.first?.uri == Messages.uri("sip:parley@192.0.2.1:5060"))
        #expect(ringing.headers.values("Record-Route") == ["<sip:198.51.100.5;lr>"])
        #expect(ringing.body.isEmpty)
        #expect(harness.call.dialog?.state == .early)
        // Early media: 183 with the answer, which the 200 repeats.
        try harness.ring(InboundHarness.answerSDP)
        let progress = try #require(harness.responses(183).first?.message)
        #expect(try progress.contentType() == .sdp)
        #expect(progress.body == InboundHarness.answerSDP)
        #expect(try progress.to()?.tag == harness.call.localTag)
    }

    @Test func earlyMediaNeedsAnOfferInTheInvite() throws {
        var harness = try InboundHarness(invite: InboundHarness.makeInvite(offer: nil))
        try harness.start()
        #expect(harness.call.offer == nil)
        #expect(throws: SIPInboundCallError.self) { try harness.ring(InboundHarness.answerSDP) }
        try harness.ring()
        #expect(harness.responses(180).count == 1)
    }

    @Test func rfc6026_our200IsRetransmittedUntilTheAck() throws {
        var harness = try InboundHarness()
        try harness.start()
        harness.now = 1_000
        try harness.answer()
        let ok = try #require(harness.responses(200).first?.message)
        #expect(try ok.to()?.tag == harness.call.localTag)
        #expect(try ok.contacts()?.addresses.first?.uri == Messages.uri("sip:parley@192.0.2.1:5060"))
        #expect(ok.headers.values("Record-Route") == ["<sip:198.51.100.5;lr>"])
        #expect(ok.body == InboundHarness.answerSDP)
        #expect(try ok.contentType() == .sdp)
        #expect(harness.call.phase == .answered)
        // T1 doubling up to T2: +0.5, +1.5, +3.5, +7.5, +11.5 s.
        harness.advance(to: 13_000)
        #expect(harness.responses(200).map(\.at) == [1_000, 1_500, 2_500, 4_500, 8_500, 12_500])
        #expect(harness.responses(200).allSatisfy { $0.hop == InboundHarness.proxy })
        harness.receive(harness.ack())
        #expect(harness.events.map(\.event) == [.confirmed(sdp: nil)])
        #expect(harness.call.phase == .confirmed)
        #expect(harness.call.dialog?.state == .confirmed)
        harness.advance(to: 60_000)
        #expect(harness.responses(200).count == 6)
        // A retransmitted ACK changes nothing.
        harness.receive(harness.ack())
        #expect(harness.events.count == 1)
    }

    @Test func rfc3261_13_3_1_4_noAckIn64T1EndsTheCallWithBye() throws {
        var harness = try InboundHarness()
        try harness.start()
        try harness.answer()
        harness.advance(to: 40_000)
        let (at, bye, hop) = try #require(harness.requests(.bye).first)
        #expect(at == 32_000)
        // Toward the route set's first entry, the proxy, with the caller's Contact as the
        // Request-URI and the proxy as Route (loose routing, §12.2.1.1).
        #expect(hop == InboundHarness.proxy)
        #expect(bye.requestURI == Messages.uri("sip:caller@198.51.100.30:5080"))
        #expect(bye.headers.values("Route") == ["<sip:198.51.100.5;lr>"])
        #expect(try bye.from()?.tag == harness.call.localTag)
        #expect(try bye.to()?.tag == "caller1")
        #expect(harness.ends == [.unacknowledged])
        #expect(harness.events.last?.at == 32_000)
        harness.receive(harness.farResponse(200, to: bye), from: InboundHarness.proxy)
        harness.advance(to: 100_000)
        #expect(harness.call.isFinished)
    }

    @Test func offerlessInviteGetsOurOfferInThe200AndTheAnswerInTheAck() throws {
        var harness = try InboundHarness(invite: InboundHarness.makeInvite(offer: nil))
        try harness.start()
        try harness.answer(InboundHarness.answerSDP)
        #expect(harness.responses(200).first?.message.body == InboundHarness.answerSDP)
        harness.receive(harness.ack(body: sdp("sendrecv")))
        #expect(harness.events.map(\.event) == [.confirmed(sdp: sdp("sendrecv"))])
    }

    @Test func answerWithoutSDPIsRefused() throws {
        var harness = try InboundHarness()
        #expect(throws: SIPInboundCallError.self) { try harness.answer() }  // not started
        try harness.start()
        #expect(throws: SIPInboundCallError.self) { try harness.answer([]) }
        #expect(harness.responses(200).isEmpty)
    }

    @Test func rejectSendsTheFinalStatusUntilItsAck() throws {
        for code in [486, 480, 603, 404] {
            var harness = try InboundHarness()
            try harness.start()
            try harness.reject(code)
            let (_, response, hop) = try #require(harness.responses(code).first)
            #expect(hop == InboundHarness.proxy)
            #expect(try response.to()?.tag == harness.call.localTag)
            #expect(harness.ends == [.rejected(statusCode: code)])
            // Timer G retransmits it until the ACK (built as §17.1.1.3 says: the INVITE's Via).
            harness.advance(to: 600)
            #expect(harness.responses(code).count == 2)
            var ack = try SIPMessage.request(method: .ack, uri: harness.invite.requestURI!, via: try harness.invite.topVia()!,
                                             from: try harness.invite.from()!, to: try response.to()!,
                                             callID: harness.call.callID, cseq: 1)
            try ack.headers.set(name: "Max-Forwards", value: "70")
            harness.receive(ack, from: InboundHarness.proxy)
            harness.advance(to: 40_000)
            #expect(harness.responses(code).count == 2)
            #expect(harness.call.isFinished)
            #expect(throws: SIPInboundCallError.self) { try harness.answer() }
        }
    }

    @Test func rejectTakesOnlyFailureStatuses() throws {
        var harness = try InboundHarness()
        try harness.start()
        for code in [200, 302, 700, 99] {
            #expect(throws: SIPInboundCallError.self) { try harness.reject(code) }
        }
        try harness.reject(486, "Busy Here (all agents)")
        #expect(harness.responses(486).first?.message.reasonPhrase == "Busy Here (all agents)")
    }

    @Test func rfc3261_9_2_cancelBeforeTheAnswerGets200AndTheInvite487() throws {
        var harness = try InboundHarness()
        try harness.start()
        try harness.ring()
        harness.now = 3_000
        harness.receive(harness.cancel(), from: InboundHarness.proxy)
        let toCancel = try #require(harness.sent.first { (try? $0.message.cseq())?.method == .cancel })
        #expect(toCancel.message.statusCode == 200)
        // §9.2: the 200 to the CANCEL carries the tag of our provisional responses.
        #expect(try toCancel.message.to()?.tag == harness.call.localTag)
        let terminated = try #require(harness.responses(487).first?.message)
        #expect(try terminated.cseq()?.method == .invite)
        #expect(harness.ends == [.canceled])
        #expect(harness.call.phase == .ended)
        #expect(throws: SIPInboundCallError.self) { try harness.answer() }
    }

    @Test func cancelAfterThe200ChangesNothing() throws {
        var harness = try InboundHarness()
        try harness.start()
        try harness.answer()
        harness.receive(harness.cancel(), from: InboundHarness.proxy)
        #expect(harness.responses(487).isEmpty)
        #expect(harness.ends.isEmpty)
        #expect(harness.call.phase == .answered)
    }

    @Test func hangUpBeforeTheAnswerIs480() throws {
        var harness = try InboundHarness()
        try harness.start()
        try harness.ring()
        harness.hangUp()
        #expect(harness.responses(480).count == 1)
        #expect(harness.ends == [.localHangUp])
        harness.hangUp()
        #expect(harness.responses(480).count == 1)
    }

    @Test func rfc3261_15_callerByeOnTheEarlyDialogGets200AndTheInvite487() throws {
        var harness = try InboundHarness()
        try harness.start()
        try harness.ring()
        let ringing = try #require(harness.responses(180).first?.message)
        harness.far = try SIPDialog(uacRequest: harness.invite, response: ringing)
        harness.receive(harness.farRequest(.bye))
        #expect(harness.sent.contains { $0.message.statusCode == 200 && (try? $0.message.cseq())?.method == .bye })
        #expect(harness.responses(487).count == 1)
        #expect(harness.ends == [.hungUp])
    }

    @Test func rfc3261_15_hangUpBetweenThe200AndItsAckWaitsForTheAck() throws {
        var harness = try InboundHarness()
        try harness.start()
        try harness.answer()
        harness.hangUp()
        #expect(harness.requests(.bye).isEmpty)
        harness.now = 700
        harness.receive(harness.ack())
        #expect(harness.requests(.bye).map(\.at) == [700])
        #expect(harness.events.first?.event == .confirmed(sdp: nil))
        let bye = try #require(harness.requests(.bye).first?.message)
        harness.receive(harness.farResponse(200, to: bye), from: InboundHarness.proxy)
        #expect(harness.ends == [.localHangUp])
    }

    @Test func rfc3261_8_2_2_3_unsupportedRequireIs420() throws {
        var harness = try InboundHarness(invite: InboundHarness.makeInvite(headers: [("Require", "100rel, timer")]))
        try harness.start()
        let refusal = try #require(harness.responses(420).first?.message)
        #expect(refusal.headers.first("Unsupported") == "100rel")
        #expect(harness.responses(100).isEmpty)
        #expect(harness.ends == [.rejected(statusCode: 420)])
    }

    @Test func maxForwardsZeroIs483() throws {
        var invite = InboundHarness.makeInvite()
        try invite.headers.set(name: "Max-Forwards", value: "0")
        var harness = try InboundHarness(invite: invite)
        try harness.start()
        #expect(harness.responses(483).count == 1)
        #expect(harness.ends == [.rejected(statusCode: 483)])
    }

    @Test func aMessageThatIsNotAnInitialInviteMakesNoCall() throws {
        var tagged = InboundHarness.makeInvite()
        try tagged.headers.set(name: "To", value: "<sip:+4615550199@parley.example.test>;tag=x")
        var noContact = InboundHarness.makeInvite()
        noContact.headers.remove(name: "Contact")
        var badCSeq = InboundHarness.makeInvite()
        try badCSeq.headers.set(name: "CSeq", value: "one INVITE")
        let bye = Messages.request(.bye)
        let response = Messages.response(200, to: InboundHarness.makeInvite())
        for message in [tagged, noContact, badCSeq, bye, response] {
            #expect(throws: SIPInboundCallError.self) {
                _ = try SIPInboundCall(invite: message, from: InboundHarness.proxy, local: InboundHarness.local,
                                       random: SeededGenerator(seed: 1))
            }
        }
    }

    @Test func aMergedCopyOfTheInviteIs482() throws {
        var harness = try InboundHarness()
        try harness.start()
        harness.receive(InboundHarness.makeInvite(branch: "z9hG4bKother"), from: InboundHarness.proxy)
        #expect(harness.responses(482).count == 1)
        #expect(harness.events.isEmpty)
        #expect(harness.call.phase == .proceeding)
    }
}
