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

/// Calls in over SIP through the user agent on a real loopback transport: which INVITEs it
/// takes (from its trunk's address, to a number with a rule), what the engine is offered,
/// and the final responses of refusals.
@Suite(.serialized) struct SIPInboundAgentTests {
    static let number = "+46700000099"
    static let sdp = "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 40000 RTP/AVP 0\r\n"

    final class Rig: @unchecked Sendable {
        let agent: SIPUserAgent
        let transport: SIPTransportServer
        private let offers = Mutex<[InboundSIPCall]>([])

        init(peers: [String: String] = [:], peerAlgorithms: [SIPDigestAlgorithm] = [.md5]) throws {
            let trunk = SIPHop(transport: .udp, host: .ipv4("127.0.0.1"), port: 5060)
            var configuration = SIPGatewayConfiguration(routes: [:])
            configuration.trunk = SIPGatewayConfiguration.Trunk(hop: trunk)
            configuration.peers = peers
            configuration.peerAlgorithms = peerAlgorithms
            let numbers = try NumberRouteTable([NumberRoute(number: SIPInboundAgentTests.number, applicationKey: "app", target: .user("bob"))])
            agent = SIPUserAgent(configuration: configuration, numbers: numbers, log: ServerLog(level: .error))
            transport = try SIPTransportServer(configuration: SIPTransportConfiguration(listenAddress: .ipv4Loopback(port: 0)), delegate: agent)
            try agent.attach(transport: transport)
            agent.attachInbound { [weak self] call in self?.offers.withLock { $0.append(call) } }
        }

        deinit { transport.shutdown() }

        var offered: [InboundSIPCall] { offers.withLock { $0 } }

        func waitForOffer() -> InboundSIPCall? {
            let deadline = ContinuousClock.now.advanced(by: .seconds(5))
            while offered.isEmpty && ContinuousClock.now < deadline { usleep(2_000) }
            return offered.first
        }
    }

    /// A phone at `host` sending INVITEs.
    struct Phone {
        let socket: UDPSocket
        init(host: [UInt8]) throws {
            socket = try UDPSocket(bindingTo: try #require(SocketAddress(hostBytes: host, port: 0)))
        }

        static func requestURI(_ number: String, rig: Rig) -> String {
            "sip:\(number)@127.0.0.1:\(rig.transport.localAddress.port)"
        }

        func invite(to number: String, callID: String, rig: Rig, cseq: Int = 1, authorization: String? = nil) throws {
            let port = socket.localAddress.port
            let host = socket.localAddress.hostDescription
            let text = "INVITE \(Self.requestURI(number, rig: rig)) SIP/2.0\r\n"
                + "Via: SIP/2.0/UDP \(host):\(port);branch=z9hG4bK-\(callID)-\(cseq)\r\n"
                + "Max-Forwards: 70\r\nFrom: <sip:+4615550101@\(host)>;tag=phone\r\nTo: <sip:\(number)@127.0.0.1>\r\n"
                + "Call-ID: \(callID)\r\nCSeq: \(cseq) INVITE\r\nContact: <sip:+4615550101@\(host):\(port)>\r\n"
                + (authorization.map { "Authorization: \($0)\r\n" } ?? "")
                + "X-Account: 42\r\nContent-Type: application/sdp\r\nContent-Length: \(SIPInboundAgentTests.sdp.utf8.count)\r\n\r\n"
                + SIPInboundAgentTests.sdp
            try socket.send(Array(text.utf8), to: rig.transport.localAddress)
        }

        /// The status codes received within `seconds`, in order.
        func statuses(until last: Int, seconds: Double = 5) throws -> [Int] {
            try responses(until: last, seconds: seconds).compactMap(\.statusCode)
        }

        /// The responses received within `seconds`, in order, up to one with status `last`.
        func responses(until last: Int, seconds: Double = 5) throws -> [SIPMessage] {
            var statuses: [SIPMessage] = []
            var buffer = [UInt8](repeating: 0, count: 65_536)
            let deadline = ContinuousClock.now.advanced(by: .milliseconds(Int(seconds * 1000)))
            while ContinuousClock.now < deadline, statuses.last?.statusCode != last {
                if let (count, _) = try buffer.withUnsafeMutableBytes({ try socket.receive(into: $0) }),
                   let message = try? SIPMessage(datagram: buffer[..<count]), message.statusCode != nil {
                    statuses.append(message)
                } else {
                    usleep(2_000)
                }
            }
            return statuses
        }
    }

