import Glibc
import ParleyCallCore
import ParleyCallModel
import ParleyNetCore
import ParleyNetLinux
@testable import ParleyServer
import ParleySIP
import ParleySIPCore
import ParleySIPIO
import Synchronization
import Testing

/// parleyd's SIP user agent over a real SIP transport on loopback, against a UAS scripted
/// in the test on a UDP socket of its own: the INVITE it writes, the reports its answers
/// become, the ACK to the 2xx's Contact, CANCEL, BYE both ways.
@Suite(.serialized) struct SIPUserAgentTests {
    /// A user agent, its transport, a UDP peer its calls are routed to, and its reports.
    final class Rig: @unchecked Sendable {
        let agent: SIPUserAgent
        let transport: SIPTransportServer
        let peer: UDPSocket
        private let reports = Mutex<[SIPCallEvent]>([])

        init() throws {
            peer = try UDPSocket(bindingTo: .ipv4Loopback(port: 0))
            let hop = SIPHop(transport: .udp, host: .ipv4("127.0.0.1"), port: peer.localAddress.port)
            agent = SIPUserAgent(configuration: SIPGatewayConfiguration(routes: ["pbx.test": hop]), log: ServerLog(level: .error))
            transport = try SIPTransportServer(configuration: SIPTransportConfiguration(listenAddress: .ipv4Loopback(port: 0)),
                                               delegate: agent)
            try agent.attach(transport: transport)
            agent.attach { [weak self] event, _ in self?.record(event) }
        }

        deinit {
            transport.shutdown()
            peer.close()
        }

        var events: [SIPCallEvent] { reports.withLock { $0 } }

        private func record(_ event: SIPCallEvent) { reports.withLock { $0.append(event) } }

        /// Waits up to five seconds for `count` reports.
        func waitForEvents(_ count: Int) -> [SIPCallEvent] {
            let deadline = ContinuousClock.now.advanced(by: .seconds(5))
            while events.count < count && ContinuousClock.now < deadline { usleep(2_000) }
            return events
        }

        /// The next message the peer receives within five seconds.
        func receive() throws -> SIPMessage? {
            var buffer = [UInt8](repeating: 0, count: 65_536)
            let deadline = ContinuousClock.now.advanced(by: .seconds(5))
            while ContinuousClock.now < deadline {
                if let (count, _) = try buffer.withUnsafeMutableBytes({ try peer.receive(into: $0) }) {
                    return try SIPMessage(datagram: buffer[..<count])
                }
                usleep(2_000)
            }
            return nil
        }

        /// The next request of `method`, skipping retransmissions of others.
        func receive(_ method: SIPMethod) throws -> SIPMessage? {
            while let message = try receive() {
                if message.method == method { return message }
            }
            return nil
        }

        func send(_ message: SIPMessage) throws {
            try peer.send(message.serialized(), to: transport.localAddress)
        }

        /// A response to `request` from the peer, with its Contact and an optional SDP.
        func response(_ status: Int, to request: SIPMessage, sdp: String? = nil) throws -> SIPMessage {
            var response = try request.makeResponse(statusCode: status, toTag: status == 100 ? nil : "uas-tag")
            try response.headers.add(name: "Contact", value: "<sip:bob@127.0.0.1:\(peer.localAddress.port)>")
            if let sdp {
                try response.headers.add(name: "Content-Type", value: "application/sdp")
                response.body = Array(sdp.utf8)
            }
            return response
        }
    }

    static let party = SIPParty(callID: "call-ua", destination: .uri("bob@pbx.test"))
    static let offerSDP = "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 4000 RTP/AVP 0 101\r\na=rtpmap:101 telephone-event/8000\r\na=sendrecv\r\n"
    static let answerSDP = "v=0\r\no=- 2 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 4100 RTP/AVP 0 101\r\na=rtpmap:101 telephone-event/8000\r\n"
    static let offer = CallOffer(callID: "call-ua", from: .user("alice"), headers: ["x-order": "17"], video: false, time: 0,
                                 sdp: offerSDP, displayName: "Alice")
    static let ended = CallNotification.ended(callID: "call-ua", cause: .hungUp, error: nil, details: CallTimes(startedTime: 0))

