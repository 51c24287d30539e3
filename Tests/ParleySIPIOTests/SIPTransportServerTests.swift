import Glibc
import ParleyNetCore
import ParleyNetLinux
import ParleySIP
import ParleySIPIO
import Synchronization
import Testing

/// The transport on real sockets on loopback: answers and their Vias over UDP and TCP,
/// framing, keepalives, bad input, limits and timeouts, and what it sends.
@Suite struct SIPTransportServerTests {
    // MARK: Answers and their Vias

    @Test func optionsOverUDPGets200AtTheSourcePortWithReceivedAndRport() throws {
        let server = try startServer()
        defer { server.shutdown() }
        let peer = try UDPPeer()
        // The Via names another host and port: rport sends the answer to the packet's source.
        try peer.send(options(callID: "udp-1", via: "192.0.2.99:5099"), to: server.localAddress)
        let response = try #require(try peer.receiveMessage())
        #expect(response.statusCode == 200)
        let via = try #require(try response.topVia())
        #expect(via.received == .ipv4("127.0.0.1"))
        #expect(via.returnPort == .port(peer.address.port))
        #expect(via.branch == "z9hG4bK-udp-1")
        #expect(try response.callID() == "udp-1")
        // Counted once the socket took it, which may be just after the peer got it.
        #expect(eventually { server.statistics.received[.udp] == 1 && server.statistics.sent[.udp] == 1 })
    }

    @Test func withoutRportTheAnswerGoesToTheViaPort() throws {
        let server = try startServer()
        defer { server.shutdown() }
        let sender = try UDPPeer()
        let listener = try UDPPeer()
        // RFC 3261 §18.2.2: the sent-by's port, not the source's; same address, so no received.
        try sender.send(options(callID: "udp-2", via: "127.0.0.1:\(listener.address.port)", rport: false), to: server.localAddress)
        let response = try #require(try listener.receiveMessage())
        #expect(response.statusCode == 200)
        let via = try #require(try response.topVia())
        #expect(via.received == nil && via.returnPort == nil)
        #expect(try sender.receive(timeout: .milliseconds(200)) == nil)
        // A name as sent-by: received is added and the answer goes there, to the Via's port.
        try sender.send(options(callID: "udp-3", via: "client.example.test:\(listener.address.port)", rport: false), to: server.localAddress)
        let named = try #require(try listener.receiveMessage())
        #expect(try named.topVia()?.received == .ipv4("127.0.0.1"))
    }

    @Test func forcedReturnPortAnswersTheSourceWhateverTheVia() throws {
        let server = try startServer { $0.forceReturnPort = true }
        defer { server.shutdown() }
        let peer = try UDPPeer()
        try peer.send(options(callID: "udp-4", via: "192.0.2.99:5099", rport: false), to: server.localAddress)
        let response = try #require(try peer.receiveMessage())
        #expect(try response.topVia()?.returnPort == .port(peer.address.port))
    }

    @Test func optionsOverTCPGets200OnTheConnection() throws {
        let server = try startServer()
        defer { server.shutdown() }
        let peer = try TCPPeer(connectingTo: server.localAddress)
        try peer.write(options(callID: "tcp-1", via: "192.0.2.99:5099", transport: "TCP", rport: false))
        let response = try #require(try peer.nextMessage())
        #expect(response.statusCode == 200)
        let via = try #require(try response.topVia())
        #expect(via.transport == "TCP")
        #expect(via.received == .ipv4("127.0.0.1"))
        #expect(via.returnPort == nil)
        #expect(server.statistics.received[.tcp] == 1)
        #expect(server.connectionCount == 1)
    }

    @Test func ipv6OverBothTransports() throws {
        let server = try startServer(on: .ipv6Loopback(port: 0))
        defer { server.shutdown() }
        let peer = try UDPPeer(bindingTo: .ipv6Loopback(port: 0))
        try peer.send(options(callID: "v6-udp", via: "[2001:db8::1]:5060"), to: server.localAddress)
        let response = try #require(try peer.receiveMessage())
        #expect(try response.topVia()?.received == .ipv6("::1"))
        let stream = try TCPPeer(connectingTo: server.localAddress)
        try stream.write(options(callID: "v6-tcp", via: "[::1]:5060", transport: "TCP"))
        #expect(try stream.nextMessage()?.statusCode == 200)
    }

