import Testing
import ParleySIP
import ParleySIPCore
import ParleyTestSupport

/// The outbound call up to its answer: the INVITE, provisional responses and early media,
/// the ACK and where it goes, failures, CANCEL, digest authentication, forks.
@Suite struct SIPOutboundCallTests {
    @Test func inviteCarriesTheInvitation() throws {
        var headers = SIPHeaders()
        try headers.add(name: "P-Asserted-Identity", value: "<sip:+4615550100@parley.example.test>")
        try headers.add(name: "X-Parley-Call", value: "c-123")
        var harness = try CallHarness(invitation: CallHarness.invitation(headers: headers))
        harness.start()
        let (_, invite, hop) = try #require(harness.sent.first)
        #expect(hop == CallHarness.proxy)
        #expect(invite.method == .invite)
        #expect(invite.requestURI == Messages.uri("sip:+4615550101@trunk.example.test;user=phone"))
        #expect(try invite.from()?.tag != nil)
        #expect(try invite.from()?.uri == Messages.uri("sip:+4615550100@parley.example.test"))
        #expect(try invite.to()?.tag == nil)
        #expect(try invite.callID() == "call-1@192.0.2.1")
        #expect(try invite.cseq() == SIPCSeq(sequence: 1, method: .invite))
        let via = try #require(try invite.topVia())
        #expect(via.hasRFC3261Branch)
        #expect(via.returnPort == .requested)
        #expect(via.host == Hops.local)
        #expect(try invite.contacts()?.addresses.first?.uri == Messages.uri("sip:parley@192.0.2.1:5060"))
        #expect(try invite.assertedIdentities().map(\.uri) == [Messages.uri("sip:+4615550100@parley.example.test")])
        #expect(invite.headers["x-parley-call"] == ["c-123"])
        #expect(try invite.supported() == ["timer"])
        #expect(try invite.sessionExpires() == SIPSessionExpires(interval: 1800))
        #expect(try invite.contentType() == .sdp)
        #expect(invite.body == CallHarness.offer)
        // It parses back as a receiver would read it.
        let parsed = try SIPMessage(datagram: invite.serialized())
        try parsed.validate()
        #expect(harness.call.phase == .calling)
    }

    @Test func refusesHeadersTheCallWritesItself() throws {
        var headers = SIPHeaders()
        try headers.add(name: "i", value: "other@x")  // Call-ID in compact form
        #expect(throws: SIPOutboundCallError.self) { try CallHarness(invitation: CallHarness.invitation(headers: headers)) }
    }

    @Test func rfc3261_13_2_1_provisionalResponsesAndTheFirstSDPIsTheAnswer() throws {
        var harness = try CallHarness()
        harness.start()
        harness.receive(harness.response(100))
        harness.receive(harness.response(183, body: sdp("sendrecv", version: 1), headers: [("X-Carrier", "early")]))
        harness.receive(harness.response(180, body: sdp("sendrecv", version: 2)))
        harness.receive(harness.response(200, body: sdp("sendrecv", version: 2)))
        let events = harness.events.map(\.event)
        #expect(events.count == 4)
        #expect(events[0] == .provisional(statusCode: 100, reasonPhrase: "Trying", sdp: nil, headers: []))
        guard case .provisional(183, "Session Progress", let early, let xHeaders) = events[1] else {
            Issue.record("expected the 183: \(events)")
            return
        }
        #expect(early == sdp("sendrecv", version: 1))
        #expect(xHeaders.map(\.value) == ["early"])
        // A later SDP is not an answer: not passed on.
        guard case .provisional(180, _, nil, _) = events[2] else {
            Issue.record("expected the 180 without SDP: \(events)")
            return
        }
        // The answer stays the first SDP.
        guard case .answered(let answer, _) = events[3] else {
            Issue.record("expected the answer: \(events)")
            return
        }
        #expect(answer == sdp("sendrecv", version: 1))
        #expect(harness.call.phase == .answered)
    }

    @Test func answerWithoutEarlyMediaCarriesThe2xxSDP() throws {
        var harness = try CallHarness()
        harness.start()
        harness.receive(harness.response(180))
        harness.answerCall(body: sdp("sendrecv"), headers: [("X-Billing", "42")])
        guard case .answered(let answer, let xHeaders) = harness.events.last?.event else {
            Issue.record("not answered: \(harness.events)")
            return
        }
        #expect(answer == sdp("sendrecv"))
        #expect(xHeaders.map(\.name) == ["X-Billing"])
    }

