import ParleyCallCore
import ParleyCallModel
@testable import ParleyServer
import ParleySIP
import ParleySIPCore
import Testing

/// How the SIP user agent writes a SIP party's INVITE and picks its first hop
/// (docs/sip.md, "Routing").
@Suite struct SIPInvitationPlanTests {
    static let trunkHop = SIPHop(transport: .udp, host: .ipv4("192.0.2.10"), port: 5070)
    static let proxyHop = SIPHop(transport: .tcp, host: .ipv4("192.0.2.20"), port: 5080)
    static let routeHop = SIPHop(transport: .udp, host: .ipv4("192.0.2.30"), port: 5090)

    static func plan(_ change: (inout SIPGatewayConfiguration) -> Void = { _ in }) -> SIPInvitationPlan {
        var configuration = SIPGatewayConfiguration(
            trunk: .init(hop: trunkHop, domain: "trunk.example", username: "acct", password: "secret"),
            routes: ["pbx.example": routeHop])
        change(&configuration)
        return SIPInvitationPlan(configuration: configuration, localHost: .ipv4("127.0.0.1"), localPort: 5060)
    }

    static func offer(headers: [String: String] = [:], cli: String? = nil, displayName: String? = "Alice A") -> CallOffer {
        CallOffer(callID: "call-1", from: .user("alice"), headers: headers, video: false, time: 0,
                  sdp: "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 4000 RTP/AVP 0\r\n",
                  displayName: displayName, cli: cli)
    }

    static func phone(_ number: String, cli: String? = "+46700000001") -> SIPParty {
        SIPParty(callID: "call-1", destination: .phone(PhoneRoute(number: number, callerID: cli)))
    }

    static func sip(_ address: String) -> SIPParty { SIPParty(callID: "call-1", destination: .uri(address)) }

    @Test func aPhoneNumberGoesToTheTrunkWithTheCLIAsFromAndPAI() throws {
        let invitation = try Self.plan().invitation(for: Self.phone("+4615550101"), offer: Self.offer(headers: ["x-ref": "42"]))
        #expect(invitation.requestURI.description == "sip:+4615550101@trunk.example;user=phone")
        #expect(invitation.from.uri.description == "sip:+46700000001@trunk.example;user=phone")
        #expect(invitation.from.displayName == "Alice A")
        #expect(invitation.headers.first("P-Asserted-Identity") == "<sip:+46700000001@trunk.example;user=phone>")
        #expect(invitation.headers.first("x-ref") == "42")
        #expect(invitation.destination == Self.trunkHop)
        #expect(invitation.credentials?.username == "acct")
        #expect(invitation.contact.uri.description == "sip:parleyd@127.0.0.1:5060")
        #expect(invitation.viaHost == .ipv4("127.0.0.1") && invitation.viaPort == 5060)
    }

    @Test func aTrunkThatWantsDigitsGetsNoPlus() throws {
        let plan = Self.plan { $0.trunk?.numberFormat = .digits }
        let invitation = try plan.invitation(for: Self.phone("+4615550101"), offer: Self.offer())
        #expect(invitation.requestURI.user == "4615550101")
        #expect(invitation.from.uri.user == "46700000001")
    }