    /// Places the call and answers it with 180 then 200; returns the INVITE.
    static func answeredCall(_ rig: Rig) throws -> SIPMessage {
        rig.agent.tell(party, .offered(offer))
        let invite = try #require(try rig.receive(.invite))
        try rig.send(try rig.response(180, to: invite))
        try rig.send(try rig.response(200, to: invite, sdp: answerSDP))
        return invite
    }

    @Test func anAnsweredCallIsReportedAcknowledgedAtItsContactAndHungUpWithBYE() throws {
        let rig = try Rig()
        let invite = try Self.answeredCall(rig)
        #expect(invite.requestURI?.description == "sip:bob@pbx.test")
        #expect(invite.headers.first("x-order") == "17")
        #expect(try invite.from()?.uri.description == "sip:alice@127.0.0.1")
        #expect(String(decoding: invite.body, as: UTF8.self) == Self.offerSDP)
        let ack = try #require(try rig.receive(.ack))
        #expect(ack.requestURI?.description == "sip:bob@127.0.0.1:\(rig.peer.localAddress.port)")
        let events = rig.waitForEvents(3)
        #expect(events.first == .placed(sipCallID: try #require(try invite.callID())))
        #expect(Array(events.dropFirst()) == [.ringing(earlySDP: nil), .answered(sdp: Self.answerSDP)])
        #expect(rig.agent.callCount == 1)

        rig.agent.tell(Self.party, Self.ended)
        let bye = try #require(try rig.receive(.bye))
        try rig.send(try bye.makeResponse(statusCode: 200))
        let deadline = ContinuousClock.now.advanced(by: .seconds(5))
        while rig.agent.callCount != 0 && ContinuousClock.now < deadline { usleep(2_000) }
        #expect(rig.agent.callCount == 0)
        // We hung up: nothing more is reported.
        #expect(rig.events.count == 3)
    }

