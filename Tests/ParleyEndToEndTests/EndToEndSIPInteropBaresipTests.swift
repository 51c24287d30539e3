import Foundation
import Testing

extension EndToEndRealTimeMediaTests {
    /// parleyd's SIP gateway against a real phone: baresip answering behind Kamailio, the
    /// trunk stand-in (scripts/kamailio/trunk.cfg.in: digest challenges for phone numbers,
    /// Record-Route for every dialog). Audio is checked by tone both ways (the app sends
    /// 440 Hz, baresip 1000 Hz), DTMF both ways, and a hang-up from each side, whose BYE
    /// must pass through Kamailio (docs/sip.md, "Interop tests").
    @Suite(.serialized) struct SIPInteropBaresipTests {
        static let trunkUser = "parley"
        static let trunkPassword = "s3cret"

        static func scratchDirectory() throws -> URL {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("parley-e2e-baresip-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            return directory
        }

        /// A parleyd whose trunk (and `pbx.test` route) is Kamailio, with its account, and
        /// whose application may dial SIP addresses and `+46` numbers (CLI `+46700000001`).
        static func gateway(to trunk: KamailioInstance) throws -> ParleydInstance {
            let server = try ParleydInstance(flags: [
                "--sip-listen", "127.0.0.1:0", "--sip-trunk", "sip:\(trunk.address);transport=udp",
                "--sip-trunk-user", trunkUser, "--sip-trunk-password", trunkPassword, "--sip-route", "pbx.test=\(trunk.address)",
            ])
            try server.admin(["set-dialling", server.applicationKey, "--sip", "on", "--allow-prefix", "+46"])
            try server.admin(["set-cli", server.applicationKey, "+46700000001"])
            return server
        }

        /// parleyd's SIP port, from its banner.
        static func sipPort(of server: ParleydInstance) throws -> UInt16 {
            let process = try #require(server.process)
            let line = try process.waitForLine(timeout: 5, "'\(EndToEndSIPTests.bannerPrefix)'") {
                $0.hasPrefix(EndToEndSIPTests.bannerPrefix)
            }
            return try #require(line.split(separator: ":").last.flatMap { UInt16($0) }, "\(line)")
        }

        /// An app calls a phone number: parleyd answers Kamailio's SHA-256 challenge with the
        /// trunk account, baresip answers, the tones cross both transcodings, the app's
        /// digits reach baresip as RFC 4733 events and baresip's reach the app as
        /// `dtmfReceived`, and the app's hang-up reaches baresip as a BYE through
        /// Kamailio's Record-Route.
        @Test func aPhoneCallThroughTheTrunkCarriesTonesAndDigitsBothWaysAndTheAppHangsUp() throws {
            let scratch = try Self.scratchDirectory()
            defer { try? FileManager.default.removeItem(at: scratch) }
            let recording = scratch.appendingPathComponent("caller-hears.wav").path
            let phone = try BaresipPeer(user: "+4615550101", tone: 1000)
            let trunk = try KamailioInstance(phonePort: phone.port, user: Self.trunkUser, password: Self.trunkPassword, algorithm: "SHA-256")
            let server = try Self.gateway(to: trunk)
            let sipPort = try Self.sipPort(of: server)
            let alice = try SoftphoneProcess.call("+4615550101", on: server, as: "alice",
                                                  ["--duration", "5", "--tone", "440", "--record", recording, "--dtmf", "1#9"])
            try alice.waitForEvent("established", timeout: 30)
            try phone.waitForCall(timeout: 5)
            // After the app's digits (about 0.6 s of events), so each direction's are apart.
            Thread.sleep(forTimeInterval: 1.5)
            try phone.sendDTMF("4*")
            #expect(try alice.waitForExit(timeout: 30) == 0, "\(alice.report)")
            try phone.waitForCallEnd(timeout: 10)
            let phoneHeard = try phone.receivedRecording().path
            phone.stop()
            trunk.stop()

            let ended = try alice.waitForEvent("ended", timeout: 1)
            #expect(ended["cause"] as? String == "hungUp", "\(ended)")
            let received = alice.events.filter { $0["event"] as? String == "dtmfReceived" }.compactMap { $0["digits"] as? String }
            #expect(received.joined() == "4*", "\(alice.events)")
            #expect(phone.receivedDigits == "1#9", "\(phone.report)")

            // The trunk challenged with SHA-256, took the account, and relayed the ACK and
            // the BYE from parleyd (Record-Route: parleyd sent them to Kamailio).
            let log = trunk.requestLog
            #expect(log.contains("challenge INVITE with SHA-256"), "\(trunk.report)")
            #expect(log.contains("authenticated \(Self.trunkUser)"), "\(trunk.report)")
            #expect(log.contains { $0.hasPrefix("ACK ") && $0.hasSuffix(" from 127.0.0.1:\(sipPort)") }, "\(log)")
            #expect(log.contains { $0.hasPrefix("BYE ") && $0.hasSuffix(" from 127.0.0.1:\(sipPort)") }, "\(log)")

            try Self.expectTone(1000, in: recording, minimumRatio: 0.75)
            try Self.expectTone(440, in: phoneHeard, minimumRatio: 0.75)
        }

        /// An app calls a SIP address routed to Kamailio (which takes it without a
        /// challenge, as from a peer it trusts); baresip answers, the tones cross both
        /// ways, and baresip hangs up: its BYE passes through Kamailio to parleyd, and the
        /// app's call ends `hungUp`.
        @Test func aSIPAddressCallThroughTheProxyCarriesTonesBothWaysAndThePhoneHangsUp() throws {
            let scratch = try Self.scratchDirectory()
            defer { try? FileManager.default.removeItem(at: scratch) }
            let recording = scratch.appendingPathComponent("caller-hears.wav").path
            let phone = try BaresipPeer(user: "bob", tone: 1000)
            let trunk = try KamailioInstance(phonePort: phone.port, user: Self.trunkUser, password: Self.trunkPassword)
            let server = try Self.gateway(to: trunk)
            let alice = try SoftphoneProcess.call("bob@pbx.test", on: server, as: "alice", ["--tone", "440", "--record", recording])
            try alice.waitForEvent("established", timeout: 30)
            try phone.waitForCall(timeout: 5)
            Thread.sleep(forTimeInterval: 4)
            try phone.hangUp()
            #expect(try alice.waitForExit(timeout: 20) == 0, "\(alice.report)")
            try phone.waitForCallEnd(timeout: 10)
            let phoneHeard = try phone.receivedRecording().path
            phone.stop()
            trunk.stop()

            let ended = try alice.waitForEvent("ended", timeout: 1)
            #expect(ended["cause"] as? String == "hungUp", "\(ended)")
            #expect(alice.eventNames.contains("hangingUp") == false, "the app hung up itself: \(alice.eventNames)")
            let log = trunk.requestLog
            #expect(!log.contains { $0.hasPrefix("challenge") }, "a SIP address was challenged: \(log)")
            #expect(log.contains { $0.hasPrefix("BYE ") && $0.hasSuffix(" from 127.0.0.1:\(phone.port)") }, "\(log)")

            try Self.expectTone(1000, in: recording, minimumRatio: 0.85)
            try Self.expectTone(440, in: phoneHeard, minimumRatio: 0.85)
        }

        /// SDES-keyed SRTP toward a real phone (docs/sip.md, `--sip-media-sdes`): parleyd
        /// offers RTP/SAVP with `a=crypto` to baresip routed directly, whose account takes
        /// SRTP only (`mediaenc=srtp-mand`, so plain RTP could not carry the call); the
        /// tones cross both ways through SRTP, and the app hangs up.
        @Test func aSIPCallWithSDESKeyedSRTPCarriesTonesBothWays() throws {
            let scratch = try Self.scratchDirectory()
            defer { try? FileManager.default.removeItem(at: scratch) }
            let recording = scratch.appendingPathComponent("caller-hears.wav").path
            let phone = try BaresipPeer(user: "bob", tone: 1000, mediaEncryption: "srtp-mand")
            let server = try ParleydInstance(flags: [
                "--sip-listen", "127.0.0.1:0", "--sip-route", "pbx.test=\(phone.address)", "--sip-media-sdes",
            ])
            try server.admin(["set-dialling", server.applicationKey, "--sip", "on"])
            let alice = try SoftphoneProcess.call("bob@pbx.test", on: server, as: "alice",
                                                  ["--duration", "5", "--tone", "440", "--record", recording])
            try alice.waitForEvent("established", timeout: 30)
            try phone.waitForCall(timeout: 5)
            #expect(try alice.waitForExit(timeout: 30) == 0, "\(alice.report)")
            try phone.waitForCallEnd(timeout: 10)
            let phoneHeard = try phone.receivedRecording().path
            phone.stop()

            try Self.expectTone(1000, in: recording, minimumRatio: 0.75)
            try Self.expectTone(440, in: phoneHeard, minimumRatio: 0.75)
        }

        /// The recording's main tone is `frequency`, heard in at least `minimumRatio` of its
        /// frames from the first and for at least 3 s. (Less than the whole call: a phone's
        /// recording starts with its first packet, and DTMF takes the place of audio.)
        static func expectTone(_ frequency: Double, in path: String, minimumRatio: Double,
                               sourceLocation: SourceLocation = #_sourceLocation) throws {
            let analysis = try ToneTimeline(path: path, frequency: frequency)
            let dominant = try #require(analysis.dominantFrequency, "\(path) is silent", sourceLocation: sourceLocation)
            #expect(abs(dominant - frequency) < 15, "\(path): dominant \(dominant) Hz", sourceLocation: sourceLocation)
            #expect(analysis.arrivalRatio >= minimumRatio, "\(path): tone in \(analysis.arrivalRatio * 100) % of frames",
                    sourceLocation: sourceLocation)
            #expect(analysis.audibleSeconds >= 3, "\(path): \(analysis.audibleSeconds) s of audio", sourceLocation: sourceLocation)
        }
    }
}
