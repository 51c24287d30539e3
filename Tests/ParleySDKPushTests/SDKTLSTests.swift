import Foundation
import ParleyAuth
import ParleyNet
import ParleySDK
import ParleyServer
import ParleyStore
import ParleyTestSupport
import Testing

/// Records what a client reports, and answers its token callback.
private final class TLSClientObserver: ParleyClientDelegate, @unchecked Sendable {
    // @unchecked: `heard` is behind `lock`; `application` is set once.
    private let application: Application
    private let lock = NSLock()
    private var heard: [String] = []

    init(application: Application) { self.application = application }

    var events: [String] { lock.withLock { heard } }

    func clientRequiresRegistrationCredentials(_ client: ParleyClient, withCallback callback: ParleyClientRegistration) {
        do {
            callback.register(withJWT: try UserToken.mint(applicationKey: application.key, secret: application.secret, userID: client.userId,
                                                          issuedAt: Int64(Date().timeIntervalSince1970), lifetime: 600,
                                                          nonce: try UserToken.randomNonce()))
        } catch {
            callback.registerDidFail(error: ParleyClientError(code: "registration_failed", message: "\(error)"))
        }
    }
    func clientDidStart(_ client: ParleyClient) { lock.withLock { heard.append("started") } }
    func clientDidFail(_ client: ParleyClient, error: any Error) { lock.withLock { heard.append("failed \(error)") } }
}

/// The SDK signing in to parleyd's TLS listener with `https://` URLs.
@Suite struct SDKTLSTests {
    let authority: TestCertificateAuthority
    let server: ParleyServer
    let application: Application
    let directory = NSTemporaryDirectory() + "parley-sdk-tls-" + UUID().uuidString

    init() throws {
        authority = try TestCertificateAuthority.shared()
        var configuration = ServerConfiguration(dataDirectory: directory, listenAddresses: [.ipv4Loopback(port: 0)])
        configuration.mediaBindAddress = .ipv4Loopback(port: 0)
        let base = UInt16(41_000 + Int.random(in: 0..<200) * 100)
        configuration.mediaPorts = base...(base + 99)
        configuration.edgeLoopCount = 1
        configuration.tlsListenAddresses = [.ipv4Loopback(port: 0)]
        configuration.tlsCertificateFile = authority.serverCertificateFile
        configuration.tlsKeyFile = authority.serverKeyFile
        server = try ParleyServer(configuration: configuration, stores: .sqlite(dataDirectory: configuration.dataDirectory), log: ServerLog(level: .error) { _ in })
        application = try #require(server.developmentApplication)
        try server.start()
    }

    private func cleanUp() {
        server.shutdown()
        try? FileManager.default.removeItem(atPath: directory)
    }

    private func waitForEvent(_ observer: TLSClientObserver, seconds: Double = 10) -> String? {
        let deadline = Date(timeIntervalSinceNow: seconds)
        while Date() < deadline {
            if let first = observer.events.first { return first }
            Thread.sleep(forTimeInterval: 0.02)
        }
        return nil
    }

    @Test(arguments: ["localhost", "127.0.0.1"])
    func aClientSignsInOverHTTPSWithTheDevelopmentCA(host: String) throws {
        defer { cleanUp() }
        let port = try #require(server.tlsLocalAddresses.first).port
        let observer = TLSClientObserver(application: application)
        let client = try ParleyClient(applicationKey: application.key, environmentHost: "https://\(host):\(port)", userId: "alice",
                                      deviceId: "alice-tls", callbackQueue: DispatchQueue(label: "test.tls"), caFile: authority.caFile)
        client.delegate = observer
        client.start()
        #expect(waitForEvent(observer) == "started")
        client.terminateGracefully()
    }

    @Test func aServerTheClientCannotVerifyFailsItNamingTheReason() throws {
        defer { cleanUp() }
        let port = try #require(server.tlsLocalAddresses.first).port
        let observer = TLSClientObserver(application: application)
        // The system store does not hold the throwaway CA.
        let client = try ParleyClient(applicationKey: application.key, environmentHost: "https://localhost:\(port)", userId: "alice",
                                      deviceId: "alice-tls", callbackQueue: DispatchQueue(label: "test.tls.untrusted"))
        client.delegate = observer
        client.start()
        let event = try #require(waitForEvent(observer))
        #expect(event.hasPrefix("failed"))
        #expect(event.contains("unable to get local issuer certificate"), "\(event)")
        client.terminateGracefully()
    }
}
