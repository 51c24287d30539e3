import Foundation
import Testing
import ParleyAuth
import ParleyCrypto
import ParleyEdgeIO
import ParleyNetCore
import ParleyNetLinux
import ParleyServer
import ParleySignaling
import ParleyTestSupport
import Synchronization

/// parleyd's TLS listener: the same signaling and REST as the plain one, beside it.
@Suite struct ServerTLSTests {
    @Test func devicesSignInAndRESTAnswersOverTLSBesideThePlainListener() throws {
        let authority = try TestCertificateAuthority.shared()
        let harness = try ServerHarness(startsServer: false) { configuration in
            configuration.tlsListenAddresses = [.ipv4Loopback(port: 0)]
            configuration.tlsCertificateFile = authority.serverCertificateFile
            configuration.tlsKeyFile = authority.serverKeyFile
        }
        let server = harness.server
        let api = RESTAPI(store: server.store, callControl: server.callControl, metrics: server.metrics)
        server.installHTTPHandler(api.handler)
        try server.start()
        let tlsAddress = try #require(server.tlsLocalAddresses.first)
        let trusting = try TLSContext.client(caFile: authority.caFile)

        let secure = try TestDevice(address: tlsAddress, tls: trusting)
        #expect(secure.client.isTLS)
        let reply = try secure.hello(appKey: harness.application.key, token: try harness.token(for: "alice"), deviceID: "alice-tls")
        guard case .helloOK = reply else {
            Issue.record("hello over TLS refused: \(reply)")
            return
        }
        let plain = try harness.device("bob")
        #expect(!plain.client.isTLS)

        // REST over TLS, on a thread of its own (the REST tasks must not be starved).
        let credentials = BasicCredentials(applicationKey: harness.application.key, secret: harness.application.secret)
        let request = "GET /v1/calls HTTP/1.1\r\nHost: localhost\r\nAuthorization: \(credentials.authorizationValue)\r\nConnection: close\r\n\r\n"
        let response = try Self.httpsRequest(request, to: tlsAddress, tls: trusting)
        #expect(response.hasPrefix("HTTP/1.1 200"), "\(response)")
        let refused = try Self.httpsRequest("GET /v1/calls HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n", to: tlsAddress, tls: trusting)
        #expect(refused.hasPrefix("HTTP/1.1 401"), "\(refused)")
    }

    @Test func aMissingCertificateStopsTheServerWithAClearError() throws {
        let harness = try ServerHarness(startsServer: false) { configuration in
            configuration.tlsListenAddresses = [.ipv4Loopback(port: 0)]
            configuration.tlsCertificateFile = "/nonexistent/parley.pem"
            configuration.tlsKeyFile = "/nonexistent/parley.key"
        }
        do {
            try harness.server.start()
            Issue.record("started without a certificate")
        } catch {
            #expect("\(error)".contains("/nonexistent/parley.pem"))
        }
    }

    /// One request over TLS through a WebSocket-less raw exchange: the upgrade path is not
    /// involved, so a plain HTTP/1.1 request and the full response until close.
    private static func httpsRequest(_ request: String, to address: SocketAddress, tls: TLSContext) throws -> String {
        let result = HTTPSProbe.Outcome()
        let thread = Thread {
            let outcome = Result { try HTTPSProbe.exchange(request, address: address, tls: tls) }
            result.withLock { $0 = outcome }
        }
        thread.start()
        let deadline = ContinuousClock.now.advanced(by: .seconds(10))
        while result.withLock({ $0 }) == nil && ContinuousClock.now < deadline { Thread.sleep(forTimeInterval: 0.005) }
        guard let outcome = result.withLock({ $0 }) else { throw TestFailure("no HTTPS answer within 10 s") }
        return try outcome.get()
    }
}

/// A blocking HTTPS exchange on `TLSConnection` and a `TCPSocket`, for tests.
enum HTTPSProbe {
    /// The answer, handed from the probe's thread to the test.
    final class Outcome: Sendable {
        private let value = Mutex<Result<String, any Error>?>(nil)
        func withLock<R>(_ body: (inout Result<String, any Error>?) -> R) -> R { value.withLock { body(&$0) } }
    }

    static func exchange(_ request: String, address: SocketAddress, tls: TLSContext, serverName: String = "localhost") throws -> String {
        let deadline = ContinuousClock.now.advanced(by: .seconds(5))
        let socket = try TCPSocket.connect(to: address, timeout: .seconds(5))
        defer { socket.close() }
        let connection = try TLSConnection(context: tls, serverName: serverName)
        var output = connection.start()
        var requestSent = false
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        // Bounded by the deadline and the count.
        for _ in 0..<10_000 {
            try send(output.send, on: socket)
            if let error = output.error { throw error }
            received += output.received
            if output.didClose { break }
            if connection.state == .connected && !requestSent {
                requestSent = true
                output = connection.write(Array(request.utf8))
                continue
            }
            let remaining = ContinuousClock.now.duration(to: deadline)
            guard remaining > .zero else { throw TestFailure("HTTPS exchange timed out") }
            switch try socket.read(into: &buffer) {
            case .bytes(let count): output = connection.receive(Array(buffer[0..<count]))
            case .endOfStream: return String(decoding: received, as: UTF8.self)
            case .wouldBlock:
                _ = socket.waitUntilReadable(timeout: remaining)
                output = TLSOutput()
            }
        }
        return String(decoding: received, as: UTF8.self)
    }

    private static func send(_ bytes: [UInt8], on socket: TCPSocket) throws {
        var offset = 0
        for _ in 0..<10_000 where offset < bytes.count {
            let written = try socket.write(bytes, from: offset)
            offset += written
            if written == 0 { _ = socket.waitUntilWritable(timeout: .seconds(1)) }
        }
    }
}