    @Test func phoneNumbersWithoutATrunkOrACLIAreRefused() {
        #expect(throws: SIPInvitationPlan.Refusal(status: 503, reason: "no SIP trunk is configured for phone numbers")) {
            try Self.plan { $0.trunk = nil }.invitation(for: Self.phone("+4615550101"), offer: Self.offer())
        }
        #expect(throws: SIPInvitationPlan.Refusal(status: 403, reason: "a call to a phone number needs a CLI")) {
            try Self.plan().invitation(for: Self.phone("+4615550101", cli: nil), offer: Self.offer())
        }
    }

    @Test func aSIPAddressGoesToItsRouteThenTheProxyThenDirect() throws {
        let routed = try Self.plan().invitation(for: Self.sip("bob@PBX.example"), offer: Self.offer())
        #expect(routed.destination == Self.routeHop)
        #expect(routed.requestURI.description == "sip:bob@PBX.example")
        #expect(routed.from.uri.description == "sip:alice@127.0.0.1")
        #expect(routed.headers.first("P-Asserted-Identity") == nil)
        #expect(routed.credentials == nil)

        let proxied = try Self.plan { $0.outboundProxy = Self.proxyHop }.invitation(for: Self.sip("sip:bob@other.example"), offer: Self.offer())
        #expect(proxied.destination == Self.proxyHop)
        #expect(proxied.contact.uri.description == "sip:parleyd@127.0.0.1:5060;transport=tcp")

        let direct = try Self.plan { $0.allowDirect = true }.invitation(for: Self.sip("bob@127.0.0.9:5099;transport=tcp"), offer: Self.offer())
        #expect(direct.destination == SIPHop(transport: .tcp, host: .ipv4("127.0.0.9"), port: 5099))
    }

    @Test func aSIPAddressWithNoRouteIsRefusedAndDirectNeedsPermission() {
        for address in ["bob@other.example", "bob@127.0.0.9"] {
            #expect(throws: SIPInvitationPlan.Refusal.self) { try Self.plan().invitation(for: Self.sip(address), offer: Self.offer()) }
        }
        // Direct dialling never reaches a name: DNS is not looked up.
        #expect(throws: SIPInvitationPlan.Refusal.self) {
            try Self.plan { $0.allowDirect = true }.invitation(for: Self.sip("bob@other.example"), offer: Self.offer())
        }
    }

    @Test func aTLSRouteNamesOurTLSPortAndIsCheckedForItsDomain() throws {
        let tlsHop = SIPHop(transport: .tls, host: .ipv4("192.0.2.40"), port: 5061)
        var plan = Self.plan { $0.routes["secure.example"] = tlsHop }
        plan.localTLSPort = 5071
        let invitation = try plan.invitation(for: Self.sip("bob@Secure.example"), offer: Self.offer())
        #expect(invitation.destination == tlsHop)
        #expect(invitation.viaPort == 5071)
        #expect(invitation.contact.uri.description == "sip:parleyd@127.0.0.1:5071;transport=tls")
        #expect(try plan.firstHop(for: Self.sip("bob@Secure.example")) == .init(hop: tlsHop, tlsName: "secure.example"))

        // sips: over a TLS first hop: a sips: Contact (RFC 3261 §8.1.1.8).
        let secure = try plan.invitation(for: Self.sip("sips:bob@secure.example"), offer: Self.offer())
        #expect(secure.requestURI.description == "sips:bob@secure.example")
        #expect(secure.contact.uri.description == "sips:parleyd@127.0.0.1:5071")

        // The trunk is checked for its domain, a proxy or a direct address for its address.
        var trunked = Self.plan { $0.trunk?.hop = tlsHop }
        trunked.localTLSPort = 5071
        #expect(try trunked.firstHop(for: Self.phone("+4615550101")).tlsName == "trunk.example")
        #expect(try Self.plan { $0.trunk?.hop = tlsHop; $0.trunk?.domain = nil }.firstHop(for: Self.phone("+46")).tlsName == "192.0.2.40")
        #expect(try Self.plan { $0.outboundProxy = tlsHop }.firstHop(for: Self.sip("bob@other.example")).tlsName == "192.0.2.40")
        let direct = try Self.plan { $0.allowDirect = true }.firstHop(for: Self.sip("sips:bob@192.0.2.50"))
        #expect(direct == .init(hop: SIPHop(transport: .tls, host: .ipv4("192.0.2.50"), port: 5061), tlsName: "192.0.2.50"))
    }

    @Test func tlsWithoutOurTLSListenerAndSIPSWithoutATLSHopAreRefused() {
        let tlsHop = SIPHop(transport: .tls, host: .ipv4("192.0.2.40"), port: 5061)
        do {
            _ = try Self.plan { $0.routes["secure.example"] = tlsHop }.invitation(for: Self.sip("bob@secure.example"), offer: Self.offer())
            Issue.record("TLS was dialled without a TLS listener")
        } catch {
            #expect(error.status == 503 && error.reason.contains("--sip-tls-listen"), "\(error.reason)")
        }
        var plan = Self.plan()
        plan.localTLSPort = 5061
        do {
            // RFC 3261 §26.2.2: a sips: URI is never reached over a hop that is not TLS.
            _ = try plan.invitation(for: Self.sip("sips:bob@pbx.example"), offer: Self.offer())
            Issue.record("sips was dialled over UDP")
        } catch {
            #expect(error.status == 503 && error.reason.contains("TLS first hop"), "\(error.reason)")
        }
    }

    @Test func onlyXHeadersTravelAndTLSIsRefusedClearly() throws {
        do {
            _ = try Self.plan().invitation(for: Self.sip("bob@pbx.example"), offer: Self.offer(headers: ["Subject": "hi"]))
            Issue.record("a header not named x- was sent")
        } catch {
            #expect(error.status == 403)
            #expect(error.reason.contains("x-"))
        }
        do {
            _ = try Self.plan().invitation(for: Self.sip("sips:bob@pbx.example"), offer: Self.offer())
            Issue.record("sips was dialled")
        } catch {
            #expect(error.status == 503 && error.reason.contains("TLS"))
        }
        do {
            _ = try Self.plan().invitation(for: Self.sip("bob@pbx.example;transport=sctp"), offer: Self.offer())
            Issue.record("sctp was dialled")
        } catch {
            #expect(error.status == 503 && error.reason.contains("sctp"))
        }
    }

    @Test func aDisplayNameSIPCannotQuoteIsLeftOut() throws {
        let invitation = try Self.plan().invitation(for: Self.sip("bob@pbx.example"), offer: Self.offer(displayName: "A \"quoted\" \\ name"))
        #expect(invitation.from.uri.description == "sip:alice@127.0.0.1")
    }
}