    /// The classic carrier failure: the INVITE went to the trunk's proxy, which did not
    /// record-route; the 200 came back through it with the gateway's Contact. The ACK must
    /// go to the gateway (Contact), not to the proxy or wherever the 200 came from, or the
    /// gateway retransmits its 200 for 32 s and hangs up.
    @Test func rfc3261_13_2_2_4_ackGoesToTheContactNotWhereTheInviteWent() throws {
        var harness = try CallHarness()
        harness.start()
        #expect(harness.sent.first?.hop == CallHarness.proxy)
        harness.receive(harness.response(180))
        harness.answerCall(from: CallHarness.proxy)
        let acks = harness.requests(.ack)
        #expect(acks.count == 1)
        let (_, ack, hop) = try #require(acks.first)
        #expect(hop == CallHarness.gateway)
        #expect(hop != CallHarness.proxy)
        #expect(ack.requestURI == Messages.uri("sip:gw@198.51.100.20:5070"))
        #expect(try ack.routes().isEmpty)
        #expect(try ack.cseq() == SIPCSeq(sequence: 1, method: .ack))
        #expect(try ack.to()?.tag == "gw1")
        // A new transaction of its own: not the INVITE's branch.
        #expect(try ack.topVia()?.branch != harness.lastInvite.topVia()?.branch)

        // The 200 again (our ACK was lost): the same ACK to the same place.
        harness.now = 600
        harness.receive(harness.response(200, body: sdp("sendrecv")))
        #expect(harness.requests(.ack).count == 2)
        #expect(harness.requests(.ack).last?.message == ack)
        #expect(harness.requests(.ack).last?.hop == CallHarness.gateway)
        // And after the INVITE transaction is gone (Timer M), a stray 200 still gets it.
        harness.advance(to: 40_000)
        harness.receive(harness.response(200, body: sdp("sendrecv")))
        #expect(harness.requests(.ack).count == 3)
        #expect(harness.requests(.ack).last?.hop == CallHarness.gateway)
        #expect(harness.events.filter { if case .answered = $0.event { true } else { false } }.count == 1)

        // The BYE takes the same way.
        harness.hangUp()
        #expect(harness.requests(.bye).last?.hop == CallHarness.gateway)
        #expect(harness.requests(.bye).last?.message.requestURI == Messages.uri("sip:gw@198.51.100.20:5070"))
    }

    @Test func rfc3261_12_2_1_1_ackFollowsTheRecordRoute() throws {
        var harness = try CallHarness()
        harness.start()
        harness.receive(harness.response(200, body: sdp("sendrecv"), headers: [("Record-Route", "<sip:198.51.100.5;lr>")]))
        let (_, ack, hop) = try #require(harness.requests(.ack).first)
        #expect(hop == CallHarness.proxy)
        #expect(ack.requestURI == Messages.uri("sip:gw@198.51.100.20:5070"))
        #expect(try ack.routes().map(\.uri) == [Messages.uri("sip:198.51.100.5;lr")])
    }

    @Test func unresolvableContactEndsTheCallInsteadOfGuessing() throws {
        var harness = try CallHarness()
        harness.start()
        harness.receive(harness.response(200, body: sdp("sendrecv"), contact: "<sip:gw@gw.carrier.example.test>"))
        #expect(harness.requests(.ack).isEmpty)
        #expect(harness.ends == [.noRoute(Messages.uri("sip:gw@gw.carrier.example.test"))])
    }

    @Test func failureReportsStatusReasonAndXHeaders() throws {
        var harness = try CallHarness()
        harness.start()
        harness.receive(harness.response(486, headers: [("X-Reason", "user busy"), ("Reason", "Q.850;cause=17")]))
        #expect(harness.ends.count == 1)
        guard case .rejected(486, "Busy Here", let xHeaders) = harness.ends.first else {
            Issue.record("expected a 486: \(harness.ends)")
            return
        }
        #expect(xHeaders.map(\.name) == ["X-Reason"])
        #expect(xHeaders.map(\.value) == ["user busy"])
        // The transaction acknowledged it, to the INVITE's hop, with its branch.
        let (_, ack, hop) = try #require(harness.requests(.ack).first)
        #expect(hop == CallHarness.proxy)
        #expect(try ack.topVia()?.branch == harness.lastInvite.topVia()?.branch)
        #expect(harness.call.phase == .ended)
        harness.advance(to: 40_000)
        #expect(harness.call.isFinished)
    }