    @Test func inviteIsRefusedAndAckIgnored() throws {
        let server = try startServer()
        defer { server.shutdown() }
        let peer = try UDPPeer()
        let invite = options(callID: "call-1", via: "127.0.0.1:\(peer.address.port)")
            .replacingOptions(with: "INVITE")
        try peer.send(invite, to: server.localAddress)
        let response = try #require(try peer.receiveMessage())
        #expect(response.statusCode == 403)
        try peer.send(invite.replacingOptions(of: "INVITE", with: "ACK"), to: server.localAddress)
        #expect(try peer.receive(timeout: .milliseconds(300)) == nil)
        #expect(eventually { server.statistics.received[.udp] == 2 && server.statistics.sent[.udp] == 1 })
    }

    // MARK: Framing and keepalives

    @Test func tcpFramingAcrossSplitWritesAndPipelinedMessages() throws {
        let server = try startServer()
        defer { server.shutdown() }
        let peer = try TCPPeer(connectingTo: server.localAddress)
        // Byte by byte: every read ends mid-message.
        for byte in options(callID: "split-1", via: "127.0.0.1:5060", transport: "TCP") {
            try peer.write([byte])
        }
        #expect(try peer.nextMessage().map { try $0.callID() } == "split-1")
        // Uneven pieces across the boundary of two messages, the second with a body.
        let body = "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 4000 RTP/AVP 0\r\n"
        let withBody = options(callID: "split-3", via: "127.0.0.1:5060", transport: "TCP")
            .replacingText("Content-Length: 0\r\n\r\n", with: "Content-Type: application/sdp\r\nContent-Length: \(body.utf8.count)\r\n\r\n")
            + Array(body.utf8)
        let stream = options(callID: "split-2", via: "127.0.0.1:5060", transport: "TCP") + withBody
        var offset = 0
        for size in [7, 300, 1, 64, 500, 3] where offset < stream.count {
            let end = min(stream.count, offset + size)
            try peer.write(Array(stream[offset..<end]))
            offset = end
            usleep(2_000)
        }
        try peer.write(Array(stream[offset...]))
        #expect(try peer.nextMessage().map { try $0.callID() } == "split-2")
        #expect(try peer.nextMessage().map { try $0.callID() } == "split-3")
    }

    @Test func keepalivesAreAnsweredOverTCPAndIgnoredOverUDP() throws {
        let server = try startServer()
        defer { server.shutdown() }
        let peer = try TCPPeer(connectingTo: server.localAddress)
        // RFC 5626 §4.4.1: a double CRLF (a ping) gets a single CRLF (a pong).
        try peer.write(Array("\r\n\r\n".utf8))
        #expect(try peer.next() == .keepalive)
        // A ping split in two writes is still one ping.
        try peer.write(Array("\r\n".utf8))
        usleep(50_000)
        try peer.write(Array("\r\n".utf8))
        #expect(try peer.next() == .keepalive)
        let datagrams = try UDPPeer()
        try datagrams.send(Array("\r\n\r\n".utf8), to: server.localAddress)
        #expect(try datagrams.receive(timeout: .milliseconds(200)) == nil)
        #expect(eventually { server.statistics.keepalives == 3 })
        #expect(server.statistics.received[.udp] == 0)
    }

    // MARK: Bad input

    @Test func aBadRequestIsAnsweredWithItsReason() throws {
        let server = try startServer()
        defer { server.shutdown() }
        let peer = try UDPPeer()
        let bad = options(callID: "bad-1", via: "127.0.0.1:5060").replacingText("CSeq: 1 OPTIONS", with: "CSeq: 1 INVITE")
        try peer.send(bad, to: server.localAddress)
        let response = try #require(try peer.receiveMessage())
        #expect(response.statusCode == 400)
        #expect(response.reasonPhrase == "CSeq Method Mismatch")
        #expect(try response.topVia()?.returnPort == .port(peer.address.port))
        #expect(try response.to()?.tag != nil)
        #expect(server.statistics.rejected == 1)
        // Garbage without a Via is dropped and counted.
        try peer.send(Array("hello, server\r\n\r\n".utf8), to: server.localAddress)
        #expect(try peer.receive(timeout: .milliseconds(200)) == nil)
        #expect(eventually { server.statistics.dropped[.malformed] == 1 })
    }