/// Answers to the far side's re-INVITE and UPDATE offers (RFC 3264 §8.4).
@Suite struct SIPRemoteOfferAnswerTests {
    static let ours = "v=0\r\no=- 7 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 4000 RTP/AVP 0 8 101\r\na=rtpmap:101 telephone-event/8000\r\na=sendrecv\r\n"
    static let theirs = "v=0\r\no=- 9 1 IN IP4 192.0.2.5\r\ns=-\r\nc=IN IP4 192.0.2.5\r\nt=0 0\r\nm=audio 5000 RTP/AVP 8 101\r\na=rtpmap:101 telephone-event/8000\r\n"

    static func reoffer(_ direction: String, formats: String = "8 101", port: Int = 5000) -> [UInt8] {
        Array("v=0\r\no=- 9 2 IN IP4 192.0.2.5\r\ns=-\r\nc=IN IP4 192.0.2.5\r\nt=0 0\r\nm=audio \(port) RTP/AVP \(formats)\r\na=\(direction)\r\n".utf8)
    }

    /// The answer as text, or "" when refused.
    static func answer(_ answerer: inout SIPRemoteOfferAnswer, _ offer: [UInt8]) -> String {
        answerer.answer(to: offer).map { String(decoding: $0, as: UTF8.self) } ?? ""
    }

    @Test func holdIsAnsweredRecvonlyAndResumeSendrecvEachWithANewVersion() throws {
        var answerer = try #require(SIPRemoteOfferAnswer(localSDP: Self.ours, remoteAnswer: Self.theirs))
        #expect(answerer.negotiatedCodec == "PCMA/8000")
        let hold = Self.answer(&answerer, Self.reoffer("sendonly"))
        #expect(hold.contains("a=recvonly\r\n") && !hold.contains("a=sendrecv"))
        #expect(hold.contains("o=- 7 2 IN IP4"))
        let inactive = Self.answer(&answerer, Self.reoffer("inactive"))
        #expect(inactive.contains("a=inactive\r\n") && inactive.contains("o=- 7 3 "))
        let resume = Self.answer(&answerer, Self.reoffer("sendrecv"))
        #expect(resume.contains("a=sendrecv\r\n") && resume.contains("o=- 7 4 "))
        // The same offer again changes nothing: the version stays.
        let again = Self.answer(&answerer, Self.reoffer("sendrecv"))
        #expect(again.contains("o=- 7 4 "))
    }

    /// Our INVITE's offer, as parleyd writes it for a SIP leg: every codec, RTCP mux.
    static let gatewayOffer = "v=0\r\no=- 7 1 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\nm=audio 4000 RTP/AVP 0 8 111 126 110\r\n"
        + "c=IN IP4 127.0.0.1\r\na=mid:0\r\na=sendrecv\r\na=rtcp-mux\r\na=rtpmap:0 PCMU/8000\r\na=rtpmap:8 PCMA/8000\r\n"
        + "a=rtpmap:111 opus/48000/2\r\na=fmtp:111 minptime=10;useinbandfec=1\r\na=rtpmap:126 telephone-event/8000\r\n"
        + "a=fmtp:126 0-15\r\na=rtpmap:110 telephone-event/48000\r\na=fmtp:110 0-15\r\n"

