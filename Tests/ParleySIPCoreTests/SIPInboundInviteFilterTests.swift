import Testing
import ParleySIP
import ParleySIPCore
import ParleyTestSupport

/// What becomes of an INVITE that starts no known call: accepted, a retransmission,
/// answered 400/481/482/483, or dropped.
@Suite struct SIPInboundInviteFilterTests {
    private func filter(capacity: Int = 4096) -> SIPInboundInviteFilter {
        SIPInboundInviteFilter(capacity: capacity, random: SeededGenerator(seed: 9))
    }

    private func status(_ decision: SIPInboundInviteFilter.Decision) -> Int? {
        if case .answer(let response, _, _) = decision { response.statusCode } else { nil }
    }

    @Test func aGoodInviteIsAcceptedAndItsRetransmissionRecognised() {
        var filter = filter()
        let invite = InboundHarness.makeInvite()
        #expect(filter.check(invite, from: InboundHarness.proxy, now: VirtualTime.at(0)) == .accept)
        #expect(filter.check(invite, from: InboundHarness.proxy, now: VirtualTime.at(500)) == .retransmission)
        #expect(filter.count == 1)
    }

    @Test func rfc3261_8_2_2_2_aMergedInviteIs482() throws {
        var filter = filter()
        #expect(filter.check(InboundHarness.makeInvite(), from: InboundHarness.proxy, now: VirtualTime.at(0)) == .accept)
        let copy = InboundHarness.makeInvite(branch: "z9hG4bKforked")
        let decision = filter.check(copy, from: InboundHarness.proxy, now: VirtualTime.at(100))
        #expect(status(decision) == 482)
        if case .answer(let response, let hop, _) = decision {
            #expect(hop == InboundHarness.proxy)
            #expect(try response.to()?.tag != nil)
            #expect(try response.topVia()?.branch == "z9hG4bKforked")
        }
        // A new CSeq from the same caller is a new request, not a merge.
        #expect(filter.check(InboundHarness.makeInvite(branch: "z9hG4bKnew", cseq: 2), from: InboundHarness.proxy,
                             now: VirtualTime.at(200)) == .accept)
    }

    @Test func aMergeIsForgottenAfter64T1() {
        var filter = filter()
        #expect(filter.check(InboundHarness.makeInvite(), from: InboundHarness.proxy, now: VirtualTime.at(0)) == .accept)
        let copy = InboundHarness.makeInvite(branch: "z9hG4bKlate")
        #expect(filter.check(copy, from: InboundHarness.proxy, now: VirtualTime.at(32_000)) == .accept)
        #expect(filter.count == 1)
        filter.forget(callID: "in-1@198.51.100.5")
        #expect(filter.count == 0)
    }

    @Test func maxForwardsZeroIs483() throws {
        var filter = filter()
        var invite = InboundHarness.makeInvite()
        try invite.headers.set(name: "Max-Forwards", value: "0")
        #expect(status(filter.check(invite, from: InboundHarness.proxy, now: VirtualTime.at(0))) == 483)
        #expect(filter.count == 0)
    }

    @Test func missingOrMalformedHeadersAre400() throws {
        var filter = filter()
        var noContact = InboundHarness.makeInvite()
        noContact.headers.remove(name: "Contact")
        let decision = filter.check(noContact, from: InboundHarness.proxy, now: VirtualTime.at(0))
        #expect(status(decision) == 400)
        if case .answer(let response, _, _) = decision { #expect(response.reasonPhrase == "Missing Contact") }
        for name in ["Call-ID", "CSeq", "From", "To"] {
            var invite = InboundHarness.makeInvite()
            invite.headers.remove(name: name)
            #expect(status(filter.check(invite, from: InboundHarness.proxy, now: VirtualTime.at(0))) == 400, "\(name)")
        }
        var badCSeq = InboundHarness.makeInvite()
        try badCSeq.headers.set(name: "CSeq", value: "one INVITE")
        #expect(status(filter.check(badCSeq, from: InboundHarness.proxy, now: VirtualTime.at(0))) == 400)
        #expect(filter.count == 0)
    }

    @Test func aToTagIs481AndOtherMessagesAreDropped() throws {
        var filter = filter()
        var tagged = InboundHarness.makeInvite()
        try tagged.headers.set(name: "To", value: "<sip:+4615550199@parley.example.test>;tag=gone")
        #expect(status(filter.check(tagged, from: InboundHarness.proxy, now: VirtualTime.at(0))) == 481)
        let bye = Messages.request(.bye)
        guard case .drop = filter.check(bye, from: InboundHarness.proxy, now: VirtualTime.at(0)) else {
            Issue.record("a BYE is not a new call")
            return
        }
        var brokenAck = Messages.request(.ack)
        try brokenAck.headers.set(name: "Content-Type", value: "application/")
        guard case .drop = filter.check(brokenAck, from: InboundHarness.proxy, now: VirtualTime.at(0)) else {
            Issue.record("a malformed ACK is answered")
            return
        }
        guard case .drop = filter.check(Messages.response(200, to: bye), from: InboundHarness.proxy, now: VirtualTime.at(0)) else {
            Issue.record("a response is not a new call")
            return
        }
    }

    @Test func whatItRemembersIsBounded() {
        var filter = filter(capacity: 100)
        for index in 0..<1_000 {
            var invite = InboundHarness.makeInvite(branch: "z9hG4bKflood\(index)")
            try? invite.headers.set(name: "Call-ID", value: "flood-\(index)@198.51.100.5")
            #expect(filter.check(invite, from: InboundHarness.proxy, now: VirtualTime.at(index)) == .accept)
            #expect(filter.count <= 100)
        }
        #expect(filter.count == 100)
    }
}