    @Test func anInviteFromTheTrunkToARuledNumberIsOfferedAndARefusalBecomesItsFinalStatus() throws {
        let rig = try Rig()
        let phone = try Phone(host: [127, 0, 0, 1])
        try phone.invite(to: Self.number, callID: "in-1", rig: rig)
        let offer = try #require(rig.waitForOffer())
        #expect(offer.applicationKey == "app" && offer.target == .user("bob"))
        #expect(offer.party.address == .phone("+4615550101"))
        #expect(offer.headers == ["X-Account": "42"])
        #expect(offer.offer == Self.sdp)
        rig.agent.tell(offer.party, .ended(
            callID: offer.party.callID, cause: .error, error: .init(code: .destinationNotFound, message: "no bob"),
            details: CallTimes(startedTime: 0, endedTime: 0)))
        #expect(try phone.statuses(until: 404) == [100, 404])
    }

    @Test func anInviteToANumberWithoutARuleIsNotFound() throws {
        let rig = try Rig()
        let phone = try Phone(host: [127, 0, 0, 1])
        try phone.invite(to: "+46700000042", callID: "in-2", rig: rig)
        #expect(try phone.statuses(until: 404) == [100, 404])
        #expect(rig.offered.isEmpty)
    }

    @Test func anInviteFromAHostThatIsNotTheTrunkIsForbidden() throws {
        let rig = try Rig()
        let stranger = try Phone(host: [127, 0, 0, 2])
        try stranger.invite(to: Self.number, callID: "in-3", rig: rig)
        #expect(try stranger.statuses(until: 403) == [403])
        #expect(rig.offered.isEmpty)
    }

    @Test func aSIPPeerAnywhereIsChallengedAndTakenWithItsCredentials() throws {
        let rig = try Rig(peers: ["pbx1": "s3cret-pbx"], peerAlgorithms: [.sha256, .md5])
        let peer = try Phone(host: [127, 0, 0, 2])
        try peer.invite(to: Self.number, callID: "in-4", rig: rig)
        let challenge = try #require(try peer.responses(until: 401).last)
        #expect(challenge.statusCode == 401)
        let values = challenge.headers.values("WWW-Authenticate")
        #expect(values.count == 2)
        #expect(values.first?.contains("SHA-256") == true && values.first?.contains(#"realm="parley""#) == true)
        #expect(rig.offered.isEmpty)

        // The wrong password: 403, nothing offered.
        var random = SystemRandomNumberGenerator()
        var wrong = try SIPDigestClient(username: "pbx1", password: "guess")
        let uri = Phone.requestURI(Self.number, rig: rig)
        let guessed = try wrong.answer(challengeValues: values, method: "INVITE", requestURI: uri, using: &random)
        try peer.invite(to: Self.number, callID: "in-4", rig: rig, cseq: 2, authorization: try #require(guessed.first).serialized())
        #expect(try peer.statuses(until: 403) == [403])
        #expect(rig.offered.isEmpty)

        // The right one: taken as a call in from the trunk is.
        var client = try SIPDigestClient(username: "pbx1", password: "s3cret-pbx")
        let answered = try client.answer(challengeValues: values, method: "INVITE", requestURI: uri, using: &random)
        try peer.invite(to: Self.number, callID: "in-5", rig: rig, cseq: 3, authorization: try #require(answered.first).serialized())
        let offer = try #require(rig.waitForOffer())
        #expect(offer.target == .user("bob") && offer.applicationKey == "app")
        #expect(try peer.statuses(until: 100) == [100])

        // Without peers a stranger is refused outright, as before (the test above).
    }
}