    @Test func rfc3261_17_1_1_2_noAnswerAtAllIsTimedOut() throws {
        var harness = try CallHarness()
        harness.start()
        harness.advance(to: 40_000)
        #expect(harness.requests(.invite).map(\.at) == [0, 500, 1500, 3500, 7500, 15_500, 31_500])
        #expect(harness.ends == [.timedOut])
        #expect(harness.events.last?.at == 32_000)
        #expect(harness.call.isFinished)
    }

    @Test func overTCPTheInviteIsNotRetransmittedAndAFailedSendEndsTheCall() throws {
        var invitation = CallHarness.invitation()
        invitation.destination = SIPHop(transport: .tcp, host: .ipv4("198.51.100.5"), port: 5060)
        var harness = try CallHarness(invitation: invitation)
        harness.start()
        #expect(try harness.lastInvite.topVia()?.transport == "TCP")
        harness.advance(to: 10_000)
        #expect(harness.requests(.invite).count == 1)
        harness.take(harness.call.transportFailed(sending: harness.lastInvite, now: VirtualTime.at(harness.now)))
        #expect(harness.ends == [.transportError])
        #expect(harness.call.isFinished)
    }

    // MARK: CANCEL

    @Test func rfc3261_9_1_cancelWaitsForAProvisionalResponse() throws {
        var harness = try CallHarness()
        harness.start()
        harness.now = 100
        harness.cancel()
        #expect(harness.requests(.cancel).isEmpty)
        harness.now = 300
        harness.receive(harness.response(100))
        let (_, cancel, hop) = try #require(harness.requests(.cancel).first)
        #expect(hop == CallHarness.proxy)
        // §9.1: the INVITE's Request-URI, Call-ID, From, To, CSeq number and top Via.
        let invite = harness.lastInvite
        #expect(cancel.requestURI == invite.requestURI)
        #expect(try cancel.topVia() == invite.topVia())
        #expect(try cancel.cseq() == SIPCSeq(sequence: 1, method: .cancel))
        #expect(try cancel.to() == invite.to())
        #expect(try cancel.from() == invite.from())
        #expect(cancel.body.isEmpty)
        harness.receive(harness.response(200, to: cancel))
        #expect(harness.ends.isEmpty)
        harness.receive(harness.response(487, tag: "gw1"))
        #expect(harness.ends == [.cancelled])
        // The 487 is acknowledged by the INVITE transaction.
        #expect(try harness.requests(.ack).first?.message.topVia()?.branch == invite.topVia()?.branch)
    }

    @Test func rfc3261_9_1_noFinalResponseAfterCancelEndsIt() throws {
        var harness = try CallHarness()
        harness.start()
        harness.receive(harness.response(180))
        harness.now = 2_000
        harness.cancel()
        #expect(harness.requests(.cancel).count == 1)
        harness.advance(to: 60_000)
        #expect(harness.ends == [.cancelled])
        #expect(harness.events.last?.at == 34_000)  // 64·T1 after the CANCEL
    }

    @Test func answerCrossingTheCancelIsAcknowledgedAndEndedWithBye() throws {
        var harness = try CallHarness()
        harness.start()
        harness.receive(harness.response(180))
        harness.cancel()
        harness.answerCall()
        #expect(harness.requests(.ack).last?.hop == CallHarness.gateway)
        #expect(harness.requests(.bye).count == 1)
        #expect(harness.ends == [.cancelled])
        #expect(!harness.events.contains { if case .answered = $0.event { true } else { false } })
    }

    // MARK: Digest authentication

    private static let secret = [UInt8](repeating: 0x3c, count: 32)

    private func trunkAccount() throws -> SIPDigestClient { try SIPDigestClient(username: "parley", password: "s3cret") }

