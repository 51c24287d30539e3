import Testing
import ParleyTestSupport
@testable import ParleyCrypto

/// Both ends of a TLS connection in memory: bytes are handed across until nothing moves.
private struct TLSPair {
    let client: TLSConnection
    let server: TLSConnection
    var clientReceived: [UInt8] = []
    var serverReceived: [UInt8] = []
    var clientError: CryptoError?
    var serverError: CryptoError?

    init(serverCertificate: String, serverKey: String, caFile: String, serverName: String) throws {
        let serverContext = try TLSContext.server(certificateChainFile: serverCertificate, privateKeyFile: serverKey)
        let clientContext = try TLSContext.client(caFile: caFile)
        server = try TLSConnection(context: serverContext)
        client = try TLSConnection(context: clientContext, serverName: serverName)
    }

    /// Runs the exchange from `first` (the client's opening bytes) until quiet.
    mutating func run(clientSends first: TLSOutput) {
        var toServer = first.send
        var toClient: [UInt8] = []
        clientError = clientError ?? first.error
        // Bounded: a TLS handshake takes a few round trips.
        for _ in 0..<16 {
            if toServer.isEmpty && toClient.isEmpty { return }
            if !toServer.isEmpty {
                let output = server.receive(toServer)
                toServer = []
                serverReceived += output.received
                serverError = serverError ?? output.error
                toClient += output.send
            }
            if !toClient.isEmpty {
                let output = client.receive(toClient)
                toClient = []
                clientReceived += output.received
                clientError = clientError ?? output.error
                toServer += output.send
            }
        }
    }
}

@Suite struct TLSConnectionTests {
    let authority: TestCertificateAuthority

    init() throws { authority = try TestCertificateAuthority.shared() }

    private func pair(certificate: String? = nil, key: String? = nil, serverName: String = "localhost") throws -> TLSPair {
        try TLSPair(serverCertificate: certificate ?? authority.serverCertificateFile, serverKey: key ?? authority.serverKeyFile,
                    caFile: authority.caFile, serverName: serverName)
    }

    @Test func handshakeVerifiesTheHostNameAndCarriesDataBothWays() throws {
        var pair = try pair()
        pair.run(clientSends: pair.client.start())
        #expect(pair.clientError == nil)
        #expect(pair.serverError == nil)
        #expect(pair.client.state == .connected)
        #expect(pair.server.state == .connected)
        #expect(pair.client.protocolVersion == "TLSv1.3")
        pair.run(clientSends: pair.client.write(Array("ping".utf8)))
        #expect(pair.serverReceived == Array("ping".utf8))
        let big = [UInt8]((0..<100_000).map { UInt8($0 % 251) })
        let reply = pair.server.write(big)
        #expect(reply.error == nil)
        pair.clientReceived += pair.client.receive(reply.send).received
        #expect(pair.clientReceived == big)
        let close = pair.client.close()
        #expect(pair.client.state == .closed)
        #expect(pair.server.receive(close.send).didClose)
        #expect(pair.server.state == .closed)
    }

    @Test func anIPAddressIsVerifiedAgainstTheIPSubjectAlternativeNames() throws {
        var good = try pair(serverName: "127.0.0.1")
        good.run(clientSends: good.client.start())
        #expect(good.client.state == .connected)
        var six = try pair(serverName: "::1")
        six.run(clientSends: six.client.start())
        #expect(six.client.state == .connected)
        var wrong = try pair(serverName: "127.0.0.2")
        wrong.run(clientSends: wrong.client.start())
        let error = try #require(wrong.clientError)
        #expect(error.kind == .certificateRejected)
        #expect(error.description.contains("IP address mismatch"))
    }

    @Test func aWrongHostNameIsRejectedNamingTheReason() throws {
        var pair = try pair(serverName: "wrong.example")
        pair.run(clientSends: pair.client.start())
        let error = try #require(pair.clientError)
        #expect(error.kind == .certificateRejected)
        #expect(error.description.contains("hostname mismatch"))
        #expect(pair.client.state == .failed(error))
        // The client's alert reached the server, which fails too instead of waiting.
        #expect(pair.serverError != nil)
    }

    @Test func anUntrustedIssuerIsRejected() throws {
        var pair = try pair(certificate: authority.untrustedCertificateFile, key: authority.untrustedKeyFile)
        pair.run(clientSends: pair.client.start())
        let error = try #require(pair.clientError)
        #expect(error.kind == .certificateRejected)
        #expect(error.description.contains("unable to get local issuer certificate"))
    }

    @Test func anExpiredCertificateIsRejected() throws {
        var pair = try pair(certificate: authority.expiredCertificateFile, key: authority.expiredKeyFile)
        pair.run(clientSends: pair.client.start())
        let error = try #require(pair.clientError)
        #expect(error.kind == .certificateRejected)
        #expect(error.description.contains("certificate has expired"))
    }

    @Test func plainHTTPAndGarbageFailTheServerSideCleanly() throws {
        let context = try TLSContext.server(certificateChainFile: authority.serverCertificateFile, privateKeyFile: authority.serverKeyFile)
        let http = try TLSConnection(context: context)
        let output = http.receive(Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
        let error = try #require(output.error)
        #expect(error.kind == .openSSL)
        #expect(error.description.contains("http request"))
        var generator = SeededGenerator(seed: 7)
        for _ in 0..<50 {
            let garbage = (0..<Int.random(in: 1...600, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let connection = try TLSConnection(context: context)
            let result = connection.receive(garbage)
            // Either a clean failure or still waiting for a record that never completes.
            if result.error == nil { #expect(connection.state == .handshaking) }
            #expect(connection.receiveEndOfStream().error != nil || connection.state != .handshaking)
        }
    }

    @Test func badConfigurationIsAClearError() throws {
        #expect(throws: CryptoError.self) {
            _ = try TLSContext.server(certificateChainFile: "/nonexistent/cert.pem", privateKeyFile: authority.serverKeyFile)
        }
        do {
            _ = try TLSContext.server(certificateChainFile: authority.serverCertificateFile, privateKeyFile: authority.expiredKeyFile)
            Issue.record("a key of another certificate was accepted")
        } catch {
            #expect(error.description.contains("key values mismatch"))
        }
        #expect(throws: CryptoError.self) { _ = try TLSContext.client(caFile: "/nonexistent/ca.pem") }
        let client = try TLSContext.client(caFile: authority.caFile)
        #expect(throws: CryptoError.self) { _ = try TLSConnection(context: client) }
        // The system store loads (Debian: /etc/ssl/certs).
        _ = try TLSContext.client()
        let connection = try TLSConnection(context: client, serverName: "localhost")
        #expect(connection.write([1]).error?.kind == .invalidState)
    }

    @Test func addressLiteralsAreToldFromHostNames() {
        #expect(TLSConnection.isIPAddressLiteral("127.0.0.1"))
        #expect(TLSConnection.isIPAddressLiteral("::1"))
        #expect(!TLSConnection.isIPAddressLiteral("localhost"))
        #expect(!TLSConnection.isIPAddressLiteral("1.2.3.example"))
        #expect(!TLSConnection.isIPAddressLiteral("1.2.3"))
    }
}
