import Testing
import ParleySIP
import ParleySIPCore
import ParleyTestSupport

/// The inbound call once up: BYE both ways, the caller's re-INVITEs and UPDATEs (hold,
/// resume, refused codecs, glare), INFO DTMF, OPTIONS, CSeq checks, session timers and
/// malformed requests.
@Suite struct SIPInboundCallDialogTests {
    // MARK: Hanging up

    @Test func rfc3261_15_1_2_callerByeIsAnswered200() throws {
        var harness = try InboundHarness.confirmed()
        harness.now = 5_000
        let bye = harness.farRequest(.bye)
        harness.receive(bye)
        let ok = try #require(harness.responses(200).last)
        #expect(try ok.message.cseq()?.method == .bye)
        #expect(ok.hop == InboundHarness.caller)
        #expect(harness.ends == [.hungUp])
        harness.receive(bye)
        #expect(harness.ends.count == 1)
        harness.advance(to: 60_000)
        #expect(harness.call.isFinished)
    }

    @Test func ourHangUpSendsByeThroughTheRouteSet() throws {
        var harness = try InboundHarness.confirmed()
        harness.now = 10_000
        harness.hangUp()
        let (_, bye, hop) = try #require(harness.requests(.bye).first)
        #expect(hop == InboundHarness.proxy)
        #expect(bye.requestURI == Messages.uri("sip:caller@198.51.100.30:5080"))
        #expect(bye.headers.values("Route") == ["<sip:198.51.100.5;lr>"])
        #expect(try bye.cseq() == SIPCSeq(sequence: 1, method: .bye))
        #expect(harness.call.phase == .ending)
        #expect(harness.ends.isEmpty)
        harness.advance(to: 11_600)
        #expect(harness.requests(.bye).map(\.at) == [10_000, 10_500, 11_500])
        harness.receive(harness.farResponse(200, to: bye), from: InboundHarness.proxy)
        #expect(harness.ends == [.localHangUp])
        harness.advance(to: 60_000)
        #expect(harness.call.isFinished)
    }

    @Test func byeWithoutAnyResponseEndsAtTimerF() throws {
        var harness = try InboundHarness.confirmed()
        harness.hangUp()
        harness.advance(to: 40_000)
        #expect(harness.ends == [.localHangUp])
        #expect(harness.events.last?.at == 32_000)
    }

    // MARK: Requests in the dialog

    @Test func rfc3261_12_2_2_anotherDialogIs481AndAnOutOfOrderCSeq500() throws {
        var harness = try InboundHarness.confirmed()
        var stranger = harness.farRequest(.info)
        try stranger.headers.set(name: "To", value: "<sip:+4615550199@parley.example.test>;tag=not-ours")
        harness.receive(stranger)
        #expect(harness.responses(481).count == 1)
        let first = harness.farRequest(.options)   // CSeq 3 of the caller
        _ = harness.farRequest(.options)           // CSeq 4, never sent
        let late = harness.farRequest(.options)    // CSeq 5
        harness.receive(late)
        harness.receive(first)
        #expect(harness.responses(500).count == 1)
        #expect(try harness.responses(500).first?.message.cseq()?.sequence == 3)
        #expect(harness.ends.isEmpty)
        #expect(harness.call.phase == .confirmed)
    }

    @Test func optionsInTheDialogIs200WithWhatWeAllow() throws {
        var harness = try InboundHarness.confirmed()
        harness.receive(harness.farRequest(.options))
        let ok = try #require(harness.responses(200).last?.message)
        #expect(try ok.cseq()?.method == .options)
        #expect(try ok.allow()?.contains(.update) == true)
        #expect(harness.events.count == 1)
    }

    @Test func otherMethodsAre405Or501() throws {
        var harness = try InboundHarness.confirmed()
        harness.receive(harness.farRequest(.message))
        harness.receive(harness.farRequest(.extension("FROBNICATE")))
        #expect(harness.responses(405).count == 1)
        #expect(harness.responses(501).count == 1)
        #expect(harness.call.phase == .confirmed)
    }

