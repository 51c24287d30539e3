@testable import ParleyServer
import Testing

/// Our hold and resume offers (`SIPRemoteOfferAnswer.holdOffer`) and the one-at-a-time
/// bookkeeping of `SIPHoldRequests`, sans-I/O.
@Suite struct SIPHoldOfferTests {
    static let carrier = "v=0\r\no=- 9 1 IN IP4 192.0.2.5\r\ns=-\r\nc=IN IP4 192.0.2.5\r\nt=0 0\r\nm=audio 5000 RTP/AVP 8 126\r\n"
        + "a=rtpmap:8 PCMA/8000\r\na=rtpmap:126 telephone-event/8000\r\n"

    static func text(_ bytes: [UInt8]?) -> String { bytes.map { String(decoding: $0, as: UTF8.self) } ?? "" }

    @Test func holdOffersSendonlyWithTheRunningCodecOnlyAndResumeSendrecvEachANewVersion() throws {
        var offers = try #require(SIPRemoteOfferAnswer(localSDP: SIPRemoteOfferAnswerTests.gatewayOffer, remoteAnswer: Self.carrier))
        let hold = Self.text(offers.holdOffer(true))
        #expect(hold.contains("m=audio 4000 RTP/AVP 8 126\r\n"), "\(hold)")
        #expect(hold.contains("a=sendonly\r\n") && !hold.contains("a=sendrecv"), "\(hold)")
        #expect(!hold.contains("PCMU") && !hold.contains("opus") && !hold.contains("rtcp-mux"), "\(hold)")
        #expect(hold.contains("o=- 7 2 IN IP4"), "\(hold)")
        #expect(offers.localHold)
        offers.offerAnswered()
        // While we hold, the far side's sendrecv re-offer is answered sendonly at most.
        let reoffer = SIPRemoteOfferAnswerTests.reoffer("sendrecv", formats: "8 126")
        #expect(Self.text(offers.answer(to: reoffer)).contains("a=sendonly\r\n"))
        let resume = Self.text(offers.holdOffer(false))
        #expect(resume.contains("a=sendrecv\r\n") && !resume.contains("a=sendonly"), "\(resume)")
        #expect(resume.contains("m=audio 4000 RTP/AVP 8 126\r\n"), "\(resume)")
        #expect(!offers.localHold)
    }

    @Test func whileTheFarSideHoldsUsOurHoldIsInactive() throws {
        var offers = try #require(SIPRemoteOfferAnswer(localSDP: SIPRemoteOfferAnswerTests.gatewayOffer, remoteAnswer: Self.carrier))
        _ = offers.answer(to: SIPRemoteOfferAnswerTests.reoffer("sendonly", formats: "8 126"))
        #expect(offers.remoteHolds)
        #expect(Self.text(offers.holdOffer(true)).contains("a=inactive\r\n"))
    }

    @Test func aRefusedOfferPutsTheOldSessionBack() throws {
        var offers = try #require(SIPRemoteOfferAnswer(localSDP: SIPRemoteOfferAnswerTests.gatewayOffer, remoteAnswer: Self.carrier))
        let before = offers.localSDP
        _ = offers.holdOffer(true)
        offers.offerRefused()
        #expect(offers.localSDP == before && !offers.localHold)
    }

    @Test func oneOfferAtATimeTheLatestWishWinningARefusedOneGivenUp() {
        var requests = SIPHoldRequests()
        #expect(requests.next(current: false) == nil)
        requests.want(true)
        #expect(requests.next(current: false) == true)
        requests.sent(true)
        requests.want(false)  // resumed while the hold is out
        #expect(requests.next(current: true) == nil, "one offer at a time")
        requests.answered()
        #expect(requests.next(current: true) == false, "the resume goes once the hold is answered")
        requests.sent(false)
        requests.refused()
        #expect(requests.next(current: true) == nil, "a refused wish is not asked again")
        requests.want(true)
        #expect(requests.next(current: true) == nil, "already what we have")
        requests.want(false)
        #expect(requests.next(current: true) == false)
        requests.abandon()
        #expect(requests.next(current: true) == nil)
    }
}
