import Foundation
import Testing

extension EndToEndRealTimeMediaTests.SIPInteropBaresipTests {
    /// An HTTPS callback URL whose certificate comes from a private CA (docs/operations.md,
    /// "Callbacks and numbers", `--ca-file`): the test backend behind a TLS front (socat
    /// with a certificate for 127.0.0.1 from the test CA). With the CA file the signed ICE
    /// arrives over TLS and its `hangup` answer refuses the phone's call (480, DiCE
    /// MANAGERHANGUP); without it the certificate is not trusted, nothing reaches the
    /// backend, and the call is refused all the same (480), never left ringing.
    @Test func anHTTPSBackendIsTrustedThroughItsCAFileOnly() throws {
        let certificates = try SIPTLSCertificates.shared()
        for trustsCA in [true, false] {
            let scratch = try Self.scratchDirectory()
            defer { try? FileManager.default.removeItem(at: scratch) }
            let phone = try BaresipPeer(user: "+4615550101", tone: 1000)
            let server = try ParleydInstance(flags: ["--sip-listen", "127.0.0.1:0", "--sip-trunk", "sip:\(phone.address);transport=udp"]) { key in
                ["--sip-number", "+46700000097=\(key)"]
            }
            let backend = try TestBackend(directory: scratch, applicationKey: server.applicationKey, secret: server.secret,
                                          script: ["ice": ["action": ["name": "hangup"]]])
            let front = try TLSFront(port: try ParleydInstance.freeLoopbackPort(), certificate: certificates.pbxCertificateFile,
                                     key: certificates.pbxKeyFile, forwardingTo: backend.port, manyConnections: true)
            try server.admin(["callback", "set", server.applicationKey, "https://127.0.0.1:\(front.port)/sinch/callback", "--timeout-ms", "3000"]
                             + (trustsCA ? ["--ca-file", certificates.caFile] : []))
            server.process?.killHard()
            try server.start()
            let sipPort = try Self.sipPort(of: server)

            try phone.command("dial", "sip:+46700000097@127.0.0.1:\(sipPort)")
            try phone.process.waitForLine(timeout: 10, "'480 Temporarily Unavailable'") { $0.contains("480 Temporarily Unavailable") }
            phone.stop()
            if trustsCA {
                let ice = try backend.waitFor("ice")
                #expect(ice.body["cli"] as? String == "+4615550101", "\(ice.body)")
                let dice = try backend.waitFor("dice")
                #expect(dice.body["reason"] as? String == "MANAGERHANGUP", "\(dice.body)")
            } else {
                Thread.sleep(forTimeInterval: 0.5)
                #expect(backend.received.isEmpty, "a backend with an untrusted certificate was sent \(backend.received)")
                #expect(server.process?.report.contains("backend.ice.failed") == true, "parleyd logged no failed ICE")
            }
        }
    }
}