    @Test func aStreamThatLosesItsFramingClosesThatConnectionOnly() throws {
        let server = try startServer()
        defer { server.shutdown() }
        let bystander = try TCPPeer(connectingTo: server.localAddress)
        let peer = try TCPPeer(connectingTo: server.localAddress)
        let noLength = options(callID: "ncl", via: "127.0.0.1:5060", transport: "TCP").replacingText("Content-Length: 0\r\n", with: "")
        try peer.write(noLength)
        let response = try #require(try peer.nextMessage())
        #expect(response.statusCode == 400)
        #expect(response.reasonPhrase == "Missing Content-Length")
        #expect(try peer.next() == .closed)
        try bystander.write(options(callID: "still-here", via: "127.0.0.1:5060", transport: "TCP"))
        #expect(try bystander.nextMessage()?.statusCode == 200)
    }

    @Test func responsesNobodyWaitsForAreCounted() throws {
        let server = try startServer()
        defer { server.shutdown() }
        let peer = try UDPPeer()
        let response = """
            SIP/2.0 200 OK\r
            Via: SIP/2.0/UDP 127.0.0.1:5060;branch=z9hG4bKnobody\r
            To: <sip:a@example.test>;tag=2\r
            From: <sip:b@example.test>;tag=1\r
            Call-ID: nobody\r
            CSeq: 1 OPTIONS\r
            Content-Length: 0\r
            \r

            """
        try peer.send(Array(response.utf8), to: server.localAddress)
        #expect(eventually { server.statistics.dropped[.noTaker] == 1 })
        #expect(try peer.receive(timeout: .milliseconds(100)) == nil)
    }

    // MARK: Limits and timeouts

    @Test func connectionsPerSourceAreLimited() throws {
        let server = try startServer { $0.maxConnectionsPerSource = 2 }
        defer { server.shutdown() }
        let first = try TCPPeer(connectingTo: server.localAddress)
        let second = try TCPPeer(connectingTo: server.localAddress)
        #expect(eventually { server.statistics.connectionsAccepted == 2 })
        let third = try TCPPeer(connectingTo: server.localAddress)
        #expect(try third.next() == .closed)
        #expect(server.statistics.connectionsRefused == 1)
        for (index, peer) in [first, second].enumerated() {
            try peer.write(options(callID: "limit-\(index)", via: "127.0.0.1:5060", transport: "TCP"))
            #expect(try peer.nextMessage()?.statusCode == 200)
        }
    }

    @Test func idleConnectionsAndIncompleteMessagesAreClosed() throws {
        let server = try startServer {
            $0.idleTimeout = .milliseconds(300)
            $0.messageTimeout = .milliseconds(200)
        }
        defer { server.shutdown() }
        let idle = try TCPPeer(connectingTo: server.localAddress)
        let slow = try TCPPeer(connectingTo: server.localAddress)
        let message = options(callID: "slow", via: "127.0.0.1:5060", transport: "TCP")
        try slow.write(Array(message.prefix(40)))
        // Closed by the server's timers, long before these waits end.
        #expect(try slow.next(timeout: .seconds(3)) == .closed)
        #expect(try idle.next(timeout: .seconds(3)) == .closed)
        #expect(eventually { server.statistics.connectionTimeouts == 2 && server.statistics.connectionsOpen == 0 })
    }

    // MARK: Sending