    @Test func theFarSidesBYEIsReportedAsHungUp() throws {
        let rig = try Rig()
        let invite = try Self.answeredCall(rig)
        let ack = try #require(try rig.receive(.ack))
        _ = rig.waitForEvents(3)
        let contact = try SIPNameAddress(parsing: try #require(invite.headers.first("Contact")))
        var bye = try SIPMessage(request: .bye, uri: contact.uri)
        // The far side's BYE in the dialog: its tag as From, ours as To, a new CSeq.
        try bye.headers.add(name: "Via", value: "SIP/2.0/UDP 127.0.0.1:\(rig.peer.localAddress.port);branch=z9hG4bK-bye-1;rport")
        try bye.headers.add(name: "From", value: try #require(ack.headers.first("To")))
        try bye.headers.add(name: "To", value: try #require(ack.headers.first("From")))
        try bye.headers.add(name: "Call-ID", value: try #require(try invite.callID()))
        try bye.headers.add(name: "CSeq", value: "1 BYE")
        try bye.headers.add(name: "Max-Forwards", value: "70")
        try rig.send(bye)
        let ok = try #require(try rig.receive())
        #expect(ok.statusCode == 200 && ok.method == nil)
        #expect(rig.waitForEvents(4).last == .hungUp)
    }

    @Test func aBusyAnswerIsReportedWithItsStatusAndAcknowledged() throws {
        let rig = try Rig()
        rig.agent.tell(Self.party, .offered(Self.offer))
        let invite = try #require(try rig.receive(.invite))
        try rig.send(try rig.response(486, to: invite))
        let ack = try #require(try rig.receive(.ack))
        #expect(ack.requestURI == invite.requestURI)
        #expect(rig.waitForEvents(2).dropFirst() == [.failed(status: 486, reason: "Busy Here")])
    }

    @Test func endingBeforeTheAnswerCancelsTheInvite() throws {
        let rig = try Rig()
        rig.agent.tell(Self.party, .offered(Self.offer))
        let invite = try #require(try rig.receive(.invite))
        try rig.send(try rig.response(180, to: invite))
        _ = rig.waitForEvents(2)
        rig.agent.tell(Self.party, Self.ended)
        let cancel = try #require(try rig.receive(.cancel))
        #expect(try cancel.topVia()?.branch == (try invite.topVia()?.branch))
        try rig.send(try cancel.makeResponse(statusCode: 200, toTag: "uas-tag"))
        try rig.send(try rig.response(487, to: invite))
        _ = try #require(try rig.receive(.ack))
        let deadline = ContinuousClock.now.advanced(by: .seconds(5))
        while rig.agent.callCount != 0 && ContinuousClock.now < deadline { usleep(2_000) }
        #expect(rig.agent.callCount == 0)
        #expect(rig.events.dropFirst() == [.ringing(earlySDP: nil)])
    }

    @Test func dtmfInAnINFOIsReported() throws {
        let rig = try Rig()
        let invite = try Self.answeredCall(rig)
        let ack = try #require(try rig.receive(.ack))
        _ = rig.waitForEvents(3)
        var info = try SIPMessage(request: .info, uri: try #require(try invite.from()?.uri))
        try info.headers.add(name: "Via", value: "SIP/2.0/UDP 127.0.0.1:\(rig.peer.localAddress.port);branch=z9hG4bK-info-1;rport")
        try info.headers.add(name: "From", value: try #require(ack.headers.first("To")))
        try info.headers.add(name: "To", value: try #require(ack.headers.first("From")))
        try info.headers.add(name: "Call-ID", value: try #require(try invite.callID()))
        try info.headers.add(name: "CSeq", value: "1 INFO")
        try info.headers.add(name: "Max-Forwards", value: "70")
        try info.headers.add(name: "Content-Type", value: "application/dtmf-relay")
        info.body = Array("Signal=9\r\nDuration=160\r\n".utf8)
        try rig.send(info)
        #expect(try rig.receive()?.statusCode == 200)
        #expect(rig.waitForEvents(4).last == .dtmf(digits: "9"))
    }

    @Test func aDestinationWithoutARouteFailsAtOnceAndNothingIsSent() throws {
        let rig = try Rig()
        rig.agent.tell(SIPParty(callID: "call-x", destination: .uri("bob@elsewhere.test")), .offered(Self.offer))
        let events = rig.waitForEvents(1)
        guard case .failed(503, let reason)? = events.first else {
            Issue.record("expected a 503 failure, got \(events)")
            return
        }
        #expect(reason.contains("no route"))
        #expect(rig.agent.callCount == 0)
    }

    @Test func messagesOfNoCallAreAnsweredAsTheStatelessResponderDoes() throws {
        let rig = try Rig()
        var options = try SIPMessage(request: .options, uri: try SIPURI(parsing: "sip:parleyd@127.0.0.1"))
        try options.headers.add(name: "Via", value: "SIP/2.0/UDP 127.0.0.1:\(rig.peer.localAddress.port);branch=z9hG4bK-opt;rport")
        try options.headers.add(name: "From", value: "<sip:x@127.0.0.1>;tag=1")
        try options.headers.add(name: "To", value: "<sip:parleyd@127.0.0.1>")
        try options.headers.add(name: "Call-ID", value: "no-such-call")
        try options.headers.add(name: "CSeq", value: "1 OPTIONS")
        try options.headers.add(name: "Max-Forwards", value: "70")
        try rig.send(options)
        #expect(try rig.receive()?.statusCode == 200)
    }

    @Test func theFarSidesXHeadersAreBoundedToWhatTheProtocolCarries() throws {
        var headers = SIPHeaders()
        try headers.add(name: "x-ok", value: "1\t2")
        try headers.add(name: "x-ok", value: "second")
        try headers.add(name: "x-big", value: String(repeating: "a", count: 1100))
        #expect(SIPUserAgent.appHeaders(headers.fields) == ["x-ok": "1 2"])
        var many = SIPHeaders()
        for index in 0..<100 { try many.add(name: "x-h\(index)", value: "v") }
        #expect(SIPUserAgent.appHeaders(many.fields).count == 64)
    }

    @Test func endsWithoutAResponseGetTheStatusRFC3261Gives() {
        #expect(SIPUserAgent.report(for: .timedOut) == .failed(status: 408, reason: "Request Timeout (no final response)"))
        #expect(SIPUserAgent.report(for: .remoteHangUp) == .hungUp)
        #expect(SIPUserAgent.report(for: .cancelled) == nil)
        #expect(SIPUserAgent.report(for: .localHangUp) == nil)
        if case .failed(503, _)? = SIPUserAgent.report(for: .transportError) {} else { Issue.record("a transport error is not 503") }
    }
}