    @Test func infoDTMFRelayIs200AndADigit() throws {
        var harness = try InboundHarness.confirmed()
        let relay = try SIPContentType(type: "application", subtype: "dtmf-relay")
        harness.receive(harness.farRequest(.info, body: Array("Signal=5\r\nDuration=160\r\n".utf8), contentType: relay))
        harness.receive(harness.farRequest(.info, body: Array("Signal= 11\r\n".utf8), contentType: relay))
        harness.receive(harness.farRequest(.info, body: Array("*".utf8), contentType: try SIPContentType(type: "application", subtype: "dtmf")))
        let other = try SIPContentType(type: "application", subtype: "x-custom")
        harness.receive(harness.farRequest(.info, body: Array("hello".utf8), contentType: other))
        harness.receive(harness.farRequest(.info, body: Array("Signal=Z\r\n".utf8), contentType: relay))
        #expect(harness.responses(200).filter { (try? $0.message.cseq())?.method == .info }.count == 5)
        #expect(harness.events.dropFirst().map(\.event) == [
            .dtmf(digits: "5"), .dtmf(digits: "#"), .dtmf(digits: "*"),
            .info(contentType: other, body: Array("hello".utf8)),
            .info(contentType: relay, body: Array("Signal=Z\r\n".utf8)),
        ])
    }

    // MARK: The caller's offers

    @Test func rfc3264_8_4_holdAndResumeAreAnsweredWithTheMirroredDirection() throws {
        var harness = try InboundHarness.confirmed()
        for (step, (offered, answered)) in [("sendonly", "recvonly"), ("inactive", "inactive"), ("sendrecv", "sendrecv")].enumerated() {
            harness.now = 10_000 * (step + 1)
            let reinvite = harness.farRequest(.invite, body: sdp(offered, version: step + 2))
            harness.receive(reinvite)
            guard case .remoteOffer(.invite, let offer) = harness.events.last?.event else {
                Issue.record("no offer: \(harness.events)")
                return
            }
            let answer = try #require(try mirroredAnswer(to: offer, version: step + 2))
            try harness.answerOffer(answer)
            let ok = try #require(harness.responses(200).last)
            #expect(ok.hop == InboundHarness.caller)
            #expect(String(decoding: ok.message.body, as: UTF8.self).contains("a=\(answered)\r"))
            #expect(try ok.message.contacts()?.addresses.first?.uri == Messages.uri("sip:parley@192.0.2.1:5060"))
            // Retransmitted until the ACK.
            harness.advance(to: harness.now + 600)
            #expect(harness.responses(200).filter { $0.message == ok.message }.count == 2)
            harness.receive(harness.ack(for: reinvite))
            #expect(harness.events.last?.event == .remoteOfferCompleted(sdp: nil))
        }
        #expect(harness.ends.isEmpty)
        #expect(harness.call.phase == .confirmed)
    }

    @Test func updateWithAnOfferIsAnsweredToo() throws {
        var harness = try InboundHarness.confirmed()
        harness.receive(harness.farRequest(.update, body: sdp("sendonly", version: 2)))
        guard case .remoteOffer(.update, let offer) = harness.events.last?.event else {
            Issue.record("no offer: \(harness.events)")
            return
        }
        try harness.answerOffer(try #require(try mirroredAnswer(to: offer, version: 2)))
        let ok = try #require(harness.responses(200).last?.message)
        #expect(try ok.cseq()?.method == .update)
        #expect(String(decoding: ok.body, as: UTF8.self).contains("a=recvonly"))
    }

    @Test func aCodecWeCannotDoIs488AndTheCallGoesOn() throws {
        var harness = try InboundHarness.confirmed()
        let reinvite = harness.farRequest(.invite, body: g729Offer(version: 2))
        harness.receive(reinvite)
        guard case .remoteOffer(.invite, let offer) = harness.events.last?.event else {
            Issue.record("no offer: \(harness.events)")
            return
        }
        #expect(try mirroredAnswer(to: offer, version: 2) == nil)
        try harness.rejectOffer(488)
        #expect(harness.responses(488).count == 1)
        harness.receive(harness.ack(for: reinvite))
        #expect(!harness.events.contains { if case .remoteOfferCompleted = $0.event { true } else { false } })
        #expect(harness.call.phase == .confirmed)
        #expect(throws: SIPInboundCallError.self) { try harness.answerOffer(InboundHarness.answerSDP) }
        #expect(throws: SIPInboundCallError.self) { try harness.rejectOffer(200) }
    }

    @Test func rfc3261_14_2_aSecondOfferBeforeTheFirstIsAnswered500WithRetryAfter() throws {
        var harness = try InboundHarness.confirmed()
        harness.receive(harness.farRequest(.invite, body: sdp("sendonly", version: 2)))
        harness.receive(harness.farRequest(.update, body: sdp("inactive", version: 3)))
        let refusal = try #require(harness.responses(500).first?.message)
        let retryAfter = try #require(refusal.headers.first("Retry-After").flatMap { Int($0) })
        #expect((0...10).contains(retryAfter))
    }

    @Test func aReInviteBeforeTheAckOfOur200Is500() throws {
        var harness = try InboundHarness()
        try harness.start()
        try harness.answer()
        harness.receive(harness.farRequest(.invite, body: sdp("sendonly", version: 2)))
        #expect(harness.responses(500).count == 1)
        #expect(!harness.events.contains { if case .remoteOffer = $0.event { true } else { false } })
    }

    @Test func offerlessReInviteGetsOurOfferAndTheAckCarriesTheAnswer() throws {
        var harness = try InboundHarness.confirmed()
        let reinvite = harness.farRequest(.invite)
        harness.receive(reinvite)
        #expect(harness.events.last?.event == .remoteOffer(method: .invite, sdp: nil))
        try harness.answerOffer(InboundHarness.answerSDP)
        harness.receive(harness.ack(for: reinvite, body: sdp("sendrecv", version: 2)))
        #expect(harness.events.last?.event == .remoteOfferCompleted(sdp: sdp("sendrecv", version: 2)))
    }

    @Test func callerCancelsItsReInvite() throws {
        var harness = try InboundHarness.confirmed()
        let reinvite = harness.farRequest(.invite, body: sdp("sendonly", version: 2))
        harness.receive(reinvite)
        let cancel = try SIPMessage.request(method: .cancel, uri: reinvite.requestURI!, via: try reinvite.topVia()!,
                                            from: try reinvite.from()!, to: try reinvite.to()!, callID: try reinvite.callID()!,
                                            cseq: try reinvite.cseq()!.sequence)
        harness.receive(cancel)
        #expect(harness.responses(487).count == 1)
        #expect(harness.events.last?.event == .remoteOfferCancelled)
        #expect(harness.ends.isEmpty)
    }

    @Test func unacknowledged2xxToAReInviteEndsTheCall() throws {
        var harness = try InboundHarness.confirmed()
        harness.now = 1_000
        let reinvite = harness.farRequest(.invite, body: sdp("sendonly", version: 2))
        harness.receive(reinvite)
        try harness.answerOffer(try #require(try mirroredAnswer(to: sdp("sendonly"), version: 2)))
        harness.advance(to: 40_000)
        #expect(harness.ends == [.unacknowledged])
        #expect(harness.requests(.bye).first?.at == 33_000)
    }

    // MARK: Session timers (RFC 4028)

    @Test func rfc4028_422WhenTheInviteAsksForLessThanOurMinSE() throws {
        var harness = try InboundHarness(invite: InboundHarness.makeInvite(headers: [("Supported", "timer"), ("Session-Expires", "60")]))
        try harness.start()
        let refusal = try #require(harness.responses(422).first?.message)
        #expect(refusal.headers.first("Min-SE") == "90")
        #expect(harness.ends == [.rejected(statusCode: 422)])
    }

    @Test func rfc4028_9_weRefreshWhenTheCallerDoesNotSupportTimers() throws {
        var harness = try InboundHarness.confirmed(invite: InboundHarness.makeInvite(headers: [("Session-Expires", "180")]))
        let ok = try #require(harness.responses(200).first?.message)
        #expect(ok.headers.first("Session-Expires") == "180;refresher=uas")
        #expect(ok.headers.first("Require") == nil)
        // At half the interval: UPDATE (the INVITE's Allow lists it), toward the proxy.
        harness.advance(to: 90_000)
        let (at, update, hop) = try #require(harness.requests(.update).first)
        #expect(at == 90_000)
        #expect(hop == InboundHarness.proxy)
        #expect(update.headers.first("Session-Expires") == "180;refresher=uac")
        harness.receive(harness.farResponse(200, to: update, headers: [("Session-Expires", "180;refresher=uac")]), from: InboundHarness.proxy)
        #expect(harness.events.last?.event == .sessionRefreshed(interval: 180))
        // The next at half the interval after that one; none in between.
        harness.advance(to: 180_100)
        #expect(harness.requests(.update).map(\.at) == [90_000, 180_000])
        #expect(harness.ends.isEmpty)
    }

    @Test func rfc4028_reInviteRefreshWhenTheCallerDoesNotAllowUpdate() throws {
        var invite = InboundHarness.makeInvite(headers: [("Session-Expires", "120;refresher=uas")])
        try invite.headers.set(name: "Allow", value: "INVITE, ACK, CANCEL, BYE")
        var harness = try InboundHarness.confirmed(invite: invite)
        harness.advance(to: 61_000)
        let (_, reinvite, _) = try #require(harness.requests(.invite).first)
        #expect(reinvite.body == InboundHarness.answerSDP)
        let ok = harness.farResponse(200, to: reinvite, headers: [("Contact", InboundHarness.callerContact), ("Session-Expires", "120;refresher=uac")])
        harness.receive(ok, from: InboundHarness.proxy)
        let ack = try #require(harness.requests(.ack).first?.message)
        #expect(try ack.cseq()?.sequence == reinvite.cseq()?.sequence)
        // The 2xx again (our ACK was lost): the ACK again.
        harness.receive(ok, from: InboundHarness.proxy)
        #expect(harness.requests(.ack).count == 2)
        #expect(harness.events.last?.event == .sessionRefreshed(interval: 120))
    }

    @Test func rfc4028_theCallerRefreshesAndWhenItStopsWeSendBye() throws {
        var harness = try InboundHarness.confirmed(invite: InboundHarness.makeInvite(headers: [("Supported", "timer"), ("Session-Expires", "180")]))
        let ok = try #require(harness.responses(200).first?.message)
        #expect(ok.headers.first("Session-Expires") == "180;refresher=uac")
        #expect(ok.headers.first("Require") == "timer")
        // The caller refreshes with an UPDATE at 90 s.
        harness.now = 90_000
        harness.receive(harness.farRequest(.update, headers: [("Session-Expires", "180;refresher=uac"), ("Supported", "timer")]))
        let refreshed = try #require(harness.responses(200).last?.message)
        #expect(try refreshed.cseq()?.method == .update)
        #expect(refreshed.headers.first("Session-Expires") == "180;refresher=uac")
        #expect(harness.events.last?.event == .sessionRefreshed(interval: 180))
        #expect(harness.requests(.update).isEmpty)
        // Then nothing: BYE a third of the interval (at most 32 s) before it would expire.
        harness.advance(to: 400_000)
        #expect(harness.requests(.bye).first?.at == 90_000 + 148_000)
        #expect(harness.ends == [.sessionExpired])
    }

    @Test func rfc4028_aRefreshAskingForTooLittleIs422() throws {
        var harness = try InboundHarness.confirmed()
        harness.receive(harness.farRequest(.update, headers: [("Session-Expires", "30")]))
        #expect(harness.responses(422).first?.message.headers.first("Min-SE") == "90")
        #expect(harness.call.phase == .confirmed)
    }

    // MARK: Hostile input

    @Test func malformedRequestsAre400AndResponsesDropped() throws {
        var harness = try InboundHarness.confirmed()
        var broken = harness.farRequest(.info)
        try broken.headers.set(name: "CSeq", value: "x INFO")
        harness.receive(broken)
        #expect(harness.responses(400).count == 1)
        var noCallID = harness.farRequest(.bye)
        noCallID.headers.remove(name: "Call-ID")
        harness.receive(noCallID)
        #expect(harness.responses(400).count == 2)
        var badResponse = Messages.response(200, to: harness.farRequest(.options))
        try badResponse.headers.set(name: "CSeq", value: "garbage")
        let before = harness.sent.count
        harness.receive(badResponse)
        // A stray response to nothing of ours: dropped.
        harness.receive(Messages.response(486, to: Messages.request(.invite)))
        #expect(harness.sent.count == before)
        #expect(harness.ends.isEmpty)
        #expect(harness.call.phase == .confirmed)
    }

    @Test func randomMutationsOfRequestsNeverCrash() throws {
        var harness = try InboundHarness.confirmed()
        var generator = SeededGenerator(seed: 3)
        let names = ["CSeq", "To", "From", "Call-ID", "Via", "Content-Type", "Session-Expires", "Max-Forwards", "Contact"]
        let values = ["", "x", "1", "999999999999 BYE", "<sip:>", ";tag=", "SIP/2.0/UDP", "\u{7f}", "application/", "-5"]
        for round in 0..<300 {
            let methods: [SIPMethod] = [.bye, .info, .invite, .update, .options, .message]
            var request = harness.farRequest(methods[Int(generator.next() % UInt64(methods.count))], body: round % 3 == 0 ? sdp("sendonly") : [])
            let name = names[Int(generator.next() % UInt64(names.count))]
            let value = values[Int(generator.next() % UInt64(values.count))]
            try? request.headers.set(name: name, value: value)
            harness.now += 100
            harness.receive(request)
            if case .remoteOffer = harness.events.last?.event { _ = try? harness.rejectOffer(488) }
            harness.advance(to: harness.now)
        }
        harness.advance(to: harness.now + 100_000)
        #expect(harness.ends.count <= 1)
    }
}