    @Test func rfc3261_22_2_challengedInviteIsSentAgainWithCredentialsTheServerAccepts() throws {
        var server = try SIPDigestServer(configuration: .init(realm: "trunk.example.test"), secret: Self.secret)
        var random = SeededGenerator(seed: 1)
        var harness = try CallHarness(invitation: CallHarness.invitation(credentials: try trunkAccount()))
        harness.start()
        let first = harness.lastInvite
        let challenges = try server.challengeValues(nowUnixSeconds: 1_750_000_000, using: &random)
        harness.receive(harness.response(407, tag: "proxy-tag", headers: challenges.map { ("Proxy-Authenticate", $0) }))
        // The 407 is acknowledged by its transaction, then a new INVITE goes out.
        #expect(harness.requests(.ack).count == 1)
        #expect(harness.requests(.invite).count == 2)
        let second = harness.lastInvite
        #expect(try second.cseq() == SIPCSeq(sequence: 2, method: .invite))
        #expect(try second.callID() == first.callID())
        #expect(try second.from() == first.from())
        #expect(try second.to()?.tag == nil)
        #expect(try second.topVia()?.branch != first.topVia()?.branch)
        #expect(second.body == first.body)
        #expect(harness.requests(.invite).last?.hop == CallHarness.proxy)
        // The far side really accepts them.
        let verdict = server.verify(authorizationValues: second.headers["Proxy-Authorization"], method: "INVITE",
                                    requestURI: second.requestURI!.description, body: second.body,
                                    nowUnixSeconds: 1_750_000_001, password: { $0 == "parley" ? "s3cret" : nil })
        #expect(verdict == .accepted(username: "parley"))
        #expect(harness.ends.isEmpty)
        // The 2xx's ACK repeats the INVITE's credentials and CSeq number (§13.2.2.4).
        harness.answerCall()
        let ack = try #require(harness.requests(.ack).last?.message)
        #expect(try ack.cseq() == SIPCSeq(sequence: 2, method: .ack))
        #expect(ack.headers["Proxy-Authorization"] == second.headers["Proxy-Authorization"])
        #expect(harness.call.phase == .answered)
    }

    @Test func rfc3261_22_2_aSecondChallengeOfTheRealmIsAFailure() throws {
        let server = try SIPDigestServer(configuration: .init(realm: "trunk.example.test"), secret: Self.secret)
        var random = SeededGenerator(seed: 2)
        var harness = try CallHarness(invitation: CallHarness.invitation(credentials: try trunkAccount()))
        harness.start()
        harness.receive(harness.response(401, tag: "a", headers: try server.challengeValues(nowUnixSeconds: 1_750_000_000, using: &random).map { ("WWW-Authenticate", $0) }))
        #expect(harness.lastInvite.headers["Authorization"].count == 1)
        // The password is wrong: the far side challenges again, not stale.
        harness.receive(harness.response(401, tag: "b", headers: try server.challengeValues(nowUnixSeconds: 1_750_000_001, using: &random).map { ("WWW-Authenticate", $0) }))
        #expect(harness.requests(.invite).count == 2)
        guard case .rejected(401, _, _) = harness.ends.first else {
            Issue.record("expected a 401 failure: \(harness.ends)")
            return
        }
    }

    @Test func challengeWithoutCredentialsIsAFailure() throws {
        let server = try SIPDigestServer(configuration: .init(realm: "trunk.example.test"), secret: Self.secret)
        var random = SeededGenerator(seed: 3)
        var harness = try CallHarness()
        harness.start()
        harness.receive(harness.response(407, headers: try server.challengeValues(nowUnixSeconds: 1_750_000_000, using: &random).map { ("Proxy-Authenticate", $0) }))
        #expect(harness.requests(.invite).count == 1)
        guard case .rejected(407, "Proxy Authentication Required", _) = harness.ends.first else {
            Issue.record("expected a 407 failure: \(harness.ends)")
            return
        }
    }

    // MARK: Forks

    @Test func rfc3261_13_2_2_4_anotherForksAnswerIsAcknowledgedAndEnded() throws {
        var harness = try CallHarness()
        harness.start()
        harness.answerCall()
        let other = harness.response(200, tag: "gw2", body: sdp("sendrecv"), contact: "<sip:other@198.51.100.30>")
        harness.receive(other)
        let acks = harness.requests(.ack)
        #expect(acks.count == 2)
        #expect(acks.last?.hop == SIPHop(transport: .udp, host: .ipv4("198.51.100.30"), port: 5060))
        #expect(try acks.last?.message.to()?.tag == "gw2")
        let bye = try #require(harness.requests(.bye).first)
        #expect(try bye.message.to()?.tag == "gw2")
        #expect(bye.hop == SIPHop(transport: .udp, host: .ipv4("198.51.100.30"), port: 5060))
        // Our call goes on with the first answer.
        #expect(harness.call.phase == .answered)
        #expect(harness.call.dialog?.id.remoteTag == "gw1")
        #expect(harness.ends.isEmpty)
    }
}
