import Glibc
import ParleyCrypto
import ParleyNetCore
import ParleyNetLinux
import ParleySIP
import ParleyTestSupport
import Testing

@testable import ParleySIPIO

/// SIP over TLS (RFC 3261 §26.2) on real sockets on loopback, with certificates made at
/// test time (`TestCertificateAuthority`: a CA, a server certificate for localhost and
/// 127.0.0.1, an expired one, one from a CA nobody trusts): the TLS listener against a
/// TLS client, two transports talking TLS both ways, certificates refused, handshakes
/// that stall and garbage, each closing that connection alone.
@Suite struct SIPTLSTransportTests {
    /// The TLS settings of a test server: the trusted server certificate (or another pair),
    /// the test CA as trust store.
    private func tls(_ ca: TestCertificateAuthority, certificate: String? = nil, key: String? = nil,
                     handshakeTimeout: Duration = .seconds(10)) -> SIPTLSConfiguration {
        SIPTLSConfiguration(listenAddress: .ipv4Loopback(port: 0), certificateChainFile: certificate ?? ca.serverCertificateFile,
                            privateKeyFile: key ?? ca.serverKeyFile, caFile: ca.caFile, handshakeTimeout: handshakeTimeout)
    }

    private func request(_ callID: String, from server: SIPTransportServer) throws -> SIPMessage {
        let port = server.tlsLocalAddress?.port ?? 5061
        return try SIPMessage(datagram: options(callID: callID, via: "127.0.0.1:\(port)", transport: "TLS"))
    }

    // MARK: The listener

