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
}
