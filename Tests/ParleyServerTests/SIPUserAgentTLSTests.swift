import Glibc
import ParleyCallCore
import ParleyCallModel
import ParleyNetCore
@testable import ParleyServer
import ParleySIP
import ParleySIPCore
import ParleySIPIO
import ParleyTestSupport
import Synchronization
import Testing

/// parleyd's SIP user agent over SIP over TLS (RFC 3261 §26.2) on loopback: its transport
/// and the far side's are both `SIPTransportServer`s with TLS, with certificates made at
/// test time; the far side is scripted in the test. The route's domain is `localhost`,
/// the name the test certificate carries.
@Suite(.serialized) struct SIPUserAgentTLSTests {
    /// A delegate that keeps what the far side receives, for the test to answer.
    final class FarSide: SIPTransportDelegate {
        private let messages = Mutex<[(SIPMessage, SIPMessageSource)]>([])

        var received: [(message: SIPMessage, source: SIPMessageSource)] { messages.withLock { $0 }.map { ($0.0, $0.1) } }

        func transport(_ transport: SIPTransportServer, received message: SIPMessage, from source: SIPMessageSource) -> SIPDelivery {
            messages.withLock { $0.append((message, source)) }
            return .taken
        }

        /// The first request of `method` within five seconds.
        func waitFor(_ method: SIPMethod) -> (message: SIPMessage, source: SIPMessageSource)? {
            let deadline = ContinuousClock.now.advanced(by: .seconds(5))
            while ContinuousClock.now < deadline {
                if let found = received.first(where: { $0.message.method == method }) { return found }
                usleep(2_000)
            }
            return nil
        }
    }

    /// The agent with its TLS transport, the far side with its own, and the reports.
    final class Rig: @unchecked Sendable {
        let agent: SIPUserAgent
        let transport: SIPTransportServer
        let farSide = FarSide()
        let farTransport: SIPTransportServer
        private let reports = Mutex<[SIPCallEvent]>([])

        /// - Parameter untrusted: the far side presents a certificate from a CA the agent
        ///   does not trust.
        init(untrusted: Bool = false) throws {
            let ca = try TestCertificateAuthority.shared()
            farTransport = try SIPTransportServer(
                configuration: SIPTransportConfiguration(
                    listenAddress: .ipv4Loopback(port: 0),
                    tls: SIPTLSConfiguration(listenAddress: .ipv4Loopback(port: 0),
                                             certificateChainFile: untrusted ? ca.untrustedCertificateFile : ca.serverCertificateFile,
                                             privateKeyFile: untrusted ? ca.untrustedKeyFile : ca.serverKeyFile, caFile: ca.caFile)),
                delegate: farSide)
            let farPort = try #require(farTransport.tlsLocalAddress).port
            let hop = SIPHop(transport: .tls, host: .ipv4("127.0.0.1"), port: farPort)
            agent = SIPUserAgent(configuration: SIPGatewayConfiguration(routes: ["localhost": hop]), log: ServerLog(level: .error))
            transport = try SIPTransportServer(
                configuration: SIPTransportConfiguration(
                    listenAddress: .ipv4Loopback(port: 0),
                    tls: SIPTLSConfiguration(listenAddress: .ipv4Loopback(port: 0), certificateChainFile: ca.serverCertificateFile,
                                             privateKeyFile: ca.serverKeyFile, caFile: ca.caFile)),
                delegate: agent)
            try agent.attach(transport: transport)
            agent.attach { [weak self] event, _ in self?.record(event) }
        }

        deinit {
            transport.shutdown()
            farTransport.shutdown()
        }

        var events: [SIPCallEvent] { reports.withLock { $0 } }

        private func record(_ event: SIPCallEvent) { reports.withLock { $0.append(event) } }

        /// Waits up to five seconds for `count` reports.
        func waitForEvents(_ count: Int) -> [SIPCallEvent] {
            let deadline = ContinuousClock.now.advanced(by: .seconds(5))
            while events.count < count && ContinuousClock.now < deadline { usleep(2_000) }
            return events
        }

