import Foundation
import Testing

extension EndToEndRealTimeMediaTests.SIPInteropBaresipTests {
    /// A phone calls in (docs/sip.md, "Calls in"): baresip, standing in for the trunk,
    /// dials one of the application's numbers at parleyd; the number's rule
    /// (`--sip-number NUMBER=KEY:user:bob`) rings bob's softphone, which answers; the tones
    /// cross both ways (baresip sends 1000 Hz, bob 440 Hz); bob hangs up and baresip's call
    /// ends with parleyd's BYE. The call's record is `phoneToApp` from baresip's number.
    @Test func aPhoneCallInToANumberRingsTheAppUserAndCarriesTonesBothWays() throws {
        let scratch = try Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let recording = scratch.appendingPathComponent("bob-hears.wav").path
        let phone = try BaresipPeer(user: "+4615550101", tone: 1000)
        let server = try ParleydInstance(flags: [
            "--sip-listen", "127.0.0.1:0", "--sip-trunk", "sip:\(phone.address);transport=udp",
        ]) { key in ["--sip-number", "+46700000099=\(key):user:bob", "--sip-number", "46700000098=\(key):conference:lobby"] }
        let sipPort = try Self.sipPort(of: server)
        let bob = try SoftphoneProcess.listen("listen bob", on: server, as: "bob",
                                              ["--answer", "--tone", "440", "--record", recording, "--duration", "5"])
        try phone.command("dial", "sip:+46700000099@127.0.0.1:\(sipPort)")
        let incoming = try bob.waitForEvent("incoming", timeout: 20)
        #expect(incoming["from"] as? String == "+4615550101", "\(incoming)")
        let callID = try #require(incoming["callId"] as? String)
        try bob.waitForEvent("established", timeout: 20)
        try phone.waitForCall(timeout: 10)
        #expect(try bob.waitForExit(timeout: 30) == 0, "\(bob.report)")
        try phone.waitForCallEnd(timeout: 10)
        let phoneHeard = try phone.receivedRecording().path
        phone.stop()

        try Self.expectTone(1000, in: recording, minimumRatio: 0.75)
        try Self.expectTone(440, in: phoneHeard, minimumRatio: 0.75)
        let record = try server.request("GET", "/v1/calls/\(callID)")
        #expect(record.body?["direction"] as? String == "phoneToApp", "\(record)")
        #expect(record.body?["caller"] as? String == "+4615550101" && record.body?["callee"] as? String == "bob", "\(record)")
        #expect(record.body?["endCause"] as? String == "hungUp", "\(record)")
    }

    /// A phone calls a number whose rule is a conference room: it joins the room with an
    /// app participant, each hears the other's tone through the mixer (G.711 on the phone's
    /// side, Opus on the app's), and the room lists the phone by its number.
    @Test func aPhoneCallInToARoomsNumberJoinsTheRoom() throws {
        let scratch = try Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let recording = scratch.appendingPathComponent("p0-hears.wav").path
        let phone = try BaresipPeer(user: "+4615550101", tone: 1000)
        let server = try ParleydInstance(flags: [
            "--sip-listen", "127.0.0.1:0", "--sip-trunk", "sip:\(phone.address);transport=udp",
        ]) { key in ["--sip-number", "+46700000098=\(key):conference:lobby"] }
        let sipPort = try Self.sipPort(of: server)
        let participant = try SoftphoneProcess("conference p0", ["conference", "lobby"] + server.clientFlags(as: "p0")
            + ["--tone", "440", "--record", recording, "--duration", "30"])
        try participant.waitForEvent("established", timeout: 20)
        try phone.command("dial", "sip:46700000098@127.0.0.1:\(sipPort)")
        try phone.waitForCall(timeout: 10)
        let clock = ContinuousClock()
        let joined = clock.now
        let listed = try server.request("GET", "/calling/v1/conferences/id/lobby")
        let entries = try #require(listed.body?["participants"] as? [[String: Any]], "\(listed)")
        #expect(Set(entries.compactMap { $0["cli"] as? String }) == ["p0", "+4615550101"], "\(entries)")
        Thread.sleep(forTimeInterval: 4)
        let left = clock.now
        try phone.hangUp()
        try phone.waitForCallEnd(timeout: 10)
        let phoneHeard = try phone.receivedRecording().path
        phone.stop()
        let end = clock.now
        participant.process.interrupt()
        #expect(try participant.waitForExit(timeout: 20) == 0, "\(participant.report)")
        try Self.expectTone(440, in: phoneHeard, minimumRatio: 0.75)
        // While the phone was in the room (from 1 s after it joined to 0.2 s before it
        // left), counted back from the end of p0's recording.
        let seconds = { (from: ContinuousClock.Instant, to: ContinuousClock.Instant) in
            Double(from.duration(to: to).components.seconds) + Double(from.duration(to: to).components.attoseconds) / 1e18
        }
        let window = try ToneLevels(path: recording, frequencies: [440, 1000])
            .window(endingSecondsBeforeEnd: seconds(left, end) + 0.2, seconds: seconds(joined, left) - 1.2)
        #expect(window.share(of: 1000, above: -40) > 0.9, "p0 hears the phone's 1000 Hz")
        #expect(window.share(of: 440, above: -40) < 0.05, "p0 does not hear its own 440 Hz")
    }

