import ParleyCrypto

/// DTLS-SRTP handshake cost: one body call is a complete in-memory handshake between two
/// `DTLSConnection`s (client and server, ECDSA P-256, ECDHE, use_srtp, key export on both
/// sides), so msgs/s reads as handshake pairs per second on one core. Certificates are
/// made once outside the loop, as a server does at start.
func dtlsBenchmarks() -> [Benchmark] {
    // Generation fails only if OpenSSL itself is broken.
    let alice = try! DTLSCertificate.generate(commonName: "alice")
    let bob = try! DTLSCertificate.generate(commonName: "bob")
    let clientConfiguration = DTLSConnection.Configuration(role: .client, certificate: alice, expectedPeerFingerprint: bob.fingerprint)
    let serverConfiguration = DTLSConnection.Configuration(role: .server, certificate: bob, expectedPeerFingerprint: alice.fingerprint)
    let now = ContinuousClock.now

    func handshake(_ clientConfiguration: DTLSConnection.Configuration, _ serverConfiguration: DTLSConnection.Configuration) -> Int {
        guard let client = try? DTLSConnection(configuration: clientConfiguration),
              let server = try? DTLSConnection(configuration: serverConfiguration)
        else { return 0 }
        var toServer: [[UInt8]] = []
        var toClient: [[UInt8]] = []
        var keys = 0
        func collect(_ actions: [DTLSAction], into queue: inout [[UInt8]]) {
            for action in actions {
                switch action {
                case .send(let bytes): queue.append(bytes)
                case .connected(let material): keys &+= Int(material.clientMasterKey[0])
                default: break
                }
            }
        }
        collect(server.start(now: now), into: &toClient)
        collect(client.start(now: now), into: &toServer)
        for _ in 0..<32 where !(toServer.isEmpty && toClient.isEmpty) {
            for datagram in toServer { collect(server.receive(datagram: datagram, now: now), into: &toClient) }
            toServer.removeAll()
            for datagram in toClient { collect(client.receive(datagram: datagram, now: now), into: &toServer) }
            toClient.removeAll()
        }
        return client.state == .connected && server.state == .connected ? keys &+ 1 : 0
    }

    var aesCMServer = serverConfiguration
    aesCMServer.srtpProfiles = [.aes128CMHMACSHA1_80]
    return [
        Benchmark(format: "dtls", operation: "handshake pair, AEAD_AES_128_GCM", messageBytes: 0) {
            benchmarkSink &+= handshake(clientConfiguration, serverConfiguration)
        },
        Benchmark(format: "dtls", operation: "handshake pair, AES_CM_128_HMAC_SHA1_80", messageBytes: 0) {
            benchmarkSink &+= handshake(clientConfiguration, aesCMServer)
        },
        Benchmark(format: "dtls", operation: "generate P-256 self-signed certificate", messageBytes: 0) {
            if let certificate = try? DTLSCertificate.generate() { benchmarkSink &+= Int(certificate.fingerprint.bytes[0]) }
        },
    ]
}
