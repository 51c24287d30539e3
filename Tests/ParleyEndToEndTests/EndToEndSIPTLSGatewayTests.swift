import Foundation
import Testing

extension EndToEndRealTimeMediaTests {
    /// Calls from the `parley` softphone through parleyd's SIP gateway over SIP over TLS
    /// (docs/sip.md, "Transports"): `--sip-route pbx.test=127.0.0.1:PORT;transport=tls` to
    /// SIPp behind a TLS front (socat with a certificate for pbx.test from a CA parleyd is
    /// given with `--sip-tls-ca-file`).
    @Suite(.serialized) struct SIPTLSGatewayTests {
        /// SIPp (scripts/sipp/uas-tls.xml) behind a TLS front presenting `certificate`.
        final class Peer {
            let sipp: SIPpPeer
            let front: TLSFront

            init(certificate: String, key: String) throws {
                let frontPort = try ParleydInstance.freeLoopbackPort()
                sipp = try SIPpPeer(scenario: "uas-tls", echo: true, transport: "t1", extra: ["-key", "front", "127.0.0.1:\(frontPort)"])
                front = try TLSFront(port: frontPort, certificate: certificate, key: key, forwardingTo: sipp.port)
            }
        }

        /// A parleyd with SIP over TLS whose gateway sends `pbx.test` to the peer's TLS
        /// front, its application allowed SIP addresses.
        static func gateway(to peer: Peer, _ certificates: SIPTLSCertificates) throws -> ParleydInstance {
            let server = try ParleydInstance(flags: [
                "--sip-listen", "127.0.0.1:0", "--sip-tls-listen", "127.0.0.1:0",
                "--sip-tls-cert", certificates.pbxCertificateFile, "--sip-tls-key", certificates.pbxKeyFile,
                "--sip-tls-ca-file", certificates.caFile,
                "--sip-route", "pbx.test=127.0.0.1:\(peer.front.port);transport=tls",
            ])
            try server.admin(["set-dialling", server.applicationKey, "--sip", "on"])
            return server
        }

        /// The INVITE, ACK and BYE travel over TLS (the scenario checks their TLS Vias and
        /// the Contact's transport=tls); SIPp echoes the RTP, so the caller hearing its
        /// own tone proves the call that TLS set up carries audio both ways.
        @Test func aSIPAddressAnswersOverTLSAndTheCallerHearsItsToneBack() throws {
            let certificates = try SIPTLSCertificates.shared()
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("parley-e2e-tls-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let recording = directory.appendingPathComponent("caller-hears.wav").path
            let peer = try Peer(certificate: certificates.pbxCertificateFile, key: certificates.pbxKeyFile)
            let server = try Self.gateway(to: peer, certificates)
            #expect(server.process?.lines.contains { $0.hasPrefix("parleyd listening for SIP on tls 127.0.0.1:") } == true)
            let alice = try SoftphoneProcess.call("bob@pbx.test", on: server, as: "alice",
                                                  ["--duration", "4", "--tone", "440", "--record", recording])
            #expect(try alice.waitForExit(timeout: 45) == 0, "\(alice.report)")
            #expect(try peer.sipp.waitForExit(timeout: 20) == 0, "\(peer.sipp.report)\n\(peer.front.process.report)")
            #expect(alice.eventNames.containsInOrder(["ringing", "answered", "established", "ended"]), "\(alice.eventNames)")

            let analysis = try RecordingAnalysis(path: recording, expectedFrequency: 440)
            let dominant = try #require(analysis.dominantFrequency, "\(recording) is silent")
            #expect(abs(dominant - 440) < 15, "dominant \(dominant) Hz")
            #expect(analysis.audibleSeconds >= 2.5, "\(analysis.audibleSeconds) s of audio")
            let report = server.process?.report ?? ""
            #expect(report.contains("sip.invite") && report.contains("via=tls:127.0.0.1:\(peer.front.port)"), "\(report)")
        }

        /// The far side's certificate is from the trusted CA but for another name: parleyd
        /// refuses the handshake, SIPp never sees an INVITE, and the call fails at once
        /// with the reason rather than after 32 s of waiting for an answer.
        @Test func aFarSideWhoseCertificateIsNotForTheDomainIsRefused() throws {
            let certificates = try SIPTLSCertificates.shared()
            let peer = try Peer(certificate: certificates.otherCertificateFile, key: certificates.otherKeyFile)
            let server = try Self.gateway(to: peer, certificates)
            let started = Date()
            let alice = try SoftphoneProcess.call("bob@pbx.test", on: server, as: "alice", ["--duration", "2"])
            #expect(try alice.waitForExit(timeout: 30) != 0)
            #expect(Date().timeIntervalSince(started) < 20)
            let ended = try alice.waitForEvent("ended", timeout: 1)
            #expect(ended["cause"] as? String == "error", "\(ended)")
            let report = server.process?.report ?? ""
            #expect(report.contains("sip.send.failed") && report.contains("rejected"), "\(report)")
            let callID = try #require(try alice.summary(timeout: 1)["callId"] as? String)
            #expect(try server.get("/v1/calls/\(callID)").body?["sipStatus"] as? Int == 503)
            // SIPp saw no INVITE: it is still waiting for its one call.
            #expect(peer.sipp.process.isRunning)
        }
    }
}
