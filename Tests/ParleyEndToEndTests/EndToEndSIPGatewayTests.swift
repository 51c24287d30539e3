import Foundation
import Testing

extension EndToEndRealTimeMediaTests {
    /// Calls from the `parley` softphone through parleyd's SIP gateway to SIPp as the far
    /// side (docs/sip.md, "Routing and the user agent"): a SIP address by its domain's
    /// route, a phone number through the trunk, a busy endpoint, and a number the
    /// application may not dial.
    @Suite(.serialized) struct SIPGatewayTests {
        /// A parleyd whose SIP gateway sends `pbx.test` and the trunk to `peer`, its
        /// application allowed SIP addresses and `+46` numbers with the default CLI
        /// `+46700000001`.
        static func gateway(to peer: SIPpPeer) throws -> ParleydInstance {
            let server = try ParleydInstance(flags: ["--sip-listen", "127.0.0.1:0", "--sip-route", "pbx.test=\(peer.address)",
                                                     "--sip-trunk", "sip:\(peer.address);transport=udp"])
            try server.admin(["set-dialling", server.applicationKey, "--sip", "on", "--allow-prefix", "+46"])
            try server.admin(["set-cli", server.applicationKey, "+46700000001"])
            return server
        }

        /// SIPp echoes the RTP it receives: the caller's 440 Hz goes out as Opus, is
        /// transcoded to PCMU toward SIPp, comes back and is transcoded to Opus again, so
        /// the caller hearing its own tone proves both directions of the gateway. Its DTMF
        /// reaches the SIP side of the gateway as RFC 4733 events, in order.
        @Test func aSIPAddressAnswersAndTheCallerHearsItsToneBackThroughTheGateway() throws {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("parley-e2e-gateway-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let recording = directory.appendingPathComponent("caller-hears.wav").path
            let peer = try SIPpPeer(echo: true)
            let server = try Self.gateway(to: peer)
            let alice = try SoftphoneProcess.call("bob@pbx.test", on: server, as: "alice",
                                                  ["--duration", "5", "--tone", "440", "--record", recording, "--dtmf", "1#9"])
            #expect(try alice.waitForExit(timeout: 45) == 0, "\(alice.report)")
            #expect(try peer.waitForExit(timeout: 20) == 0, "\(peer.report)")

            let analysis = try RecordingAnalysis(path: recording, expectedFrequency: 440)
            let dominant = try #require(analysis.dominantFrequency, "\(recording) is silent")
            #expect(abs(dominant - 440) < 15, "dominant \(dominant) Hz")
            #expect(analysis.arrivalRatio >= 0.9, "tone in \(analysis.arrivalRatio * 100) % of frames")
            #expect(analysis.audibleSeconds >= 3.5, "\(analysis.audibleSeconds) s of audio")

            // parleyd's logfmt lines: each digit once as it begins and once as it ends.
            let lines = (server.process?.report ?? "").split(separator: "\n").filter { $0.contains("media.dtmf.received") && $0.contains("leg=caller") }
            let events = lines.map { line in
                ["event", "end"].map { key in
                    line.split(separator: " ").first { $0.hasPrefix("\(key)=") }.map { String($0.dropFirst(key.count + 1)) } ?? "?"
                }.joined(separator: " ")
            }
            #expect(events == ["1 false", "1 true", "# false", "# true", "9 false", "9 true"], "\(lines)")
            let report = server.process?.report ?? ""
            #expect(report.contains("sip.invite") && report.contains("to=sip:bob@pbx.test"), "\(report)")
        }

        /// The trunk (scripts/sipp/uas-trunk.xml) checks the INVITE: the number as
        /// `sip:+4615550101@...;user=phone`, the application's default CLI in From and
        /// P-Asserted-Identity, the app's `x-order` header; its 18x and 2xx `x-` headers
        /// reach the caller.
        @Test func aPhoneNumberGoesThroughTheTrunkWithTheCLI() throws {
            let peer = try SIPpPeer(scenario: "uas-trunk")
            let server = try Self.gateway(to: peer)
            let alice = try SoftphoneProcess.call("+4615550101", on: server, as: "alice",
                                                  ["--duration", "2", "--header", "x-order=order-17"])
            #expect(try alice.waitForExit(timeout: 45) == 0, "\(alice.report)")
            #expect(try peer.waitForExit(timeout: 20) == 0, "\(peer.report)")
            let headers = alice.events.filter { $0["event"] as? String == "responseHeaders" }
            #expect(headers.contains { ($0["headers"] as? [String: String])?["x-agent"] == "42" }, "\(alice.events)")
            #expect(alice.eventNames.containsInOrder(["ringing", "answered", "established", "ended"]), "\(alice.eventNames)")

            // The record: the number as callee, the INVITE's Call-ID, the final status.
            let callID = try #require(try alice.summary(timeout: 1)["callId"] as? String)
            let (status, record) = try server.get("/v1/calls/\(callID)")
            #expect(status == 200)
            #expect(record?["callee"] as? String == "+4615550101" && record?["direction"] as? String == "appToPhone", "\(record ?? [:])")
            #expect(record?["sipStatus"] as? Int == 200, "\(record ?? [:])")
            #expect((record?["sipCallId"] as? String)?.isEmpty == false, "\(record ?? [:])")
        }

        /// A busy endpoint (486): the call ends `denied`, and parleyd acknowledges the 486.
        @Test func aBusyEndpointEndsTheCallDenied() throws {
            let peer = try SIPpPeer(scenario: "uas-busy")
            let server = try Self.gateway(to: peer)
            let alice = try SoftphoneProcess.call("bob@pbx.test", on: server, as: "alice", ["--duration", "2"])
            _ = try alice.waitForExit(timeout: 45)
            let ended = try alice.waitForEvent("ended", timeout: 1)
            #expect(ended["cause"] as? String == "denied", "\(ended)")
            let callID = try #require(try alice.summary(timeout: 1)["callId"] as? String)
            #expect(try server.get("/v1/calls/\(callID)").body?["sipStatus"] as? Int == 486)
            #expect(try peer.waitForExit(timeout: 20) == 0, "\(peer.report)")
        }

        /// A number outside the application's allowed prefixes is refused before anything
        /// is dialled (`destination_not_allowed`); so is a SIP domain with no route.
        @Test func refusedDestinationsAreClearErrorsAndDialNothing() throws {
            let peer = try SIPpPeer(scenario: "uas-busy")
            let server = try Self.gateway(to: peer)
            let foreign = try SoftphoneProcess.call("+15550100", on: server, as: "alice", ["--duration", "2"])
            #expect(try foreign.waitForExit(timeout: 30) != 0)
            #expect(foreign.process.report.contains("destination_not_allowed"), "\(foreign.report)")
            let unrouted = try SoftphoneProcess.call("bob@elsewhere.test", on: server, as: "alice", ["--duration", "2"])
            #expect(try unrouted.waitForExit(timeout: 30) != 0)
            #expect(unrouted.process.report.contains("no route to SIP domain"), "\(unrouted.report)")
            // SIPp saw no INVITE: it is still waiting for its one call.
            #expect(peer.process.isRunning)
        }
    }
}