        /// The far side's answer to `request`, with a TLS Contact and an optional SDP.
        func answer(_ status: Int, to request: (message: SIPMessage, source: SIPMessageSource), sdp: String? = nil) throws {
            var response = try request.message.makeResponse(statusCode: status, toTag: "uas-tag")
            let port = farTransport.tlsLocalAddress?.port ?? 0
            try response.headers.add(name: "Contact", value: "<sip:bob@127.0.0.1:\(port);transport=tls>")
            if let sdp {
                try response.headers.add(name: "Content-Type", value: "application/sdp")
                response.body = Array(sdp.utf8)
            }
            farTransport.sendResponse(response, to: request.source)
        }
    }

    static func party(_ address: String) -> SIPParty { SIPParty(callID: "call-tls", destination: .uri(address)) }
    static let offer = CallOffer(callID: "call-tls", from: .user("alice"), headers: [:], video: false, time: 0,
                                 sdp: SIPUserAgentTests.offerSDP, displayName: "Alice")
    static let ended = CallNotification.ended(callID: "call-tls", cause: .hungUp, error: nil, details: CallTimes(startedTime: 0))

    @Test func aCallOverTLSIsInvitedAcknowledgedAndHungUpOverOneConnection() throws {
        let rig = try Rig()
        let ourTLSPort = try #require(rig.transport.tlsLocalAddress).port
        rig.agent.tell(Self.party("bob@localhost"), .offered(Self.offer))
        let invite = try #require(rig.farSide.waitFor(.invite))
        #expect(invite.source.transport == .tls)
        let via = try #require(try invite.message.topVia())
        #expect(via.transport == "TLS" && via.port == ourTLSPort)
        #expect(invite.message.headers.first("Contact") == "<sip:parleyd@127.0.0.1:\(ourTLSPort);transport=tls>")

        try rig.answer(200, to: invite, sdp: SIPUserAgentTests.answerSDP)
        let ack = try #require(rig.farSide.waitFor(.ack))
        #expect(ack.source.transport == .tls && ack.source.connectionID == invite.source.connectionID)
        #expect(ack.message.requestURI?.description == "sip:bob@127.0.0.1:\(try #require(rig.farTransport.tlsLocalAddress).port);transport=tls")
        let events = rig.waitForEvents(2)
        #expect(events.last == .answered(sdp: SIPUserAgentTests.answerSDP), "\(events)")

        rig.agent.tell(Self.party("bob@localhost"), Self.ended)
        let bye = try #require(rig.farSide.waitFor(.bye))
        #expect(bye.source.connectionID == invite.source.connectionID)
        try rig.answer(200, to: bye)
        let deadline = ContinuousClock.now.advanced(by: .seconds(5))
        while rig.agent.callCount != 0 && ContinuousClock.now < deadline { usleep(2_000) }
        #expect(rig.agent.callCount == 0)
        // One connection carried the whole call, verified once.
        #expect(rig.transport.statistics.connectionsOpened == 1 && rig.transport.statistics.tlsHandshakes == 1)
    }

    @Test func aSIPSAddressHasASIPSContact() throws {
        let rig = try Rig()
        let ourTLSPort = try #require(rig.transport.tlsLocalAddress).port
        rig.agent.tell(Self.party("sips:bob@localhost"), .offered(Self.offer))
        let invite = try #require(rig.farSide.waitFor(.invite))
        #expect(invite.message.requestURI?.description == "sips:bob@localhost")
        #expect(invite.message.headers.first("Contact") == "<sips:parleyd@127.0.0.1:\(ourTLSPort)>")
        try rig.answer(486, to: invite)
        #expect(rig.waitForEvents(2).last == .failed(status: 486, reason: "Busy Here"))
    }

    @Test func aFarSideWhoseCertificateDoesNotVerifyFailsTheCallAtOnceWithTheReason() throws {
        let rig = try Rig(untrusted: true)
        let started = ContinuousClock.now
        rig.agent.tell(Self.party("bob@localhost"), .offered(Self.offer))
        let events = rig.waitForEvents(2)
        // At once, not after timer B's 32 s.
        #expect(ContinuousClock.now - started < .seconds(5))
        guard case .failed(let status, let reason)? = events.last else {
            Issue.record("the call did not fail: \(events)")
            return
        }
        #expect(status == 503)
        #expect(reason.contains("rejected") && reason.contains("localhost"), "\(reason)")
        #expect(rig.farSide.received.isEmpty)
    }
}