    /// A carrier answers PCMA without RTCP mux, then holds and resumes offering PCMU and
    /// PCMA (found by the interop test scripts/sipp/uas-hold-resume.xml): the answers name
    /// PCMA and its telephone-event only, so the carrier keeps sending PCMA, and no
    /// rtcp-mux (RFC 8035); on a call that multiplexes, an offer with rtcp-mux keeps it.
    @Test func reAnswersNameTheRunningCodecOnlyAndRTCPMuxOnlyWhenBothSidesHaveIt() throws {
        let carrier = "v=0\r\no=- 9 1 IN IP4 192.0.2.5\r\ns=-\r\nc=IN IP4 192.0.2.5\r\nt=0 0\r\nm=audio 5000 RTP/AVP 8 126\r\n"
            + "a=rtpmap:8 PCMA/8000\r\na=rtpmap:126 telephone-event/8000\r\n"
        var answerer = try #require(SIPRemoteOfferAnswer(localSDP: Self.gatewayOffer, remoteAnswer: carrier))
        let bothLaws = "v=0\r\no=- 9 2 IN IP4 192.0.2.5\r\ns=-\r\nc=IN IP4 192.0.2.5\r\nt=0 0\r\nm=audio 5000 RTP/AVP 0 8 101\r\n"
            + "a=rtpmap:101 telephone-event/8000\r\na=sendonly\r\n"
        let hold = Self.answer(&answerer, Array(bothLaws.utf8))
        #expect(hold.contains("m=audio 4000 RTP/AVP 8 126\r\n"), "\(hold)")
        #expect(hold.contains("a=rtpmap:8 PCMA/8000\r\na=rtpmap:126 telephone-event/8000\r\na=fmtp:126 0-15\r\n"), "\(hold)")
        #expect(!hold.contains("PCMU") && !hold.contains("opus") && !hold.contains("/48000"), "\(hold)")
        #expect(!hold.contains("rtcp-mux") && hold.contains("a=recvonly\r\n"), "\(hold)")
        let withMux = bothLaws.replacingOccurrences(of: "a=sendonly", with: "a=rtcp-mux\r\na=sendrecv")
        let resume = Self.answer(&answerer, Array(withMux.utf8))
        #expect(resume.contains("m=audio 4000 RTP/AVP 8 126\r\n") && !resume.contains("rtcp-mux"), "\(resume)")
        // Without telephone-event in the offer, the answer has none either.
        let noEvents = Self.answer(&answerer, Self.reoffer("sendrecv", formats: "8"))
        #expect(noEvents.contains("m=audio 4000 RTP/AVP 8\r\n") && !noEvents.contains("telephone-event"), "\(noEvents)")
        // ...and the next offer with them gets them back.
        #expect(Self.answer(&answerer, Array(withMux.utf8)).contains("m=audio 4000 RTP/AVP 8 126\r\n"))

        let muxed = carrier.replacingOccurrences(of: "a=rtpmap:8", with: "a=rtcp-mux\r\na=rtpmap:8")
        var multiplexing = try #require(SIPRemoteOfferAnswer(localSDP: Self.gatewayOffer, remoteAnswer: muxed))
        #expect(Self.answer(&multiplexing, Array(withMux.utf8)).contains("a=rtcp-mux\r\n"))
        #expect(!Self.answer(&multiplexing, Array(bothLaws.utf8)).contains("rtcp-mux"))
    }

    @Test func anOfferWithoutTheNegotiatedCodecOrWithoutAudioIsRefused() throws {
        var answerer = try #require(SIPRemoteOfferAnswer(localSDP: Self.ours, remoteAnswer: Self.theirs))
        #expect(answerer.answer(to: Self.reoffer("sendrecv", formats: "0 101")) == nil)
        #expect(answerer.answer(to: Self.reoffer("sendrecv", port: 0)) == nil)
        #expect(answerer.answer(to: Array("not sdp".utf8)) == nil)
    }
}