    @Test func optionsOverTLSGets200OnTheConnection() throws {
        let ca = try TestCertificateAuthority.shared()
        let server = try startServer { $0.tls = tls(ca) }
        defer { server.shutdown() }
        let address = try #require(server.tlsLocalAddress)
        #expect(address.port != server.localAddress.port)
        let peer = try TLSPeer(connectingTo: address, caFile: ca.caFile)
        try peer.write(options(callID: "tls-1", via: "client.example.test:5061", transport: "TLS"))
        let response = try #require(try peer.nextMessage())
        #expect(response.statusCode == 200)
        let via = try #require(try response.topVia())
        #expect(via.transport == "TLS")
        #expect(via.received == .ipv4("127.0.0.1"))
        #expect(via.returnPort == .port(peer.socket.localAddress.port))
        // Pipelined and split across records: framed on the decrypted stream as over TCP.
        let two = options(callID: "tls-2", via: "127.0.0.1:5061", transport: "TLS") + options(callID: "tls-3", via: "127.0.0.1:5061", transport: "TLS")
        try peer.write(Array(two[..<50]))
        try peer.write(Array(two[50...]))
        #expect(try peer.nextMessage()?.callID() == "tls-2")
        #expect(try peer.nextMessage()?.callID() == "tls-3")
        #expect(eventually {
            let statistics = server.statistics
            return statistics.received[.tls] == 3 && statistics.sent[.tls] == 3 && statistics.tlsHandshakes == 1
                && statistics.received[.tcp] == 0
        })
    }

    @Test func theListenerNeedsUsableCertificateFiles() throws {
        let ca = try TestCertificateAuthority.shared()
        // A key that is not the certificate's.
        let mismatched = #expect(throws: SIPTransportError.self) {
            _ = try startServer { $0.tls = tls(ca, certificate: ca.serverCertificateFile, key: ca.untrustedKeyFile) }
        }
        let missing = #expect(throws: SIPTransportError.self) {
            _ = try startServer { $0.tls = tls(ca, certificate: "/nonexistent/cert.pem") }
        }
        for error in [mismatched, missing] {
            guard case .tls? = error else {
                Issue.record("\(String(describing: error)) is not a TLS configuration error")
                continue
            }
        }
    }

    // MARK: Two transports, both ways

    @Test func twoTransportsTalkTLSBothWaysOverOneConnectionEach() throws {
        let ca = try TestCertificateAuthority.shared()
        let aliceRecorder = TLSRecordingDelegate(answers: true)
        let bobRecorder = TLSRecordingDelegate(answers: true)
        let alice = try startServer({ $0.tls = tls(ca) }, delegate: aliceRecorder)
        defer { alice.shutdown() }
        let bob = try startServer({ $0.tls = tls(ca) }, delegate: bobRecorder)
        defer { bob.shutdown() }
        let bobAddress = try #require(bob.tlsLocalAddress)

        // Alice to Bob, verifying Bob as "localhost"; Bob answers on that connection.
        alice.send(try request("a-to-b-1", from: alice), to: bobAddress, transport: .tls, serverName: "localhost")
        alice.send(try request("a-to-b-2", from: alice), to: bobAddress, transport: .tls, serverName: "localhost")
        #expect(eventually { aliceRecorder.received.count == 2 })
        #expect(aliceRecorder.received.allSatisfy { $0.message.statusCode == 200 && $0.source.transport == .tls })
        #expect(bobRecorder.received.map { $0.source.transport } == [.tls, .tls])
        let stamped = try #require(try bobRecorder.received.first?.message.topVia())
        #expect(stamped.transport == "TLS" && stamped.received == .ipv4("127.0.0.1"))
        // The second request reused the first connection.
        #expect(alice.statistics.connectionsOpened == 1 && bob.statistics.connectionsAccepted == 1)

        // Bob to Alice, verifying her IP address: a connection of his own.
        let aliceAddress = try #require(alice.tlsLocalAddress)
        bob.send(try request("b-to-a", from: bob), to: aliceAddress, transport: .tls)
        #expect(eventually { bobRecorder.received.contains { $0.message.statusCode == 200 } })
        #expect(aliceRecorder.received.contains { (try? $0.message.callID()) == "b-to-a" && $0.source.transport == .tls })
        #expect(bob.statistics.connectionsOpened == 1)
        #expect(alice.statistics.tlsHandshakes == 2 && bob.statistics.tlsHandshakes == 2)
        #expect(aliceRecorder.undelivered.isEmpty && bobRecorder.undelivered.isEmpty)
    }

    // MARK: Certificates refused

    @Test func aPeerCertificateThatDoesNotVerifyIsRefusedAndTheMessageReported() throws {
        let ca = try TestCertificateAuthority.shared()
        let recorder = TLSRecordingDelegate()
        let client = try startServer({ $0.tls = tls(ca) }, delegate: recorder)
        defer { client.shutdown() }
        let untrustedRecorder = TLSRecordingDelegate(answers: true)
        let untrusted = try startServer({ $0.tls = tls(ca, certificate: ca.untrustedCertificateFile, key: ca.untrustedKeyFile) },
                                        delegate: untrustedRecorder)
        defer { untrusted.shutdown() }
        let expired = try startServer { $0.tls = tls(ca, certificate: ca.expiredCertificateFile, key: ca.expiredKeyFile) }
        defer { expired.shutdown() }
        let trusted = try startServer { $0.tls = tls(ca) }
        defer { trusted.shutdown() }

        client.send(try request("untrusted", from: client), to: try #require(untrusted.tlsLocalAddress), transport: .tls)
        client.send(try request("expired", from: client), to: try #require(expired.tlsLocalAddress), transport: .tls)
        // The right CA, the wrong name.
        client.send(try request("misnamed", from: client), to: try #require(trusted.tlsLocalAddress), transport: .tls,
                    serverName: "pbx.example.test")
        #expect(eventually { recorder.undelivered.count == 3 })
        let reasons = Dictionary(uniqueKeysWithValues: recorder.undelivered.map { ((try? $0.message.callID()) ?? "?", $0.reason) })
        #expect(reasons["untrusted"]?.contains("rejected") == true, "\(reasons)")
        #expect(reasons["expired"]?.contains("expired") == true, "\(reasons)")
        #expect(reasons["misnamed"]?.contains("pbx.example.test") == true, "\(reasons)")
        #expect(untrustedRecorder.received.isEmpty && recorder.received.isEmpty)
        #expect(client.statistics.tlsHandshakeFailures == 3 && client.statistics.tlsHandshakes == 0)
        #expect(client.statistics.dropped[.sendFailed] == 3)
        #expect(eventually { client.connectionCount == 0 })
    }

    @Test func withoutTLSConfiguredATLSSendIsReportedAtOnce() throws {
        let recorder = TLSRecordingDelegate()
        let server = try startServer(delegate: recorder)
        defer { server.shutdown() }
        #expect(server.tlsLocalAddress == nil)
        server.send(try request("no-tls", from: server), to: .ipv4Loopback(port: 5061), transport: .tls)
        #expect(eventually { recorder.undelivered.count == 1 })
        #expect(recorder.undelivered.first?.reason.contains("not configured") == true)
        #expect(server.statistics.dropped[.unroutable] == 1)
    }

    // MARK: Handshakes that stall, garbage

    @Test func aHandshakeThatNeverFinishesIsClosedAtTheTimeoutWhileOthersAreServed() throws {
        let ca = try TestCertificateAuthority.shared()
        let server = try startServer { $0.tls = tls(ca, handshakeTimeout: .seconds(1)) }
        defer { server.shutdown() }
        let address = try #require(server.tlsLocalAddress)
        let started = ContinuousClock.now
        // One says nothing; one sends half a ClientHello and stops.
        let silent = try TCPSocket.connect(to: address, timeout: .seconds(5))
        defer { silent.close() }
        let halfway = try TCPSocket.connect(to: address, timeout: .seconds(5))
        defer { halfway.close() }
        let hello = try TLSConnection(context: try TLSContext.client(caFile: ca.caFile), serverName: "127.0.0.1").start().send
        _ = try halfway.write(Array(hello[..<(hello.count / 2)]))
        // Meanwhile a whole client is served.
        let peer = try TLSPeer(connectingTo: address, caFile: ca.caFile)
        try peer.write(options(callID: "meanwhile", via: "127.0.0.1:5061", transport: "TLS"))
        #expect(try peer.nextMessage()?.statusCode == 200)

        #expect(waitForEnd(of: silent, within: .seconds(5)))
        #expect(waitForEnd(of: halfway, within: .seconds(5)))
        #expect(ContinuousClock.now - started >= .milliseconds(950))
        #expect(eventually {
            let statistics = server.statistics
            return statistics.tlsHandshakeFailures == 2 && statistics.connectionTimeouts == 2 && statistics.tlsHandshakes == 1
        })
        #expect(eventually { server.connectionCount == 1 })
    }

    @Test func garbageBeforeOrAfterTheHandshakeClosesThatConnectionAlone() throws {
        let ca = try TestCertificateAuthority.shared()
        let server = try startServer { $0.tls = tls(ca) }
        defer { server.shutdown() }
        let address = try #require(server.tlsLocalAddress)
        let bystander = try TLSPeer(connectingTo: address, caFile: ca.caFile)

        // Plain SIP on the TLS port: no handshake at all.
        let plain = try TCPPeer(connectingTo: address)
        try plain.write(options(callID: "plain", via: "127.0.0.1:5061", transport: "TCP"))
        #expect(waitForEnd(of: plain.socket, within: .seconds(5)))
        // Random bytes: the same.
        let noise = try TCPPeer(connectingTo: address)
        var generator = SeededGenerator(seed: 7)
        try noise.write((0..<2000).map { _ in UInt8.random(in: 0...255, using: &generator) })
        #expect(waitForEnd(of: noise.socket, within: .seconds(5)))
        // A record that does not decrypt after a good handshake.
        let corrupt = try TLSPeer(connectingTo: address, caFile: ca.caFile)
        try corrupt.writeRaw([0x17, 0x03, 0x03, 0x00, 0x20] + [UInt8](repeating: 0x41, count: 32))
        #expect(corrupt.isClosedByServer(within: .seconds(5)))

        try bystander.write(options(callID: "still-here", via: "127.0.0.1:5061", transport: "TLS"))
        #expect(try bystander.nextMessage()?.statusCode == 200)
        #expect(eventually {
            let statistics = server.statistics
            return statistics.tlsHandshakeFailures == 2 && statistics.tlsHandshakes == 2 && statistics.dropped[.malformed] == 1
        }, "\(server.statistics)")
        // Each closed gracefully (its alert or close_notify first), so it may linger a moment.
        #expect(eventually { server.connectionCount == 1 })
    }

    // MARK: Responses

    @Test func aTLSResponseWhoseConnectionClosedOpensATLSConnectionToTheVia() throws {
        let source = SIPMessageSource(transport: .tls, remoteAddress: try SocketAddress(parsing: "203.0.113.9:40001"),
                                      localAddress: .ipv4Loopback(port: 5061), connectionID: 7)
        func route(_ via: String, open: Bool) throws -> SIPResponseRoute {
            SIPResponseRoute.resolve(topVia: try SIPVia(parsing: via), source: source, connectionOpen: open)
        }
        #expect(try route("SIP/2.0/TLS pbx.example.test;branch=z9hG4bK1;received=203.0.113.9", open: true) == .connection(7))
        // RFC 3261 §18.2.2 with §26.2: the received address, the sent-by port (5061 when
        // none), and the sent-by host as the name the certificate must carry.
        #expect(try route("SIP/2.0/TLS pbx.example.test;branch=z9hG4bK1;received=203.0.113.9", open: false)
                == .secureStream(try SocketAddress(parsing: "203.0.113.9:5061"), serverName: "pbx.example.test"))
        #expect(try route("SIP/2.0/TLS 198.51.100.7:5071;branch=z9hG4bK1", open: false)
                == .secureStream(try SocketAddress(parsing: "198.51.100.7:5071"), serverName: "198.51.100.7"))
    }

    @Test func aTLSResponseFollowsItsConnectionOrANewOneVerifiedForTheVia() throws {
        let ca = try TestCertificateAuthority.shared()
        let recorder = TLSRecordingDelegate()
        let server = try startServer({ $0.tls = tls(ca) }, delegate: recorder)
        defer { server.shutdown() }
        // The peer is a transport too, listening where its Via says.
        let peerRecorder = TLSRecordingDelegate()
        let peerServer = try startServer({ $0.tls = tls(ca) }, delegate: peerRecorder)
        defer { peerServer.shutdown() }
        let peerPort = try #require(peerServer.tlsLocalAddress).port
        do {
            let client = try TLSPeer(connectingTo: try #require(server.tlsLocalAddress), caFile: ca.caFile)
            try client.write(options(callID: "late", via: "localhost:\(peerPort)", transport: "TLS", rport: false))
            #expect(eventually { recorder.received.count == 1 })
        }
        #expect(eventually { server.connectionCount == 0 })
        let (request, source) = try #require(recorder.received.first)
        server.sendResponse(try request.makeResponse(statusCode: 200, toTag: "late"), to: source)
        #expect(eventually { peerRecorder.received.count == 1 })
        #expect(peerRecorder.received.first?.message.statusCode == 200)
        #expect(server.statistics.connectionsOpened == 1 && server.statistics.sent[.tls] == 1)
    }
}
