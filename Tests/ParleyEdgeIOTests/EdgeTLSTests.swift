import Testing
import Glibc
import ParleyNetCore
import ParleyCrypto
import ParleyTestSupport
@testable import ParleyEdgeIO
@testable import ParleyWebSocketClientIO

@Suite struct EdgeTLSTests {
    let authority: TestCertificateAuthority
    let trusting: TLSContext

    init() throws {
        authority = try TestCertificateAuthority.shared()
        trusting = try TLSContext.client(caFile: authority.caFile)
    }

    private func makeTLSServer(certificate: String? = nil, key: String? = nil, handshakeTimeout: Duration = .seconds(10)) throws -> EdgeServer {
        try makeServer { configuration in
            configuration.handshakeTimeout = handshakeTimeout
            configuration.tls = EdgeTLSConfiguration(listenAddresses: [.ipv4Loopback(port: 0), .ipv6Loopback(port: 0)],
                                                     certificateChainFile: certificate ?? authority.serverCertificateFile,
                                                     privateKeyFile: key ?? authority.serverKeyFile)
        }
    }

    /// One HTTP/1.1 request over TLS; the whole response (the server closes after it).
    private func httpsRequest(_ address: SocketAddress, _ request: String, serverName: String = "localhost") throws -> String {
        let deadline = ContinuousClock.now.advanced(by: .seconds(5))
        let stream = try WebSocketClientStream(connectingTo: address, tls: trusting, serverName: serverName, deadline: deadline)
        try stream.writeAll(Array(request.utf8), deadline: deadline)
        var response: [UInt8] = []
        // Bounded by the deadline and the count.
        for _ in 0..<1000 {
            guard let chunk = try stream.readSome(deadline: deadline), !chunk.isEmpty else { break }
            response += chunk
        }
        return String(decoding: response, as: UTF8.self)
    }

    @Test func aWebSocketEchoesOverTLSBesideThePlainListener() throws {
        let server = try makeTLSServer()
        defer { server.shutdown() }
        #expect(server.tlsLocalAddresses.count == 2)
        for address in server.tlsLocalAddresses {
            let client = try WebSocketClient(connectingTo: address, path: "/ws", timeout: .seconds(5), tls: trusting)
            #expect(client.isTLS)
            for index in 0..<20 {
                let text = String(repeating: "x", count: index * 3000)
                try client.send(.text(text))
                #expect(try client.receive(timeout: .seconds(5)) == .message(.text(text)))
            }
            client.close()
        }
        let plain = try WebSocketClient(connectingTo: server.localAddresses[0], path: "/ws", timeout: .seconds(5))
        try plain.send(.text("plain"))
        #expect(try plain.receive(timeout: .seconds(5)) == .message(.text("plain")))
        plain.close()
        #expect(server.statistics.tlsAccepted == 2)
        #expect(server.statistics.tlsHandshakeFailures == 0)
    }

    @Test func httpRequestsAreServedOverTLS() throws {
        let server = try makeTLSServer()
        defer { server.shutdown() }
        let response = try httpsRequest(server.tlsLocalAddresses[0],
                                        "POST /v1/things HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello")
        #expect(response.hasPrefix("HTTP/1.1 200"))
        #expect(response.hasSuffix("POST /v1/things 5"))
        let byAddress = try httpsRequest(server.tlsLocalAddresses[0], "GET /x HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n", serverName: "127.0.0.1")
        #expect(byAddress.hasSuffix("GET /x 0"))
    }

    @Test func clientsRefuseAServerTheyCannotVerify() throws {
        let expired = try makeTLSServer(certificate: authority.expiredCertificateFile, key: authority.expiredKeyFile)
        defer { expired.shutdown() }
        let untrusted = try makeTLSServer(certificate: authority.untrustedCertificateFile, key: authority.untrustedKeyFile)
        defer { untrusted.shutdown() }
        let good = try makeTLSServer()
        defer { good.shutdown() }
        let cases: [(SocketAddress, String?, String)] = [
            (expired.tlsLocalAddresses[0], nil, "certificate has expired"),
            (untrusted.tlsLocalAddresses[0], nil, "unable to get local issuer certificate"),
            (good.tlsLocalAddresses[0], "parley.example", "hostname mismatch"),
            (good.tlsLocalAddresses[0], "127.0.0.9", "IP address mismatch"),
        ]
        for (address, serverName, reason) in cases {
            do {
                _ = try WebSocketClient(connectingTo: address, path: "/ws", timeout: .seconds(5), tls: trusting, serverName: serverName)
                Issue.record("connected to a server that should not verify (\(reason))")
            } catch {
                #expect(error.tlsError?.kind == .certificateRejected)
                #expect(error.description.contains(reason))
            }
        }
        #expect(waitUntil(timeout: .seconds(5)) { good.statistics.tlsHandshakeFailures == 2 })
        // The default client context trusts only the system's CAs, not the test CA.
        let system = try TLSContext.client()
        do {
            _ = try WebSocketClient(connectingTo: good.tlsLocalAddresses[0], path: "/ws", timeout: .seconds(5), tls: system)
            Issue.record("the system store trusted the throwaway CA")
        } catch {
            #expect(error.tlsError?.kind == .certificateRejected)
        }
    }

    @Test func plainHTTPGarbageAndSilenceOnTheTLSPortAreClosedAndCounted() throws {
        let server = try makeTLSServer(handshakeTimeout: .milliseconds(300))
        defer { server.shutdown() }
        let address = server.tlsLocalAddresses[0]
        let http = try RawClient(address)
        try http.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(http.readToEnd(timeout: .seconds(5)))
        #expect(!String(decoding: http.received, as: UTF8.self).contains("200"))
        let garbage = try RawClient(address)
        try garbage.send(String(repeating: "\u{16}\u{03}\u{01}\u{00}\u{05}junk!", count: 3))
        #expect(garbage.readToEnd(timeout: .seconds(5)))
        #expect(waitUntil(timeout: .seconds(5)) { server.statistics.tlsHandshakeFailures == 2 })
        // A client that connects and says nothing is closed by the handshake timeout.
        let silent = try RawClient(address)
        #expect(silent.readToEnd(timeout: .seconds(5)))
        #expect(server.statistics.timeouts >= 1)
        // A plain WebSocket client on the TLS port fails cleanly too.
        #expect(throws: WebSocketClientError.self) { _ = try WebSocketClient(connectingTo: address, path: "/ws", timeout: .seconds(2)) }
        // The server still serves TLS and plain afterwards.
        let client = try WebSocketClient(connectingTo: address, path: "/ws", timeout: .seconds(5), tls: trusting)
        try client.send(.text("still here"))
        #expect(try client.receive(timeout: .seconds(5)) == .message(.text("still here")))
        client.close()
        #expect(waitUntil(timeout: .seconds(5)) { server.connectionCount == 0 })
    }

    @Test func aBadCertificateFileStopsTheServerFromStarting() throws {
        do {
            _ = try makeTLSServer(certificate: "/nonexistent.pem")
            Issue.record("started without a certificate")
        } catch let error as EdgeError {
            #expect(error.tlsError != nil)
            #expect(error.description.contains("/nonexistent.pem"))
        }
    }
}