    @Test func aLargeRequestGoesOverTCPWithItsViaChanged() throws {
        let server = try startServer()
        defer { server.shutdown() }
        // The destination listens on UDP and TCP on one port, as RFC 3261 §18.2.1 asks.
        let datagrams = try UDPPeer()
        let listener = try TCPListener(bindingTo: datagrams.address)
        defer { listener.close() }
        let large = try largeRequest(callID: "large-1", server: server, size: 1500)
        server.send(large, to: datagrams.address, transport: .udp)
        let accepted = try #require(try acceptWithin(listener, timeout: .seconds(5)))
        let stream = TCPPeer(socket: accepted)
        let received = try #require(try stream.nextMessage())
        #expect(try received.callID() == "large-1")
        #expect(try received.topVia()?.transport == "TCP")
        #expect(received.serialized().count > 1300)
        // A second request reuses the connection.
        server.send(try largeRequest(callID: "large-2", server: server, size: 1500), to: datagrams.address, transport: .udp)
        #expect(try stream.nextMessage().map { try $0.callID() } == "large-2")
        #expect(server.statistics.connectionsOpened == 1)
        // The answer comes back on that connection and reaches the delegate (here: no taker).
        try stream.write(try received.makeResponse(statusCode: 200, toTag: "far").serialized())
        #expect(eventually { server.statistics.dropped[.noTaker] == 1 })
        // Not allowed TCP, or small: UDP.
        server.send(large, to: datagrams.address, transport: .udp, tcpAllowed: false)
        let overUDP = try #require(try datagrams.receiveMessage())
        #expect(try overUDP.topVia()?.transport == "UDP")
        server.send(try largeRequest(callID: "small", server: server, size: 600), to: datagrams.address, transport: .udp)
        #expect(try datagrams.receiveMessage().map { try $0.callID() } == "small")
    }

    @Test func aLargeRequestFallsBackToUDPWhenTCPIsRefused() throws {
        let server = try startServer()
        defer { server.shutdown() }
        // Nothing listens on TCP there: the connect is refused (RFC 3261 §18.1.1: retry over UDP).
        let datagrams = try UDPPeer()
        server.send(try largeRequest(callID: "fallback", server: server, size: 1500), to: datagrams.address, transport: .udp)
        let received = try #require(try datagrams.receiveMessage())
        #expect(try received.callID() == "fallback")
        #expect(try received.topVia()?.transport == "UDP")
        #expect(eventually { server.statistics.connectionsOpen == 0 })
    }

    @Test func aResponseAfterItsConnectionClosedOpensOneToTheVia() throws {
        let recorder = RecordingDelegate()
        let server = try startServer(delegate: recorder)
        defer { server.shutdown() }
        // The peer's own listening port, which its Via names.
        let listener = try TCPListener(bindingTo: .ipv4Loopback(port: 0))
        defer { listener.close() }
        do {
            let client = try TCPPeer(connectingTo: server.localAddress)
            try client.write(options(callID: "late", via: "127.0.0.1:\(listener.localAddress.port)", transport: "TCP", rport: false))
            #expect(eventually { recorder.count == 1 })
        }
        #expect(eventually { server.connectionCount == 0 })
        let (request, source) = try #require(recorder.received.first)
        #expect(source.transport == .tcp && source.connectionID != nil)
        // RFC 3261 §18.2.2: the connection is gone, so one is opened to the sent-by port.
        server.sendResponse(try request.makeResponse(statusCode: 200, toTag: "late"), to: source)
        let accepted = try #require(try acceptWithin(listener, timeout: .seconds(5)))
        let stream = TCPPeer(socket: accepted)
        #expect(try stream.nextMessage().map { try $0.callID() } == "late")
        #expect(server.statistics.connectionsOpened == 1)
    }

    private func largeRequest(callID: String, server: SIPTransportServer, size: Int) throws -> SIPMessage {
        let text = String(decoding: options(callID: callID, via: "\(server.localAddress)"), as: UTF8.self)
        var message = try SIPMessage(datagram: Array(text.utf8))
        let padding = max(0, size - message.serialized().count - 12)
        try message.headers.add(name: "X-Padding", value: String(repeating: "p", count: padding))
        return message
    }

    private func acceptWithin(_ listener: TCPListener, timeout: Duration) throws -> TCPSocket? {
        guard waitReadable(listener.fileDescriptor, timeout: timeout) else { return nil }
        return try listener.accept()
    }
}

/// A delegate that answers nothing and keeps what it got, for tests that answer later.
final class RecordingDelegate: SIPTransportDelegate {
    private let messages = Mutex<[(SIPMessage, SIPMessageSource)]>([])

    var received: [(SIPMessage, SIPMessageSource)] { messages.withLock { $0 } }
    var count: Int { messages.withLock { $0.count } }

    func transport(_ transport: SIPTransportServer, received message: SIPMessage, from source: SIPMessageSource) -> SIPDelivery {
        messages.withLock { $0.append((message, source)) }
        return .taken
    }
}