    /// INVITEs parleyd does not take: to a number without a rule (404), to a user who is
    /// not known (404). (One from a host that is not the trunk is SIPInboundAgentTests'.)
    @Test func callsInToUnknownNumbersUsersOrFromStrangersAreRefused() throws {
        let phone = try BaresipPeer(user: "+4615550101", tone: 1000)
        let server = try ParleydInstance(flags: [
            "--sip-listen", "127.0.0.1:0", "--sip-trunk", "sip:\(phone.address);transport=udp",
        ]) { key in ["--sip-number", "+46700000099=\(key):user:nobody"] }
        let sipPort = try Self.sipPort(of: server)
        try phone.command("dial", "sip:+46700000042@127.0.0.1:\(sipPort)")
        try phone.process.waitForLine(timeout: 10, "'404 Not Found'") { $0.contains("404 Not Found") }
        try phone.command("dial", "sip:+46700000099@127.0.0.1:\(sipPort)")
        try phone.process.waitForLine(timeout: 10, "a second '404 Not Found'") { _ in
            phone.process.lines.filter { $0.contains("404 Not Found") }.count >= 2
        }
    }

    /// A SIP peer calls in from an address that is not the trunk's (docs/sip.md, "SIP
    /// peers"): parleyd challenges its INVITE (401), baresip answers with the account of
    /// `--sip-peers-file`, and the call rings bob as a call from the trunk would; tones
    /// cross both ways. The same phone with a wrong password gets 403 and rings nobody.
    @Test func aSIPPeerWithItsDigestCredentialsCallsInFromAnywhere() throws {
        let scratch = try Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let peers = scratch.appendingPathComponent("peers").path
        try "# the office PBX\npbx1:s3cret-pbx\n".write(toFile: peers, atomically: true, encoding: .utf8)
        let recording = scratch.appendingPathComponent("bob-hears.wav").path
        let phone = try BaresipPeer(user: "+4615550101", tone: 1000, credentials: ("pbx1", "s3cret-pbx"))
        let stranger = try BaresipPeer(user: "+4615550102", tone: 1000, credentials: ("pbx1", "guess"))
        // The trunk is elsewhere (127.0.0.2): the phones at 127.0.0.1 are strangers.
        let server = try ParleydInstance(flags: [
            "--sip-listen", "127.0.0.1:0", "--sip-trunk", "sip:127.0.0.2:5060;transport=udp", "--sip-peers-file", peers,
        ]) { key in ["--sip-number", "+46700000099=\(key):user:bob"] }
        let sipPort = try Self.sipPort(of: server)

        try stranger.command("dial", "sip:+46700000099@127.0.0.1:\(sipPort)")
        try stranger.process.waitForLine(timeout: 10, "'403 Forbidden'") { $0.contains("403 Forbidden") }
        stranger.stop()

        let bob = try SoftphoneProcess.listen("listen bob", on: server, as: "bob",
                                              ["--answer", "--tone", "440", "--record", recording, "--duration", "4"])
        try phone.command("dial", "sip:+46700000099@127.0.0.1:\(sipPort)")
        let incoming = try bob.waitForEvent("incoming", timeout: 20)
        #expect(incoming["from"] as? String == "+4615550101", "\(incoming)")
        let callID = try #require(incoming["callId"] as? String)
        try bob.waitForEvent("established", timeout: 20)
        try phone.waitForCall(timeout: 10)
        #expect(try bob.waitForExit(timeout: 30) == 0, "\(bob.report)")
        try phone.waitForCallEnd(timeout: 10)
        let phoneHeard = try phone.receivedRecording().path
        phone.stop()

        try Self.expectTone(1000, in: recording, minimumRatio: 0.75)
        try Self.expectTone(440, in: phoneHeard, minimumRatio: 0.75)
        let record = try server.request("GET", "/v1/calls/\(callID)")
        #expect(record.body?["direction"] as? String == "phoneToApp", "\(record)")
        #expect(server.process?.report.contains("sip.inbound.peer") == true, "the log names the peer")
    }
}
