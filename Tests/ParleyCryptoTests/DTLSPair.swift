import ParleyCrypto

/// Certificates made once for the whole test run (generation costs about a millisecond,
/// but there is no reason to repeat it).
enum TestCertificates {
    // Generation only fails if OpenSSL is broken; then every DTLS test should fail loudly.
    static let alice = try! DTLSCertificate.generate(commonName: "alice")
    static let bob = try! DTLSCertificate.generate(commonName: "bob")
    static let mallory = try! DTLSCertificate.generate(commonName: "mallory")
}

/// Two DTLSConnections wired together in memory, with a manual clock and a hook that
/// decides what each sent datagram becomes on the wire (dropped, duplicated, mangled).
final class DTLSPair {
    let client: DTLSConnection
    let server: DTLSConnection
    let start: ContinuousClock.Instant
    private(set) var now: ContinuousClock.Instant
    /// Non-send actions, per side, in order.
    private(set) var clientEvents: [DTLSAction] = []
    private(set) var serverEvents: [DTLSAction] = []
    /// Every datagram each side produced, in order, with the time it was produced.
    private(set) var sentByClient: [(at: Duration, bytes: [UInt8])] = []
    private(set) var sentByServer: [(at: Duration, bytes: [UInt8])] = []
    /// Given (fromClient, index of that side's datagram, bytes), what arrives at the peer.
    var wire: (_ fromClient: Bool, _ index: Int, _ bytes: [UInt8]) -> [[UInt8]] = { _, _, bytes in [bytes] }
    private var inFlight: [(toServer: Bool, bytes: [UInt8])] = []

    init(client: DTLSConnection.Configuration, server: DTLSConnection.Configuration) throws {
        self.client = try DTLSConnection(configuration: client)
        self.server = try DTLSConnection(configuration: server)
        start = ContinuousClock.now
        now = start
    }

    /// Alice is the client and Bob the server unless `swapped`; each expects the other's
    /// real fingerprint. `adjust` edits both configurations (client first).
    static func make(
        swapped: Bool = false,
        adjust: (inout DTLSConnection.Configuration, inout DTLSConnection.Configuration) -> Void = { _, _ in }
    ) throws -> DTLSPair {
        let (c, s) = swapped ? (TestCertificates.bob, TestCertificates.alice) : (TestCertificates.alice, TestCertificates.bob)
        var clientConfig = DTLSConnection.Configuration(role: .client, certificate: c, expectedPeerFingerprint: s.fingerprint)
        var serverConfig = DTLSConnection.Configuration(role: .server, certificate: s, expectedPeerFingerprint: c.fingerprint)
        adjust(&clientConfig, &serverConfig)
        return try DTLSPair(client: clientConfig, server: serverConfig)
    }

    private func handle(_ actions: [DTLSAction], fromClient: Bool) {
        for action in actions {
            if case .send(let bytes) = action {
                let index = fromClient ? sentByClient.count : sentByServer.count
                if fromClient { sentByClient.append((now - start, bytes)) } else { sentByServer.append((now - start, bytes)) }
                for delivered in wire(fromClient, index, bytes) { inFlight.append((fromClient, delivered)) }
            } else if fromClient {
                clientEvents.append(action)
            } else {
                serverEvents.append(action)
            }
        }
    }

    /// Delivers one datagram directly (for replays and garbage injected by a test).
    func inject(_ bytes: [UInt8], toServer: Bool) {
        inFlight.append((toServer, bytes))
    }

    func advance(by duration: Duration) { now = now + duration }

    /// Starts both sides (unless already started) and runs until nothing is in flight and
    /// no timer is pending, or `maxSteps` is reached.
    func run(maxSteps: Int = 500) {
        if server.state == .new { handle(server.start(now: now), fromClient: false) }
        if client.state == .new { handle(client.start(now: now), fromClient: true) }
        for _ in 0..<maxSteps {
            if !inFlight.isEmpty {
                let next = inFlight.removeFirst()
                if next.toServer {
                    handle(server.receive(datagram: next.bytes, now: now), fromClient: false)
                } else {
                    handle(client.receive(datagram: next.bytes, now: now), fromClient: true)
                }
                continue
            }
            let deadlines = [client.nextDeadline, server.nextDeadline].compactMap { $0 }
            guard let earliest = deadlines.min() else { return }
            if earliest > now { now = earliest }
            handle(client.handleTimeout(now: now), fromClient: true)
            handle(server.handleTimeout(now: now), fromClient: false)
        }
    }

    var bothConnected: Bool { client.state == .connected && server.state == .connected }

    static func keys(_ events: [DTLSAction]) -> SRTPKeyingMaterial? {
        for case .connected(let keys) in events { return keys }
        return nil
    }

    static func failure(_ events: [DTLSAction]) -> CryptoError? {
        for case .failed(let error) in events { return error }
        return nil
    }
}
